/**
 * Forgets idempotency keys past their lifetime, one bounded batch a journal call, each batch committed (and,
 * with a shared database, shipped) before the next: a backlog (after a long stop, or more keyed transfers
 * between two rounds than one batch) is gone within a round or a few, no statement holds the event loop
 * long, and no shipment grows with the backlog.
 */
import { steadyWallClockNow } from "../clock.js";
import type { TransferJournal } from "../journal/transfer-journal.js";

/** Batches a round at most: a backlog larger than that goes on in the next round. */
export const KEY_EXPIRY_BATCHES_PER_ROUND = 50;

/** How many keys were forgotten; rejects when the journal fails (nothing more is written then). */
export async function expireKeyBacklog(journal: Pick<TransferJournal, "expireKeys" | "flushed">, keyTtlMs: number, now: () => number = steadyWallClockNow): Promise<number> {
  let forgotten = 0;
  for (let batch = 0; batch < KEY_EXPIRY_BATCHES_PER_ROUND; batch++) {
    const expired = journal.expireKeys(keyTtlMs, now());
    forgotten += expired;
    await journal.flushed();
    if (expired === 0) break;
  }
  return forgotten;
}
