/** The audit log of an open SQLite journal, read for a check of its chain (audit:verify, the simulator). */
import type Database from "better-sqlite3";
import type { AuditRow } from "./audit-chain.js";

/** Entries read per query: memory stays bounded on a long log. */
const PAGE = 1_000;

/**
 * Every audit entry in seq order, a page at a time. Not through iterate(): a statement iterator is a native
 * object that sqlite-keep-alive cannot keep, and Node 24 aborts when one is collected outside a JS context.
 */
export function* sqliteAuditRows(db: Database.Database): Generator<AuditRow> {
  const page = db.prepare("SELECT * FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?");
  for (let after = 0; ; ) {
    const rows = page.all(after, PAGE) as AuditRow[];
    yield* rows;
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1].seq;
  }
}
