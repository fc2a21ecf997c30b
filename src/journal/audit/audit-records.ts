/** The journal's records of the audit log: every operator action and state change, sealed into a hash chain in the commit that makes it durable. */
import type { AuditCursor } from "../journal-records.js";
import type { AuditEntry, AuditRow } from "./audit-chain.js";

export interface AuditRecords {
  /**
   * Appends an entry to the audit log (an operator's action, the settings a process started with), in this
   * turn's commit. Transfers' state changes and attempts are entered by the journal itself, in their commit.
   */
  recordAudit(entry: AuditEntry): void;
  /** A page of the audit log from `cursor`, at most `limit` (a working copy reads the shared database's). */
  auditEntries(cursor: AuditCursor, limit: number): Promise<AuditRow[]>;
  /** The audit log's last sealed entry (its head; a working copy holds it), undefined while the log is empty. */
  auditHead(): AuditRow | undefined;
}
