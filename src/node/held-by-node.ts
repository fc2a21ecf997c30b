/**
 * Whether the node holds a transaction it has just refused in words. Some nodes answer a transaction they
 * already hold with a refusal: ganache says "transaction underpriced" to the very bytes in its pool, and a
 * gateway that retried a broadcast on another backend may pass on that backend's refusal. Words that prove
 * "not taken" are checked against the node's own record of the hash before a client is told nothing was
 * sent.
 */
import { type JsonRpcProvider, keccak256 } from "ethers";

/** True when the node returns the transaction, false when it answers that it has none; undefined when it does not answer. */
export async function heldByNode(provider: Pick<JsonRpcProvider, "send">, rawTransaction: string): Promise<boolean | undefined> {
  try {
    return (await provider.send("eth_getTransactionByHash", [keccak256(rawTransaction)])) != null;
  } catch {
    return undefined;
  }
}
