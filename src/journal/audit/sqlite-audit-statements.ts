/** The SQLite journal's statements: the audit log: entries written, sealed into the hash chain, read, and shipped. */
import type Database from "better-sqlite3";

export function auditStatements(db: Database.Database) {
  return {
    unsealedAudit: db.prepare("SELECT * FROM audit_log INDEXED BY audit_log_unsealed WHERE hash IS NULL ORDER BY seq"),
    lastAuditHash: db.prepare("SELECT hash FROM audit_log WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1").pluck(),
    lastSealedAudit: db.prepare("SELECT * FROM audit_log WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1"),
    firstKeyedAudit: db.prepare("SELECT seq FROM audit_log INDEXED BY audit_log_keyed WHERE kind = 'journal.audit_keyed' ORDER BY seq LIMIT 1").pluck(),
    ownerKeyedFrom: db.prepare("SELECT audit_keyed_from FROM journal_owner WHERE id = 1").pluck(),
    markKeyedFrom: db.prepare("UPDATE journal_owner SET audit_keyed_from = ? WHERE id = 1 AND audit_keyed_from IS NULL"),
    sealAudit: db.prepare("UPDATE audit_log SET prev_hash = @previous, hash = @hash WHERE seq = @seq"),
    forgetShippedAudit: db.prepare("DELETE FROM audit_log WHERE hash IS NOT NULL AND seq < (SELECT MAX(seq) FROM audit_log WHERE hash IS NOT NULL)"),
    insertAudit: db.prepare("INSERT INTO audit_log (at, kind, transfer_id, actor, detail) VALUES (@at, @kind, @transferId, @actor, @detail)"),
    // Sealed entries only: an entry is sealed in the commit that makes it, so these are the committed ones
    // (the open transaction's, which this connection sees, may yet be undone).
    auditAfter: db.prepare("SELECT * FROM audit_log WHERE seq > @after AND hash IS NOT NULL ORDER BY seq LIMIT @limit"),
    auditBefore: db.prepare("SELECT * FROM audit_log WHERE seq < @before AND hash IS NOT NULL ORDER BY seq DESC LIMIT @limit"),
    forgetAuditThrough: db.prepare("DELETE FROM audit_log WHERE seq <= ?"),
    lastAuditSeq: db.prepare("SELECT seq FROM audit_log ORDER BY seq DESC LIMIT 1").pluck(),
    lastSealedAuditSeq: db.prepare("SELECT seq FROM audit_log WHERE hash IS NOT NULL ORDER BY seq DESC LIMIT 1").pluck(),
  };
}
