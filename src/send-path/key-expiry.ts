/**
 * Forgets idempotency keys past their lifetime, one bounded batch a journal call, the batches a turn apart:
 * a backlog (after a long stop, or more keyed transfers between two rounds than one batch) is gone within a
 * round, and no statement holds the event loop long.
 */
import { steadyWallClockNow } from "../clock.js";
import type { TransferJournal } from "../journal/transfer-journal.js";

/** Batches a round at most: a backlog larger than that goes on in the next round. */
const BATCHES_PER_ROUND = 50;

/** How many keys were forgotten. */
export async function expireKeyBacklog(journal: Pick<TransferJournal, "expireKeys">, keyTtlMs: number, now: () => number = steadyWallClockNow): Promise<number> {
  let forgotten = 0;
  for (let batch = 0; batch < BATCHES_PER_ROUND; batch++) {
    const expired = journal.expireKeys(keyTtlMs, now());
    forgotten += expired;
    if (expired === 0) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return forgotten;
}
