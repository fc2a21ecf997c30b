/** The journal's reads of what was made and spent: the transfer history, the per-key cap's spend, the activity charts. */
import type { HistoryFilter, HistoryPage, JournalState } from "../journal-records.js";

export interface HistoryReads {
  /**
   * Every lane's entries matching `filter`, newest first (highest id first), below `beforeId` when given,
   * at most `limit`, each with its attempts: the transfer history, read in pages of ids, each in bounded time.
   * A leader's working copy reads it from the shared database, once its own commits are shipped there.
   */
  history(filter: HistoryFilter, beforeId: number | undefined, limit: number): Promise<HistoryPage>;
  /** What each API key had signed since `since` (ms) on this network in this token, for the per-key caps after a restart. */
  spentSince(since: number): { apiKeyId: string; units: bigint; at: number }[];
  /**
   * Clients' transfers made since `since` (ms), oldest first, at most `limit`, each with its time and state:
   * read in slices (`afterId`: the last id of the slice before) for the activity charts. A leader's working
   * copy holds every transfer of the last 24 h.
   */
  madeSince(since: number, afterId: number | undefined, limit: number): { id: number; createdAt: number; state: JournalState }[];
}
