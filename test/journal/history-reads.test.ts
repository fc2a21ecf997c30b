/**
 * The history's bounded reads against the plain definition: followed from cursor to cursor, every filter
 * gives exactly the rows a full scan gives, newest first, on SQLite and on PostgreSQL (as a leader's
 * working copy reads it there); a read walks a bounded number of rows; and the journal keeps times rising
 * with ids, which the time filters rely on.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresJournalReader } from "../../src/journal/postgres-journal-reader.js";
import { migrateDatabase, openPostgresJournal, postgresOptions } from "../../src/journal/postgres-journal-store.js";
import { openKeptDatabase } from "../../src/journal/sqlite-keep-alive.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { HistoryFilter, JournalState, TransferJournal } from "../../src/journal/transfer-journal.js";
import { type TestPostgres, startTestPostgres, testPool } from "../helpers/postgres.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const STATES: JournalState[] = ["claimed", "refused", "signed", "accepted", "nonce-used", "replaced", "rejected", "cancelled"];
const ROWS = 6_000;
const START = Date.parse("2026-01-01T00:00:00Z");

interface Row {
  id: number;
  recipient: string;
  api_key_id: string | null;
  lane: string;
  state: JournalState;
  created_at: number;
  idempotency_key: string | null;
}

/** A small deterministic generator (mulberry32), so that a failure replays. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let dir: string;
let journal: TransferJournal;
const rows: Row[] = [];
/** payout_items: the batch (a row) that holds each item id of an API key. */
const payoutItems: { api_key: string; item_id: string; transfer_id: number }[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "history-test-"));
  const path = join(dir, "journal.sqlite");
  openSqliteJournal(path, OWNER).close();
  const next = random(7);
  const db = openKeptDatabase(path);
  const insert = db.prepare(
    `INSERT INTO transfers (recipient, units, api_key_id, state, lane, idempotency_key, created_at, updated_at)
     VALUES (@recipient, '1', @api_key_id, @state, @lane, @idempotency_key, @created_at, @created_at)`,
  );
  db.transaction(() => {
    for (let index = 0; index < ROWS; index++) {
      // Skewed, as real histories are: one recipient and one key take most rows, rare states are rare.
      const pick = next();
      const row = {
        recipient: `0x${(pick < 0.6 ? 1 : Math.floor(next() * 40)).toString(16).padStart(40, "0")}`,
        api_key_id: next() < 0.1 ? null : next() < 0.7 ? "key_a" : `key_${Math.floor(next() * 6)}`,
        lane: `0x${Math.floor(next() * 3).toString(16).padStart(40, "0")}`,
        state: next() < 0.85 ? "nonce-used" : STATES[Math.floor(next() * STATES.length)],
        idempotency_key: next() < 0.5 ? `key_a/order-${index}` : null,
        created_at: START + index * 60_000,
      } satisfies Omit<Row, "id">;
      rows.push({ ...row, id: Number(insert.run(row).lastInsertRowid) });
    }
    // Every 97th row with an API key is a payout batch holding one item id; "refund-1" is held under several keys.
    const holdItem = db.prepare("INSERT INTO payout_items (api_key, item_id, transfer_id) VALUES (@api_key, @item_id, @transfer_id)");
    for (const row of rows.filter((candidate) => candidate.id % 97 === 0 && candidate.api_key_id !== null)) {
      const item = { api_key: row.api_key_id as string, item_id: payoutItems.some((held) => held.api_key === row.api_key_id) ? `inv-${row.id}` : "refund-1", transfer_id: row.id };
      holdItem.run(item);
      payoutItems.push(item);
    }
  })();
  // Rows made by hand are not the service's: the audit entries their triggers wrote would rightly refuse the open.
  db.exec("DELETE FROM audit_log WHERE hash IS NULL");
  db.close();
  journal = openSqliteJournal(path, OWNER);
});

afterAll(() => {
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The same rows in PostgreSQL, and a leader's journal over them: its history is read there. */
async function postgresJournal(): Promise<{ journal: TransferJournal; close(): Promise<void> }> {
  const server: TestPostgres = await startTestPostgres();
  const url = await server.createDatabase();
  const session = new pg.Client(postgresOptions(url));
  await session.connect();
  await migrateDatabase(session);
  await session.query(
    `INSERT INTO transfers (id, recipient, units, api_key_id, state, lane, idempotency_key, created_at, updated_at)
     SELECT id, recipient, '1', api_key_id, state, lane, idempotency_key, created_at, created_at
     FROM jsonb_to_recordset($1::jsonb) AS r (id bigint, recipient text, api_key_id text, state text, lane text, idempotency_key text, created_at bigint)`,
    [JSON.stringify(rows)],
  );
  await session.query(
    `INSERT INTO payout_items (id, api_key, item_id, transfer_id)
     SELECT id, api_key, item_id, transfer_id FROM jsonb_to_recordset($1::jsonb) AS r (id bigint, api_key text, item_id text, transfer_id bigint)`,
    [JSON.stringify(payoutItems.map((item, index) => ({ ...item, id: index + 1 })))],
  );
  const pool = testPool(url);
  const leader = await openPostgresJournal(session, OWNER, { reads: postgresJournalReader(pool) });
  return {
    journal: leader,
    async close() {
      leader.close();
      await pool.end();
      await session.end();
      await server.stop();
    },
  };
}

/** The rows a full scan finds, newest first. */
function scanned(filter: HistoryFilter): number[] {
  return rows
    .filter(
      (row) =>
        (filter.states === undefined || filter.states.includes(row.state)) &&
        (filter.since === undefined || row.created_at >= filter.since) &&
        (filter.until === undefined || row.created_at < filter.until) &&
        (filter.recipient === undefined || row.recipient === filter.recipient) &&
        (filter.apiKeyId === undefined || row.api_key_id === filter.apiKeyId) &&
        (filter.lane === undefined || row.lane === filter.lane) &&
        (filter.idempotencyKeys === undefined || (row.idempotency_key !== null && filter.idempotencyKeys.includes(row.idempotency_key))) &&
        (filter.payoutItem === undefined ||
          payoutItems.some((held) => held.transfer_id === row.id && held.item_id === filter.payoutItem?.itemId && filter.payoutItem.apiKeyIds.includes(held.api_key))),
    )
    .map((row) => row.id)
    .reverse();
}

/** Every page from the first to the end: the ids, and the pages' sizes. */
async function paged(journal: TransferJournal, filter: HistoryFilter, limit: number): Promise<{ ids: number[]; pages: number[] }> {
  const ids: number[] = [];
  const pages: number[] = [];
  let below: number | undefined;
  for (;;) {
    const { entries, nextBefore } = await journal.history(filter, below, limit);
    ids.push(...entries.map((entry) => entry.id));
    pages.push(entries.length);
    expect(entries.length).toBeLessThanOrEqual(limit);
    if (nextBefore === undefined) return { ids, pages };
    expect(nextBefore).toBeLessThan(below ?? Number.POSITIVE_INFINITY);
    below = nextBefore;
  }
}

const RECIPIENT = `0x${(1).toString(16).padStart(40, "0")}`;
const RARE_RECIPIENT = `0x${(17).toString(16).padStart(40, "0")}`;
const LANE = `0x${(2).toString(16).padStart(40, "0")}`;
const at = (index: number) => START + index * 60_000;

// Every case of these two suites only reads the rows above: the suites run side by side, and so do their
// cases (PostgreSQL's mostly wait on its round trips). "times rise with ids" writes, after them.
describe.concurrent.each(["SQLite", "PostgreSQL"])("history reads on %s", (database) => {
  let read: TransferJournal;
  let closeDatabase: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    if (database === "SQLite") {
      read = journal;
      return;
    }
    const opened = await postgresJournal();
    read = opened.journal;
    closeDatabase = opened.close;
  }, 60_000);
  afterAll(async () => {
    await closeDatabase?.();
  });

  const filters: [string, HistoryFilter][] = [
    ["none", {}],
    ["a rare state", { states: ["cancelled"] }],
    ["several states", { states: ["claimed", "signed", "accepted"] }],
    ["no state", { states: [] }],
    ["a state named twice", { states: ["cancelled", "claimed", "cancelled"] }],
    ["a recipient", { recipient: RECIPIENT }],
    ["an API key", { apiKeyId: "key_a" }],
    ["a lane with states", { lane: LANE, states: ["nonce-used", "replaced"] }],
    ["a time window", { since: at(1_000) + 1, until: at(2_500) }],
    ["since only", { since: at(5_900) }],
    ["until only", { until: at(100) }],
    ["a window with nothing in it", { since: at(ROWS + 10) }],
    ["a recipient and an API key", { recipient: RECIPIENT, apiKeyId: "key_3" }],
    ["a rare recipient, an API key, a lane and a state", { recipient: RARE_RECIPIENT, apiKeyId: "key_a", lane: LANE, states: ["nonce-used"] }],
    ["a lane and an API key in a window", { lane: LANE, apiKeyId: "key_a", since: at(3_000), until: at(4_000) }],
    ["Idempotency-Keys", { idempotencyKeys: ["key_a/order-10", "key_a/order-11", "key_a/order-4000", "key_b/order-10"] }],
    ["a payout item id under every API key", { payoutItem: { itemId: "refund-1", apiKeyIds: ["key_a", "key_0", "key_1", "key_2", "key_3", "key_4", "key_5", "key_b"] } }],
    ["a payout item id under one API key", { payoutItem: { itemId: "refund-1", apiKeyIds: ["key_3"] } }],
    ["a payout item id with a state", { payoutItem: { itemId: "refund-1", apiKeyIds: ["key_a", "key_0", "key_1", "key_2", "key_3", "key_4", "key_5"] }, states: ["nonce-used"] }],
  ];

  for (const [name, filter] of filters) {
    for (const limit of [1, 37, 500]) {
      it(`${name}, pages of ${limit}: the rows a full scan finds, newest first`, async () => {
        expect((await paged(read, filter, limit)).ids).toEqual(scanned(filter));
      });
    }
  }

  it("a full page goes on from its last row; the last page says it is the last", async () => {
    const all = scanned({ apiKeyId: "key_a" });
    const first = await read.history({ apiKeyId: "key_a" }, undefined, 10);
    expect(first.entries.map((entry) => entry.id)).toEqual(all.slice(0, 10));
    expect(first.nextBefore).toBe(all[9]);
    const last = await read.history({ apiKeyId: "key_a" }, all[all.length - 11], 10);
    expect(last.entries.map((entry) => entry.id)).toEqual(all.slice(-10));
    expect(last.nextBefore).toBeUndefined();
  });

  it("a second filter checked row by row walks a bounded number of rows: short pages that go on, never a walk of the whole history", async () => {
    // key_3 sends to RECIPIENT rarely, and RECIPIENT has most rows: each read stops after its budget.
    const { ids, pages } = await paged(read, { recipient: RECIPIENT, apiKeyId: "key_3" }, 100);
    expect(ids).toEqual(scanned({ recipient: RECIPIENT, apiKeyId: "key_3" }));
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.some((size) => size < 100)).toBe(true);
  });

  it("a payout item id held under several API keys finds each key's batch", async () => {
    const holders = payoutItems.filter((held) => held.item_id === "refund-1");
    expect(holders.length).toBeGreaterThan(2);
    const { ids } = await paged(read, { payoutItem: { itemId: "refund-1", apiKeyIds: holders.map((held) => held.api_key) } }, 500);
    expect(ids).toEqual(holders.map((held) => held.transfer_id).sort((a, b) => b - a));
  });

  it("a repeat of the same Idempotency-Key under several API keys pages through every one, with a cursor until the last", async () => {
    // As GET /transfers asks for a client's key: once under each API key that may hold it.
    const keys = rows.flatMap((row) => (row.idempotency_key === null ? [] : [row.idempotency_key])).slice(0, 3);
    const expected = scanned({ idempotencyKeys: keys });
    expect(expected.length).toBeGreaterThan(1);
    expect((await paged(read, { idempotencyKeys: keys }, 1)).ids).toEqual(expected);
  });
});

describe("times rise with ids", () => {
  it("a transfer made after one stamped later (a clock that stepped back) takes the later time", async () => {
    const newest = rows[rows.length - 1].created_at;
    const claim = journal.claimKey("key_a/after-a-step-back", { recipient: RECIPIENT, units: 1n });
    expect(claim.outcome).toBe("claimed");
    const entry = journal.findById((claim as { entryId: number }).entryId);
    // The test's clock is now (2026-11), after the rows' times: the entry is stamped now.
    expect(entry?.createdAt).toBeGreaterThanOrEqual(newest);
    await journal.flushed();
    const path = join(dir, "journal.sqlite");
    const db = openKeptDatabase(path);
    const future = Date.now() + 3_600_000;
    const update = db.prepare("UPDATE transfers SET created_at = ? WHERE id = ?");
    update.run(future, entry?.id);
    db.close();
    const signed = journal.recordSigned(undefined, { recipient: RECIPIENT, units: 2n }, { nonce: 1, hash: `0x${"cd".repeat(32)}`, rawTransaction: "0x02", signedAtBlock: 1 });
    expect(journal.findById(signed)?.createdAt).toBe(future);
  });
});
