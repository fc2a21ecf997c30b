/** The audit log in the PostgreSQL journal, read a page at a time. */
import type pg from "pg";
import type { AuditCursor, JournalElsewhere } from "../journal-records.js";
import type { AuditRow } from "./audit-chain.js";

/** The audit log's read of JournalElsewhere, on `pool`. */
export function postgresAuditReads(pool: pg.Pool): Pick<JournalElsewhere, "auditEntries"> {
  return {
    /** A page of the audit log, after an entry oldest first or before one newest first: along its primary key. */
    async auditEntries(cursor: AuditCursor, limit: number): Promise<AuditRow[]> {
      const page = "after" in cursor
        ? { sql: "SELECT * FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2", seq: cursor.after }
        : { sql: "SELECT * FROM audit_log WHERE seq < $1 ORDER BY seq DESC LIMIT $2", seq: cursor.before };
      return (await pool.query<AuditRow>(page.sql, [page.seq, limit])).rows;
    },
  };
}
