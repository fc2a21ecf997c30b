/**
 * Reads of the journal in PostgreSQL on demand, on a pool of their own (never the leader's session, which
 * ships commits): a follower's lookups, and what a leader's working copy does not hold (the transfers
 * settled for good before it took over): the history, hashes, deliveries.
 */
import type pg from "pg";
import { type Driver, idBoundsOf, mergeWalks, pageOfKeyed, planWalks, walkOf } from "./history/history-walks.js";
import { BY_IDS } from "./postgres-by-ids.js";
import { type AttemptRow, type DeliveryRow, type EntryRow, toAttempt, toDelivery, toEntry } from "./journal-rows.js";
import type { AuditRow } from "./audit/audit-chain.js";
import type { AuditCursor, HistoryFilter, HistoryPage, JournalEntry, WebhookDelivery } from "./transfer-journal.js";

export class PostgresJournalReader {
  constructor(private readonly pool: pg.Pool) {}

  /** The transfer that has `hash` among two or more attempts (a re-priced or cancelled one). */
  async findWithSeveralAttempts(hash: string): Promise<JournalEntry | undefined> {
    const entry = await this.findByHash(hash);
    return entry && entry.attempts.length > 1 ? entry : undefined;
  }

  /** The transfer one of whose attempts has `hash`. */
  async findByHash(hash: string): Promise<JournalEntry | undefined> {
    const entry = (await this.pool.query<EntryRow>("SELECT t.* FROM attempts a JOIN transfers t ON t.id = a.transfer_id WHERE a.hash = $1", [hash.toLowerCase()])).rows[0];
    return entry && (await this.#withAttempts([entry]))[0];
  }

  /** See TransferJournal.payoutItemsHeld: one lookup in the key's index. */
  async payoutItemsHeld(apiKeyId: string, itemIds: readonly string[]): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ item_id: string; transfer_id: number }>("SELECT item_id, transfer_id FROM payout_items WHERE api_key = $1 AND item_id = ANY($2::text[])", [apiKeyId, itemIds]);
    return new Map(rows.map((row) => [row.item_id, row.transfer_id]));
  }

  /** See JournalElsewhere.noncesHeld: along transfers_lane_nonce. */
  async noncesHeld(lane: string, chainId: string, nonces: readonly number[]): Promise<Set<number>> {
    const { rows } = await this.pool.query<{ nonce: string }>("SELECT DISTINCT nonce FROM transfers WHERE lane = $1 AND chain_id = $2 AND nonce = ANY($3::bigint[]) AND state NOT IN ('claimed', 'refused', 'rejected')", [lane, chainId, nonces]);
    return new Set(rows.map((row) => Number(row.nonce)));
  }

  /** See JournalElsewhere.highestNonce: the last entry of transfers_lane_nonce for the lane. */
  async highestNonce(lane: string, chainId: string): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ nonce: string | null }>("SELECT MAX(nonce) AS nonce FROM transfers WHERE lane = $1 AND chain_id = $2 AND nonce IS NOT NULL AND state NOT IN ('claimed', 'refused', 'rejected')", [lane, chainId]);
    return rows[0]?.nonce == null ? undefined : Number(rows[0].nonce);
  }

  /** A page of the audit log, after an entry oldest first or before one newest first: along its primary key. */
  async auditEntries(cursor: AuditCursor, limit: number): Promise<AuditRow[]> {
    const page = "after" in cursor
      ? { sql: "SELECT * FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2", seq: cursor.after }
      : { sql: "SELECT * FROM audit_log WHERE seq < $1 ORDER BY seq DESC LIMIT $2", seq: cursor.before };
    return (await this.pool.query<AuditRow>(page.sql, [page.seq, limit])).rows;
  }

  /** The deliveries of one transfer's events, newest first. */
  async deliveriesOf(entryId: number, limit: number): Promise<WebhookDelivery[]> {
    // A transfer has a few events, each with a delivery per endpoint: sorted here, not walked in key order.
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT d.*, e.id AS event_id, e.type, e.transfer_id FROM webhook_events e JOIN webhook_deliveries d ON d.event_seq = e.seq WHERE e.transfer_id = $1`,
      [entryId],
    );
    return rows
      .sort((a, b) => b.id - a.id)
      .slice(0, limit)
      .map(toDelivery);
  }

  /** Delivered deliveries, oldest first; without a state, every delivery, newest first (both along the primary key). */
  async deliveries(state: "delivered" | undefined, limit: number): Promise<WebhookDelivery[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT d.*, e.id AS event_id, e.type, e.transfer_id FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
       ${state === undefined ? "ORDER BY d.id DESC" : "WHERE d.state = 'delivered' ORDER BY d.id"} LIMIT $1`,
      [limit],
    );
    return rows.map(toDelivery);
  }

  /**
   * A page of the history, as the SQLite journal reads it (history-walks.ts): each state's walk is one
   * branch of one statement, each along its index, so the page costs one round trip whatever the filter.
   */
  async history(filter: HistoryFilter, beforeId: number | undefined, limit: number): Promise<HistoryPage> {
    const bounds = idBoundsOf(filter, beforeId, { since: await this.#firstIdAtOrAfter(filter.since), until: await this.#firstIdAtOrAfter(filter.until) });
    if (!bounds || filter.states?.length === 0) return { entries: [], nextBefore: undefined };
    if (filter.idempotencyKeys || filter.payoutItem) {
      const keyed = filter.idempotencyKeys
        ? await this.pool.query<EntryRow>("SELECT * FROM transfers WHERE idempotency_key = ANY($1)", [filter.idempotencyKeys])
        : await this.pool.query<EntryRow>("SELECT t.* FROM payout_items p JOIN transfers t ON t.id = p.transfer_id WHERE p.api_key = ANY($1) AND p.item_id = $2", [
            filter.payoutItem?.apiKeyIds,
            filter.payoutItem?.itemId,
          ]);
      const { rows, nextBefore } = pageOfKeyed(keyed.rows.sort((a, b) => b.id - a.id), filter, bounds, limit);
      return { entries: await this.#withAttempts(rows), nextBefore };
    }
    const plan = planWalks(filter, limit);
    const values: unknown[] = [bounds.below, bounds.low, plan.scan];
    const parameter = (value: unknown) => `$${values.push(value)}`;
    const driven = plan.driver ? `${plan.driver.column} = ${parameter(plan.values[plan.driver.field])} AND ` : "";
    const hit = plan.checked.length === 0 ? "1" : `(${plan.checked.map((filter: Driver) => `${filter.column} = ${parameter(plan.values[filter.field])}`).join(" AND ")})::int`;
    const walks = plan.states.map(
      (state, branch) =>
        `(SELECT ${branch} AS walk, id, ${hit} AS hit FROM transfers WHERE ${driven}state = ${parameter(state)} AND id < $1 AND id >= $2 ORDER BY id DESC LIMIT $3)`,
    );
    const { rows } = await this.pool.query<{ walk: number; id: number; hit: number }>(walks.join(" UNION ALL "), values);
    const byWalk = plan.states.map(() => [] as [number, number][]);
    for (const row of rows) byWalk[row.walk].push([row.id, row.hit]);
    const page = mergeWalks(
      byWalk.map((walk) => walkOf(walk.sort((a, b) => b[0] - a[0]), plan.scan)),
      limit,
    );
    if (page.ids.length === 0) return { entries: [], nextBefore: page.nextBefore };
    const entries = await this.pool.query<EntryRow>(`SELECT t.* FROM ${BY_IDS} JOIN transfers t ON t.id = held.id`, [page.ids]);
    return { entries: await this.#withAttempts(entries.rows.sort((a, b) => b.id - a.id)), nextBefore: page.nextBefore };
  }

  async #firstIdAtOrAfter(time: number | undefined): Promise<number | undefined> {
    if (time === undefined) return undefined;
    return (await this.pool.query<{ id: number }>("SELECT id FROM transfers WHERE created_at >= $1 ORDER BY created_at, id LIMIT 1", [time])).rows[0]?.id;
  }

  // Sorted here, not by the query: ORDER BY id let the planner walk the whole primary key of a table not
  // analyzed yet (300 ms at a million attempts) instead of looking each transfer's attempts up.
  async #withAttempts(rows: readonly EntryRow[]): Promise<JournalEntry[]> {
    const attempts = await this.pool.query<AttemptRow & { id: number }>(`SELECT a.* FROM ${BY_IDS} JOIN attempts a ON a.transfer_id = held.id`, [rows.map((row) => row.id)]);
    const byEntry = new Map<number, AttemptRow[]>(rows.map((row) => [row.id, []]));
    for (const attempt of attempts.rows.sort((a, b) => a.id - b.id)) byEntry.get(attempt.transfer_id)?.push(attempt);
    return rows.map((row) => toEntry(row, (byEntry.get(row.id) as AttemptRow[]).map(toAttempt)));
  }
}
