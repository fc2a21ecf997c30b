/**
 * Retention in the shared database (several replicas): the leader's working copy hands its archived
 * transfers to transfers_archive, and what the copy never held (settled for good before it took over) is
 * archived there directly, as are the audit log's old entries, into audit_archive. Every statement runs on
 * the leader's session, in turn with the shipments of its commits.
 */
import type pg from "pg";
import { AUDIT_ARCHIVE_BATCH, type AuditRow } from "../audit/audit-chain.js";
import type { ArchivedTransfer } from "../journal-records.js";
import type { DatabaseRetention } from "./retention-records.js";
import { SETTLED_FOR_GOOD } from "../journal-rows.js";

/**
 * Transfers archived per statement by retention (archiveSettled): the statement runs on the session that
 * also ships the working copy's commits, which wait behind it (at most 98 ms measured at a million transfers).
 */
const ARCHIVE_BATCH = 200;

/**
 * One statement on the leader's session, after the statements before it; its values are taken when it runs
 * (a time among them is the time it ran, not the time it was queued).
 */
export type SessionQuery = <R extends pg.QueryResultRow>(text: string, values: () => unknown[]) => Promise<pg.QueryResult<R>>;

export class PostgresRetention implements DatabaseRetention {
  constructor(private readonly query: SessionQuery) {}

  async archive(records: readonly ArchivedTransfer[]): Promise<void> {
    // Archived when the working copy's retention asked, as before the move here.
    const now = Date.now();
    await this.query(
      "INSERT INTO transfers_archive (id, archived_at, record) SELECT id, $2, record FROM unnest($1::bigint[], $3::jsonb[]) AS archived (id, record) ON CONFLICT (id) DO NOTHING",
      () => [records.map((record) => record.transfer.id), now, records.map((record) => JSON.stringify(record))],
    );
  }

  async archiveSettled(before: number, held: (ids: readonly number[]) => ReadonlySet<number>): Promise<number> {
    let archived = 0;
    // Keyset over (created_at, id): the transfers the working copy holds are skipped, not looked at again.
    let after = { createdAt: -1, id: 0 };
    for (;;) {
      const candidates = (
        await this.query<{ id: number; created_at: number }>(
          `SELECT t.id, t.created_at FROM transfers t WHERE t.created_at < $1 AND (t.created_at, t.id) > ($2, $3) AND ${SETTLED_FOR_GOOD}
           ORDER BY t.created_at, t.id LIMIT ${ARCHIVE_BATCH}`,
          () => [before, after.createdAt, after.id],
        )
      ).rows;
      if (candidates.length === 0) return archived;
      const last = candidates[candidates.length - 1];
      after = { createdAt: last.created_at, id: last.id };
      const inCopy = held(candidates.map((candidate) => candidate.id));
      const ids = candidates.map((candidate) => candidate.id).filter((id) => !inCopy.has(id));
      if (ids.length > 0) archived += await this.#moveToArchive(ids);
      // Other work runs between batches: the session also ships the working copy's commits.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // One statement: the archive's records built from the rows, and the rows deleted, all from one snapshot.
  // The rule is checked again. An id the archive has already (the working copy's retention archived it, and
  // the copy forgot it before deleting it) gets its record anew from the rows, which are then deleted too.
  async #moveToArchive(ids: readonly number[]): Promise<number> {
    const { rows } = await this.query<{ moved: number }>(
      `WITH moving AS (SELECT t.id FROM transfers t WHERE t.id = ANY($1) AND ${SETTLED_FOR_GOOD}),
       archived AS (
         INSERT INTO transfers_archive (id, archived_at, record)
         SELECT t.id, $2, jsonb_build_object(
           'transfer', to_jsonb(t),
           'attempts', COALESCE((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.id) FROM attempts a WHERE a.transfer_id = t.id), '[]'::jsonb),
           'webhookEvents', COALESCE((SELECT jsonb_agg(to_jsonb(e) ORDER BY e.seq) FROM webhook_events e WHERE e.transfer_id = t.id), '[]'::jsonb),
           'webhookDeliveries', COALESCE((SELECT jsonb_agg(to_jsonb(d) ORDER BY d.id) FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq WHERE e.transfer_id = t.id), '[]'::jsonb))
         FROM transfers t WHERE t.id IN (SELECT id FROM moving)
         ON CONFLICT (id) DO UPDATE SET archived_at = EXCLUDED.archived_at, record = EXCLUDED.record RETURNING id),
       deliveries AS (DELETE FROM webhook_deliveries WHERE event_seq IN (SELECT seq FROM webhook_events WHERE transfer_id IN (SELECT id FROM archived))),
       events AS (DELETE FROM webhook_events WHERE transfer_id IN (SELECT id FROM archived)),
       attempts AS (DELETE FROM attempts WHERE transfer_id IN (SELECT id FROM archived)),
       transfers AS (DELETE FROM transfers WHERE id IN (SELECT id FROM archived) RETURNING id)
       SELECT COUNT(*)::int AS moved FROM transfers`,
      () => [ids, Date.now()],
    );
    return rows[0].moved;
  }

  async archiveAudit(before: number): Promise<{ count: number; last: AuditRow } | undefined> {
    let moved: { count: number; last: AuditRow } | undefined;
    for (;;) {
      // One more than a batch: the last row read is never moved (the log's last entry, or beyond the batch).
      const { rows } = await this.query<AuditRow>("SELECT * FROM audit_log ORDER BY seq LIMIT $1", () => [AUDIT_ARCHIVE_BATCH + 1]);
      let end = 0;
      while (end < rows.length - 1 && rows[end].at < before && rows[end].hash !== null) end++;
      if (end === 0) return moved;
      const last = rows[end - 1];
      // One statement: the entries leave the log and enter the archive together, or neither (an entry the
      // archive had already would fail it, as nothing can make one: no entry is ever deleted unarchived).
      await this.query(
        `WITH moved AS (DELETE FROM audit_log WHERE seq <= $1 RETURNING *)
         INSERT INTO audit_archive (seq, at, kind, transfer_id, actor, detail, prev_hash, hash)
         SELECT seq, at, kind, transfer_id, actor, detail, prev_hash, hash FROM moved`,
        () => [last.seq],
      );
      moved = { count: (moved?.count ?? 0) + end, last };
      if (end < AUDIT_ARCHIVE_BATCH) return moved;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
