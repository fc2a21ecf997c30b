/** Waits for a transaction to gather confirmations, within a time limit. */
import { type TransactionLookup, countConfirmations } from "./transaction-lookup.js";
import { monotonicNow } from "../clock.js";

/**
 * Resolves with the transaction's confirmations once it has `wanted` of them, or with what it has when
 * `timeoutMs` runs out (0 while pending or unknown). Polls the cached lookup every `pollMs`. It never
 * throws: the transfer is sent when this waits, so a node that fails a read meanwhile (every endpoint down
 * for a moment) must not turn its 200 into an error a client would retry; the count last read stands.
 */
export async function waitForConfirmations(lookup: TransactionLookup, hash: string, wanted: number, timeoutMs: number, pollMs: number): Promise<number> {
  const deadline = monotonicNow() + timeoutMs;
  let confirmations = 0;
  for (;;) {
    try {
      const found = await lookup.find(hash);
      confirmations = found ? countConfirmations(found.transaction, found.latestBlockNumber) : 0;
    } catch {
      // Not read this time; the next poll asks again.
    }
    if (confirmations >= wanted || monotonicNow() + pollMs > deadline) return confirmations;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
