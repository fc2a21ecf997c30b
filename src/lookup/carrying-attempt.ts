/**
 * Which attempt carries one of the service's transfers: the mined one once mined, otherwise the newest
 * one a node knows. A client polling the first hash it was given thus follows its transfer through
 * re-pricing and sees it confirm, under the hash that was mined.
 */
import type { JournalAttempt, JournalEntry } from "../journal/transfer-journal.js";
import type { FoundTransaction, TransactionLookup } from "./transaction-lookup.js";

export interface CarryingAttempt {
  attempt: JournalAttempt;
  /** The node's record of it; null when no attempt is known to the node. */
  found: FoundTransaction | null;
  mined: boolean;
}

/** Looks the entry's attempts up (all at once; one for a transfer never re-priced) and picks the carrier. */
export async function findCarryingAttempt(entry: JournalEntry, lookup: TransactionLookup): Promise<CarryingAttempt> {
  const newestFirst = [...entry.attempts].reverse();
  const known = entry.minedHash ? newestFirst.filter((attempt) => attempt.hash === entry.minedHash) : newestFirst;
  const found = await Promise.all(known.map((attempt) => lookup.find(attempt.hash)));
  const minedAt = found.findIndex((transaction) => transaction?.transaction.blockNumber != null);
  if (minedAt >= 0) return { attempt: known[minedAt], found: found[minedAt], mined: true };
  const knownAt = found.findIndex((transaction) => transaction !== null);
  if (knownAt >= 0) return { attempt: known[knownAt], found: found[knownAt], mined: false };
  return { attempt: newestFirst[0], found: null, mined: false };
}
