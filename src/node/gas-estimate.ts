/**
 * eth_estimateGas at the latest block, as the service's calls beside it are made. Left to itself, a node
 * may estimate on its pending block (anvil and Hardhat do), built again for each estimate: under load on
 * anvil that took half a bare loop's rate. The tokens and gas of the wallet's transactions in flight are
 * the service's ledger to count, not the estimate's.
 */
import type { JsonRpcProvider } from "ethers";
import { isInvalidParams } from "./node-answers.js";

// Providers whose node refused the block parameter (-32602, as some forks and L2s did): asked without it from then on.
const refusingBlockParameter = new WeakSet<JsonRpcProvider>();

/** The node's estimate (a hex quantity) for `call` at the latest block, or at its default where it refuses a block. */
export async function estimateGasAtLatest(provider: JsonRpcProvider, call: Record<string, string>): Promise<string> {
  if (refusingBlockParameter.has(provider)) return provider.send("eth_estimateGas", [call]);
  try {
    return await provider.send("eth_estimateGas", [call, "latest"]);
  } catch (error) {
    if (!isInvalidParams(error)) throw error;
    refusingBlockParameter.add(provider);
    return provider.send("eth_estimateGas", [call]);
  }
}
