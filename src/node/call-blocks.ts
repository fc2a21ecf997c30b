/**
 * What a JSON-RPC call says about blocks: the block number it reads at (an endpoint that has not reached
 * that block answers null or "header not found", so the call goes to one that has), and the head its answer
 * shows (eth_blockNumber, the `latest` block), which is how the endpoints' heads are compared.
 */

/** Where each method that reads at a block takes the block. */
const BLOCK_PARAM_INDEX: Record<string, number> = {
  eth_getBlockByNumber: 0,
  eth_getBlockReceipts: 0,
  eth_getTransactionCount: 1,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_call: 1,
  eth_estimateGas: 1,
  eth_feeHistory: 1,
  eth_getStorageAt: 2,
};


/** The block number a call reads at, when it names one by number (not by tag or hash). */
export function blockNumberReadAt(method: string, params: readonly unknown[]): number | undefined {
  if (method === "eth_getLogs") {
    const filter = params[0] as { toBlock?: unknown } | undefined;
    return quantity(filter?.toBlock);
  }
  const index = BLOCK_PARAM_INDEX[method];
  return index === undefined ? undefined : quantity(params[index]);
}

/** True for a call whose answer is the endpoint's head: eth_blockNumber, or the `latest` block. */
export function readsHead(method: string, params: readonly unknown[]): boolean {
  return method === "eth_blockNumber" || (method === "eth_getBlockByNumber" && params[0] === "latest");
}

/** The head in the answer of a call that `readsHead`; undefined when the answer holds none. */
export function headIn(method: string, result: unknown): number | undefined {
  if (method === "eth_blockNumber") return quantity(result);
  return quantity((result as { number?: unknown } | null)?.number);
}

/** A JSON-RPC quantity (0x and hex digits) as a number; undefined for anything else. */
export function hexQuantity(value: unknown): bigint | undefined {
  return typeof value === "string" && /^0x[0-9a-fA-F]{1,64}$/.test(value) ? BigInt(value) : undefined;
}

function quantity(value: unknown): number | undefined {
  const parsed = hexQuantity(value);
  return parsed === undefined ? undefined : Number(parsed);
}
