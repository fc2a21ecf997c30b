/** The transfer history and the per-key spending in the SQLite journal (a working copy reads the shared database's history). */
import type { HistoryFilter, HistoryPage, JournalState } from "../journal-records.js";
import { toEntry } from "../journal-rows.js";
import type { HistoryReads } from "./history-reads.js";
import type { SqliteJournalView, ViewClass } from "../sqlite-journal-view.js";

/** Adds the history reads to a view of the SQLite journal (see the interface for what each method does). */
export function withSqliteHistoryReads<Base extends ViewClass<SqliteJournalView>>(base: Base) {
  return class SqliteHistoryReads extends base implements HistoryReads {
    async history(filter: HistoryFilter, beforeId: number | undefined, limit: number): Promise<HistoryPage> {
      const { elsewhere } = this.store;
      if (elsewhere) {
        // What this copy committed is read there once shipped (a failed shipment: what the database holds).
        await this.flushed().catch(() => undefined);
        return elsewhere.history(filter, beforeId, limit);
      }
      const { rows, nextBefore } = this.store.history.read(filter, beforeId, limit);
      const attempts = this.store.attemptsOfEach(rows.map((row) => row.id));
      return { entries: rows.map((row) => toEntry(row, attempts.get(row.id) ?? [])), nextBefore };
    }

    spentSince(since: number): { apiKeyId: string; units: bigint; at: number }[] {
      const rows = this.store.statements.spentSince.all({ since, ...this.network }) as { api_key_id: string; units: string; at: number }[];
      return rows.map((row) => ({ apiKeyId: row.api_key_id, units: BigInt(row.units), at: row.at }));
    }

    madeSince(since: number, afterId: number | undefined, limit: number): { id: number; createdAt: number; state: JournalState }[] {
      const { statements } = this.store;
      // Times rise with ids (HISTORY_TIMES_RISE): from the first id made since `since` on, by id.
      const from = afterId === undefined ? this.store.history.firstIdAtOrAfter(since) : afterId + 1;
      if (from === undefined) return [];
      return (statements.madeFrom.all({ from, limit }) as { id: number; created_at: number; state: JournalState }[]).map((row) => ({
        id: row.id,
        createdAt: row.created_at,
        state: row.state,
      }));
    }
  };
}
