/** Waits for a transaction to gather confirmations, within a time limit. */
import { type TransactionLookup, countConfirmations } from "./transaction-lookup.js";
import { monotonicNow } from "../clock.js";

/**
 * Resolves with the transaction's confirmations once it has `wanted` of them, or with what it has when
 * `timeoutMs` runs out (0 while pending or unknown). Polls the cached lookup every `pollMs`.
 */
export async function waitForConfirmations(lookup: TransactionLookup, hash: string, wanted: number, timeoutMs: number, pollMs: number): Promise<number> {
  const deadline = monotonicNow() + timeoutMs;
  for (;;) {
    const found = await lookup.find(hash);
    const confirmations = found ? countConfirmations(found.transaction, found.latestBlockNumber) : 0;
    if (confirmations >= wanted || monotonicNow() + pollMs > deadline) return confirmations;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
