/** Waits for a transaction to gather confirmations, within a time limit. */
import type { TransactionLookup } from "./transaction-lookup.js";

/**
 * Resolves with the transaction's confirmations once it has `wanted` of them, or with what it has when
 * `timeoutMs` runs out (0 while pending or unknown). Polls the cached lookup every `pollMs`.
 */
export async function waitForConfirmations(lookup: TransactionLookup, hash: string, wanted: number, timeoutMs: number, pollMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await lookup.find(hash);
    const blockNumber = found?.transaction.blockNumber;
    const confirmations = found && blockNumber != null ? Math.max(1, found.latestBlockNumber - Number(blockNumber) + 1) : 0;
    if (confirmations >= wanted || Date.now() + pollMs > deadline) return confirmations;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
