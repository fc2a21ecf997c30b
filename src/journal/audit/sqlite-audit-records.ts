/** The audit log in the SQLite journal: entries written in the commit of what they record, sealed by the store before it commits. */
import { steadyWallClockNow } from "../../clock.js";
import type { AuditCursor } from "../journal-records.js";
import type { AuditEntry, AuditRow } from "./audit-chain.js";
import type { AuditRecords } from "./audit-records.js";
import type { SqliteJournalView, ViewClass } from "../sqlite-journal-view.js";

/** Adds the audit records to a view of the SQLite journal (see the interface for what each method does). */
export function withSqliteAuditRecords<Base extends ViewClass<SqliteJournalView>>(base: Base) {
  return class SqliteAuditRecords extends base implements AuditRecords {
    recordAudit(entry: AuditEntry): void {
      const { kind, actor, transferId = null, detail } = entry;
      this.store.write(() => this.store.statements.insertAudit.run({ at: steadyWallClockNow(), kind, transferId, actor, detail: JSON.stringify(detail) }));
    }

    auditHead(): AuditRow | undefined {
      return this.store.statements.lastSealedAudit.get() as AuditRow | undefined;
    }

    async auditEntries(cursor: AuditCursor, limit: number): Promise<AuditRow[]> {
      const { elsewhere, statements } = this.store;
      if (!elsewhere) return ("after" in cursor ? statements.auditAfter.all({ ...cursor, limit }) : statements.auditBefore.all({ ...cursor, limit })) as AuditRow[];
      // The shared database holds the whole log once this copy's commits are shipped there.
      await this.flushed();
      return elsewhere.auditEntries(cursor, limit);
    }
  };
}
