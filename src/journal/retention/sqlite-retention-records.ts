/** Retention in the SQLite journal: what may be archived, forgetting it once archived, and expiring keys in bounded batches. */
import { steadyWallClockNow } from "../../clock.js";
import type { AuditRecords } from "../audit/audit-records.js";
import type { AuditRow } from "../audit/audit-chain.js";
import { type EntryRow, groupBy } from "../journal-rows.js";
import type { ArchivedTransfer } from "../journal-records.js";
import type { RetentionRecords } from "./retention-records.js";
import type { SqliteJournalView, ViewClass } from "../sqlite-journal-view.js";
/** The most keys one expireKeys call forgets: a backlog goes in later calls, each a short commit. */
export const KEYS_EXPIRED_PER_CALL = 2_000;

/** Adds the retention records to a view of the SQLite journal (see the interface for what each method does). */
export function withSqliteRetentionRecords<Base extends ViewClass<SqliteJournalView & Pick<AuditRecords, "recordAudit">>>(base: Base) {
  return class SqliteRetentionRecords extends base implements RetentionRecords {
    releaseRefusedKey(entryId: number): boolean {
      const released = this.store.write(() => this.store.statements.releaseRefusedKey.run({ id: entryId, now: steadyWallClockNow() })).changes === 1;
      // In the same commit; the key itself stays out of the log (keys expire, the log does not).
      if (released) this.recordAudit({ kind: "transfer.key-released", actor: null, transferId: entryId, detail: {} });
      return released;
    }

    archivable(before: number, limit: number): ArchivedTransfer[] {
      const { statements } = this.store;
      const transfers = statements.archivable.all({ before, limit }) as (EntryRow & { id: number })[];
      const ids = JSON.stringify(transfers.map((row) => row.id));
      type Row = Record<string, unknown>;
      const ofTransfer = (row: Row) => row.transfer_id as number;
      const attempts = groupBy(statements.attemptsOfEach.all(ids) as Row[], ofTransfer, (row) => row);
      const events = statements.eventsOfEach.all(ids) as Row[];
      const eventsByTransfer = groupBy(events, ofTransfer, (row) => row);
      const transferOfEvent = new Map(events.map((event) => [event.seq as number, event.transfer_id as number]));
      const deliveries = groupBy(statements.deliveriesOfEach.all(ids) as Row[], (row) => transferOfEvent.get(row.event_seq as number) as number, (row) => row);
      return transfers.map((transfer) => ({
        transfer: { ...transfer },
        attempts: attempts.get(transfer.id) ?? [],
        webhookEvents: eventsByTransfer.get(transfer.id) ?? [],
        webhookDeliveries: deliveries.get(transfer.id) ?? [],
      }));
    }

    get databaseArchive(): ((records: readonly ArchivedTransfer[]) => Promise<void>) | undefined {
      const { replica } = this.store;
      return replica && ((records) => replica.retention.archive(records));
    }

    async archiveSettledElsewhere(before: number): Promise<number> {
      const { replica, statements } = this.store;
      if (!replica) return 0;
      return replica.retention.archiveSettled(before, (ids) => new Set(statements.heldOf.all(JSON.stringify(ids)) as number[]));
    }

    archivableAudit(before: number, limit: number): AuditRow[] {
      const { replica, statements } = this.store;
      if (replica) return [];
      // Never the last sealed entry: the next commit seals its entries from its hash (this turn's entries,
      // entered but not yet committed, are unsealed and do not count).
      const lastSealed = statements.lastSealedAuditSeq.get() as number | undefined;
      if (lastSealed === undefined) return [];
      const archivable: AuditRow[] = [];
      for (const row of statements.auditAfter.all({ after: 0, limit }) as AuditRow[]) {
        if (row.seq >= lastSealed || row.at >= before || row.hash === null) break;
        archivable.push(row);
      }
      return archivable;
    }

    forgetArchivedAudit(throughSeq: number): void {
      this.store.write(() => this.store.statements.forgetAuditThrough.run(throughSeq));
    }

    async archiveAuditElsewhere(before: number): Promise<{ count: number; last: AuditRow } | undefined> {
      return this.store.replica?.retention.archiveAudit(before);
    }

    forgetArchived(entryIds: readonly number[]): void {
      // A payout batch's item ids stay (payout_items): an archived batch still holds them.
      this.store.write(() => this.store.forget(JSON.stringify(entryIds)));
    }

    forgetSettledForGood(before: number, limit: number): { examined: number; forgotten: number } | undefined {
      const store = this.store;
      if (!store.elsewhere) return { examined: 0, forgotten: 0 };
      return store.write(() =>
        store.unshipped(() => {
          const { createdAt, id } = store.evictionCursor;
          const rows = store.statements.coldFrom.all({ before, limit, afterCreated: createdAt, afterId: id }) as { id: number; created_at: number; cold: number }[];
          const cold = rows.filter((row) => row.cold === 1).map((row) => row.id);
          if (cold.length > 0) store.forget(JSON.stringify(cold));
          // The audit log is the shared database's once shipped: the copy keeps its last entry to chain on from.
          store.statements.forgetShippedAudit.run();
          const last = rows.at(-1);
          // Walked to the end: the next walk starts from the oldest again (what was held may be cold by then).
          store.evictionCursor = last && rows.length === limit ? { createdAt: last.created_at, id: last.id } : { createdAt: -1, id: -1 };
          return { examined: rows.length, forgotten: cold.length };
        }),
      );
    }

    expireKeys(maxAgeMs: number, now = steadyWallClockNow()): number {
      return this.store.write(() => this.store.statements.expireKeys.run({ cutoff: now - maxAgeMs, limit: KEYS_EXPIRED_PER_CALL })).changes;
    }
  };
}
