/** Looks transactions up on the node, together with the chain head their confirmations are counted from. */
import type { JsonRpcProvider } from "ethers";
import { ServiceError } from "../errors.js";
import { classifyChainFailure } from "./ethers-errors.js";

/** A transaction as the node's `eth_getTransactionByHash` returns it: hex quantities, untouched. */
export type RpcTransaction = Record<string, unknown> & { blockNumber?: string | null };

/** A transaction and the latest block number read alongside it. */
export interface FoundTransaction {
  transaction: RpcTransaction;
  latestBlockNumber: number;
}

/**
 * Finds a transaction by hash; resolves null when the node does not know it. The head is read fresh for
 * every lookup so confirmations are never under-reported. Node faults become NODE_UNAVAILABLE (503).
 */
export async function findTransaction(provider: JsonRpcProvider, hash: string): Promise<FoundTransaction | null> {
  try {
    const [transaction, latestBlock] = await Promise.all([
      provider.send("eth_getTransactionByHash", [hash]) as Promise<RpcTransaction | null>,
      provider.send("eth_blockNumber", []) as Promise<string>,
    ]);
    if (transaction === null) return null;
    return { transaction, latestBlockNumber: Number(latestBlock) };
  } catch (error) {
    const failure = classifyChainFailure(error);
    if (!failure) throw error;
    throw new ServiceError("NODE_UNAVAILABLE", `${failure.message}; try again`);
  }
}
