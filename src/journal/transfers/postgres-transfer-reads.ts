/** Transfers in the PostgreSQL journal, read on demand: by hash, and the nonces a lane's transfers hold. */
import type pg from "pg";
import { type AttemptRow, type EntryRow, toAttempt, toEntry } from "../journal-rows.js";
import type { JournalElsewhere, JournalEntry } from "../journal-records.js";
import { BY_IDS } from "../postgres-by-ids.js";

/** The transfers' reads of JournalElsewhere, on `pool`. */
export function postgresTransferReads(pool: pg.Pool): Pick<JournalElsewhere, "findByHash" | "findWithSeveralAttempts" | "noncesHeld" | "highestNonce"> {
  const reads = {
    /** The transfer one of whose attempts has `hash`. */
    async findByHash(hash: string): Promise<JournalEntry | undefined> {
      const entry = (await pool.query<EntryRow>("SELECT t.* FROM attempts a JOIN transfers t ON t.id = a.transfer_id WHERE a.hash = $1", [hash.toLowerCase()])).rows[0];
      return entry && (await entriesWithAttempts(pool, [entry]))[0];
    },

    /** The transfer that has `hash` among two or more attempts (a re-priced or cancelled one). */
    async findWithSeveralAttempts(hash: string): Promise<JournalEntry | undefined> {
      const entry = await reads.findByHash(hash);
      return entry && entry.attempts.length > 1 ? entry : undefined;
    },

    /** See JournalElsewhere.noncesHeld: along transfers_lane_nonce. */
    async noncesHeld(lane: string, chainId: string, nonces: readonly number[]): Promise<Set<number>> {
      const { rows } = await pool.query<{ nonce: string }>("SELECT DISTINCT nonce FROM transfers WHERE lane = $1 AND chain_id = $2 AND nonce = ANY($3::bigint[]) AND state NOT IN ('claimed', 'refused', 'rejected')", [lane, chainId, nonces]);
      return new Set(rows.map((row) => Number(row.nonce)));
    },

    /** See JournalElsewhere.highestNonce: the last entry of transfers_lane_nonce for the lane. */
    async highestNonce(lane: string, chainId: string): Promise<number | undefined> {
      const { rows } = await pool.query<{ nonce: string | null }>("SELECT MAX(nonce) AS nonce FROM transfers WHERE lane = $1 AND chain_id = $2 AND nonce IS NOT NULL AND state NOT IN ('claimed', 'refused', 'rejected')", [lane, chainId]);
      return rows[0]?.nonce == null ? undefined : Number(rows[0].nonce);
    },
  };
  return reads;
}

/** Each transfer of `rows` with its attempts, in one read. */
export async function entriesWithAttempts(pool: pg.Pool, rows: readonly EntryRow[]): Promise<JournalEntry[]> {
    const attempts = await pool.query<AttemptRow & { id: number }>(`SELECT a.* FROM ${BY_IDS} JOIN attempts a ON a.transfer_id = held.id`, [rows.map((row) => row.id)]);
    const byEntry = new Map<number, AttemptRow[]>(rows.map((row) => [row.id, []]));
    for (const attempt of attempts.rows.sort((a, b) => a.id - b.id)) byEntry.get(attempt.transfer_id)?.push(attempt);
    return rows.map((row) => toEntry(row, (byEntry.get(row.id) as AttemptRow[]).map(toAttempt)));
  }
