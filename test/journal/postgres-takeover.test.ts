/**
 * A new leader holds only what is not settled for good (and the last day, and every live key); the rest
 * stays in PostgreSQL and is read there on demand. What it holds and what it reads must together be the
 * whole journal: every read finds settled history, new rows never take an old row's key, and retention
 * archives both kinds once each.
 */
import { findAuditBreak } from "../../src/journal/audit/audit-chain.js";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { steadyWallClockNow } from "../../src/clock.js";
import { archiveOldTransfers } from "../../src/journal/retention/journal-retention.js";
import { postgresJournalReader } from "../../src/journal/postgres-journal-reader.js";
import { migrateDatabase, openPostgresJournal, postgresOptions } from "../../src/journal/postgres-journal-store.js";
import type { ArchivedTransfer, TransferJournal } from "../../src/journal/transfer-journal.js";
import { type TestPostgres, startTestPostgres, testPool } from "../helpers/postgres.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const DAY_MS = 86_400_000;
const hashOf = (nonce: number, attempt = 0) => `0x${attempt.toString(16).padStart(2, "0")}${nonce.toString(16).padStart(62, "0")}`;

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
}, 60_000);
afterAll(async () => {
  await postgres?.stop();
});

/** A database and leaders over it, each on a session of its own, as after takeovers. */
async function database() {
  const url = await postgres.createDatabase();
  const sessions: pg.Client[] = [];
  const pool = testPool(url);
  const journals: TransferJournal[] = [];
  return {
    query: <Row extends pg.QueryResultRow>(sql: string, values: unknown[] = []) => pool.query<Row>(sql, values),
    async lead(notify = true): Promise<TransferJournal> {
      const session = new pg.Client(postgresOptions(url));
      sessions.push(session);
      await session.connect();
      await migrateDatabase(session);
      const journal = await openPostgresJournal(session, OWNER, { reads: postgresJournalReader(pool), notify });
      journals.push(journal);
      return journal;
    },
    async close() {
      for (const journal of journals) journal.close();
      await Promise.all(sessions.map((session) => session.end()));
      await pool.end();
    },
  };
}

/** Signs and accepts a transfer at `nonce` (with `key` claimed first, when given); its id. */
function send(journal: TransferJournal, nonce: number, key?: string): number {
  const claimed = key === undefined ? undefined : journal.claimKey(key, { recipient: RECIPIENT, units: 1n });
  const id = journal.recordSigned(claimed?.outcome === "claimed" ? claimed.entryId : undefined, { recipient: RECIPIENT, units: BigInt(nonce + 1) }, {
    nonce,
    hash: hashOf(nonce),
    rawTransaction: "0x02f8",
    signedAtBlock: 1,
  });
  journal.recordAccepted(id);
  return id;
}

/** Everything below `minedNonceCount` mined (by the hash the journal names), settled at block 5 and final. */
function settleAndFinalize(journal: TransferJournal, minedNonceCount: number): void {
  journal.markNonceUsedBelow(minedNonceCount);
  for (const entry of journal.usedUnverified()) journal.recordMined(entry.id, entry.attempts.at(-1)?.hash as string);
  journal.markSettledAt(5);
  journal.finalizeThrough(10);
}

/** A transfer at `nonce` re-priced once: two attempts. */
function sendRepriced(journal: TransferJournal, nonce: number): number {
  const id = send(journal, nonce);
  journal.recordAttempt(id, { hash: hashOf(nonce, 1), rawTransaction: "0x02f9", kind: "transfer", signedAtBlock: 2 });
  return id;
}

/** Reports a transfer's finality as event `eventId` to `endpoints` (none: reported, with nothing to deliver). */
function reportFinal(journal: TransferJournal, entryId: number, eventId: string, endpoints: string[] = []): void {
  journal.recordEvent({ id: eventId, type: "transfer.finalized", entryId, body: "{}" }, endpoints, "transfer.finalized");
}

/** The one pending delivery, attempted: delivered, or given up (an operator may retry it). */
async function attemptPendingDelivery(journal: TransferJournal, state: "delivered" | "failed"): Promise<void> {
  await journal.flushed();
  const [delivery] = await journal.deliveries("pending", 10);
  journal.recordDeliveryAttempt(delivery.id, { state, lastStatus: state === "delivered" ? "200" : "500", nextAttemptAt: 0 });
}

const HOOK = ["http://127.0.0.1:9/hook"];

describe("a new leader of a PostgreSQL journal", () => {
  it("holds what is not settled for good and reads the rest from the database: history, hashes, re-priced attempts, deliveries", async () => {
    const db = await database();
    try {
      const first = await db.lead();
      const settled = send(first, 0);
      const repriced = sendRepriced(first, 1);
      const refused = first.claimKey("refused-key", { recipient: RECIPIENT, units: 5n });
      if (refused.outcome !== "claimed") throw new Error("the key was taken");
      first.recordRefused(refused.entryId, { code: "INSUFFICIENT_TOKEN_BALANCE", message: "too little" });
      settleAndFinalize(first, 2);
      // Reported and delivered: its story is over.
      reportFinal(first, settled, "msg_settled", HOOK);
      reportFinal(first, repriced, "msg_repriced");
      await attemptPendingDelivery(first, "delivered");
      first.expireKeys(0, steadyWallClockNow() + 1);
      const keyed = send(first, 2, "a-live-key");
      // Final and reported, but its webhook delivery was given up: an operator may retry it, so a leader holds it.
      const givenUp = send(first, 3);
      const pending = send(first, 4);
      settleAndFinalize(first, 4);
      reportFinal(first, givenUp, "msg_given_up", HOOK);
      await attemptPendingDelivery(first, "failed");
      await first.flushed();
      // Everything made a month ago, except what the keys and states keep held.
      await db.query("UPDATE transfers SET created_at = created_at - $1", [30 * DAY_MS]);
      const highest = (await db.query<{ id: number }>("SELECT MAX(id) AS id FROM transfers")).rows[0].id;

      const leader = await db.lead();
      for (const gone of [settled, repriced, refused.entryId]) expect(leader.findById(gone), `entry ${gone}`).toBeUndefined();
      for (const held of [keyed, pending, givenUp]) expect(leader.findById(held), `entry ${held}`).toBeDefined();
      expect(leader.findByKey("a-live-key")?.id).toBe(keyed);
      expect(leader.lanesWithUnsettled()).toEqual([OWNER.walletAddress]);

      expect(await leader.lookUpByHash(hashOf(0))).toMatchObject({ id: settled, state: "nonce-used", finalBlock: 10 });
      expect(await leader.lookUpByHash(hashOf(4))).toMatchObject({ id: pending, state: "accepted" });
      expect(await leader.lookUpByHash(hashOf(9))).toBeUndefined();
      expect((await leader.findWithSeveralAttempts(hashOf(1)))?.attempts.map((attempt) => attempt.hash)).toEqual([hashOf(1), hashOf(1, 1)]);
      expect(await leader.findWithSeveralAttempts(hashOf(0))).toBeUndefined();
      expect(await leader.findWithSeveralAttempts(hashOf(4))).toBeUndefined();
      expect((await leader.deliveries("failed", 10)).map((listed) => listed.eventId)).toEqual(["msg_given_up"]);
      // Delivered ones of transfers it does not hold, and every delivery newest first, come from the database.
      expect((await leader.deliveries("delivered", 10)).map((listed) => listed.eventId)).toEqual(["msg_settled"]);
      expect((await leader.deliveries(undefined, 10)).map((listed) => [listed.eventId, listed.state])).toEqual([
        ["msg_given_up", "failed"],
        ["msg_settled", "delivered"],
      ]);
      expect((await leader.deliveriesOf(settled, 10)).map((listed) => [listed.eventId, listed.state])).toEqual([["msg_settled", "delivered"]]);

      const made = leader.recordSigned(undefined, { recipient: RECIPIENT, units: 9n }, { nonce: 5, hash: hashOf(5), rawTransaction: "0x02f8", signedAtBlock: 3 });
      expect(made).toBe(highest + 1);
      const history = await leader.history({}, undefined, 100);
      expect(history.entries.map((entry) => entry.id)).toEqual([made, pending, givenUp, keyed, refused.entryId, repriced, settled]);
      expect(history.entries.find((entry) => entry.id === refused.entryId)?.refusal?.code).toBe("INSUFFICIENT_TOKEN_BALANCE");
      expect((await leader.history({ states: ["nonce-used"] }, undefined, 100)).entries.map((entry) => entry.id)).toEqual([givenUp, keyed, repriced, settled]);
    } finally {
      await db.close();
    }
  });

  it("holds a transfer requested long ago and approved within the day: it counts against its key's daily cap from its approval", async () => {
    const db = await database();
    try {
      const first = await db.lead(false);
      const approved = send(first, 0);
      const old = send(first, 1);
      // The newest transfer is held whatever it is.
      send(first, 2);
      settleAndFinalize(first, 3);
      await first.flushed();
      await db.query("UPDATE transfers SET created_at = created_at - $1, api_key_id = 'key-a'", [30 * DAY_MS]);
      await db.query("UPDATE transfers SET approval_decided_at = $1, approval_decided_by = 'key-admin' WHERE id = $2", [steadyWallClockNow() - 3_600_000, approved]);

      const leader = await db.lead(false);
      expect(leader.findById(approved)).toBeDefined();
      expect(leader.findById(old)).toBeUndefined();
      expect(leader.spentSince(steadyWallClockNow() - DAY_MS)).toEqual([
        { apiKeyId: "key-a", units: 1n, at: expect.any(Number) },
      ]);
    } finally {
      await db.close();
    }
  });

  it("retention archives what the database keeps settled and what the working copy holds, each once, and new keys stay above the archived", async () => {
    const db = await database();
    try {
      // Without webhooks: a final transfer is settled for good.
      const first = await db.lead(false);
      const old = [send(first, 0), send(first, 1)];
      settleAndFinalize(first, 2);
      await first.flushed();
      await db.query("UPDATE transfers SET created_at = created_at - $1", [30 * DAY_MS]);
      const leader = await db.lead(false);
      // The newest is held all the same: a new transfer's time must not fall below it.
      expect(leader.findById(old[0])).toBeUndefined();
      expect(leader.findById(old[1])).toBeDefined();
      // Held by this leader from its start, settled for good after it.
      const recent = send(leader, 2);
      settleAndFinalize(leader, 3);
      await leader.flushed();

      const pass = await archiveOldTransfers(leader, { days: 7, archiveDir: "" }, steadyWallClockNow() + 10 * DAY_MS);
      expect(pass.archived).toBe(3);
      const archived = (await db.query<{ record: ArchivedTransfer }>("SELECT record FROM transfers_archive ORDER BY id")).rows.map((row) => row.record);
      expect(archived.map((record) => record.transfer.id)).toEqual([...old, recent]);
      expect(archived[0]).toMatchObject({ transfer: { state: "nonce-used", final_block: 10, units: "1" }, attempts: [{ hash: hashOf(0), raw_transaction: "0x02f8" }], webhookEvents: [], webhookDeliveries: [] });
      expect((await db.query("SELECT id FROM transfers")).rowCount).toBe(0);
      expect((await db.query("SELECT id FROM attempts")).rowCount).toBe(0);
      expect(await archiveOldTransfers(leader, { days: 7, archiveDir: "" }, steadyWallClockNow() + 10 * DAY_MS)).toEqual({ archived: 0, into: undefined });

      // Every transfer is archived: the next leader's ids go on above them, not into their keys.
      const next = await db.lead(false);
      expect(next.recordSigned(undefined, { recipient: RECIPIENT, units: 1n }, { nonce: 3, hash: hashOf(3), rawTransaction: "0x02f8", signedAtBlock: 4 })).toBe(recent + 1);
      await next.flushed();
    } finally {
      await db.close();
    }
  });

  it("a long leadership's working copy forgets, without telling the database, what a new leader would not hold; reads find it there", async () => {
    const db = await database();
    try {
      const leader = await db.lead();
      const settled = send(leader, 0);
      const repriced = sendRepriced(leader, 1);
      const keyed = send(leader, 2, "a-live-key");
      settleAndFinalize(leader, 3);
      // Reported and delivered, or without webhooks: settled for good. Reported but its delivery given up: held.
      reportFinal(leader, settled, "msg_settled", HOOK);
      reportFinal(leader, repriced, "msg_repriced");
      await attemptPendingDelivery(leader, "delivered");
      const givenUp = send(leader, 3);
      settleAndFinalize(leader, 4);
      reportFinal(leader, givenUp, "msg_given_up", HOOK);
      await attemptPendingDelivery(leader, "failed");
      const pending = send(leader, 4);
      const newest = send(leader, 5);
      settleAndFinalize(leader, 6);
      await leader.flushed();
      const rowsBefore = (await db.query("SELECT id FROM transfers")).rowCount as number;

      // Not while a change of the same turn waits to be shipped (a row it changed would be shipped as deleted):
      // here the report of the pending transfer's finality, which settles it for good.
      reportFinal(leader, pending, "msg_pending");
      const window = steadyWallClockNow() + DAY_MS;
      expect(leader.forgetSettledForGood(window, 100)).toBeUndefined();
      await leader.flushed();
      // Everything counts as made and last changed before the window here: a walk, oldest first, a slice at a time.
      expect(leader.forgetSettledForGood(window, 1)).toEqual({ examined: 1, forgotten: 1 });
      await leader.flushed();
      expect(leader.forgetSettledForGood(window, 100)).toEqual({ examined: 5, forgotten: 2 });
      await leader.flushed();
      // At its end the walk starts again from the oldest: what is held is looked at again, and stays.
      expect(leader.forgetSettledForGood(window, 100)).toEqual({ examined: 3, forgotten: 0 });
      // Nothing changed within the window is forgotten, whatever its state.
      expect(leader.forgetSettledForGood(steadyWallClockNow() - 1_000, 100)).toEqual({ examined: 0, forgotten: 0 });
      for (const gone of [settled, repriced, pending]) expect(leader.findById(gone), `entry ${gone}`).toBeUndefined();
      // A live key, a delivery an operator may retry, and the newest row stay.
      for (const held of [keyed, givenUp, newest]) expect(leader.findById(held), `entry ${held}`).toBeDefined();

      // The database was told nothing: every row is there, and every read finds them.
      expect((await db.query("SELECT id FROM transfers")).rowCount).toBe(rowsBefore);
      expect((await db.query("SELECT id FROM attempts WHERE transfer_id = $1", [repriced])).rowCount).toBe(2);
      expect(await leader.lookUpByHash(hashOf(0))).toMatchObject({ id: settled, state: "nonce-used", finalBlock: 10 });
      expect((await leader.findWithSeveralAttempts(hashOf(1, 1)))?.attempts.map((attempt) => attempt.hash)).toEqual([hashOf(1), hashOf(1, 1)]);
      expect((await leader.deliveriesOf(settled, 10)).map((listed) => [listed.eventId, listed.state])).toEqual([["msg_settled", "delivered"]]);
      expect((await leader.history({}, undefined, 100)).entries.map((entry) => entry.id)).toEqual([newest, pending, givenUp, keyed, repriced, settled]);
      // Writes go on as before, their keys above every row.
      const made = leader.recordSigned(undefined, { recipient: RECIPIENT, units: 9n }, { nonce: 6, hash: hashOf(6), rawTransaction: "0x02f8", signedAtBlock: 7 });
      expect(made).toBe(newest + 1);
      await leader.flushed();
      expect(leader.failure).toBeUndefined();
      expect((await db.query("SELECT id FROM transfers")).rowCount).toBe(rowsBefore + 1);
      // The audit log: the copy kept only its last entry to chain on from; the database holds the whole chain,
      // unbroken across the forgetting, and every read of it goes there.
      const audit = await leader.auditEntries({ after: 0 }, 10_000);
      expect(audit.length).toBeGreaterThan(10);
      expect(audit.length).toBe((await db.query("SELECT seq FROM audit_log")).rowCount);
      expect(audit.slice(-2).map((row) => [row.kind, row.transfer_id])).toEqual([["transfer.signed", made], ["attempt.transfer", made]]);
      expect(findAuditBreak(audit)).toBeUndefined();
    } finally {
      await db.close();
    }
  });

  it("retention moves a transfer the archive has already (a working copy archived it, then forgot it before deleting it)", async () => {
    const db = await database();
    try {
      const first = await db.lead(false);
      const old = [send(first, 0), send(first, 1)];
      settleAndFinalize(first, 2);
      await first.flushed();
      await db.query("UPDATE transfers SET created_at = created_at - $1", [30 * DAY_MS]);
      // As the copy's retention left it: in the archive, and still in the table.
      await db.query("INSERT INTO transfers_archive (id, archived_at, record) VALUES ($1, 0, '{}'::jsonb)", [old[0]]);
      const leader = await db.lead(false);
      expect(leader.findById(old[0])).toBeUndefined();
      await archiveOldTransfers(leader, { days: 7, archiveDir: "" }, steadyWallClockNow() + 10 * DAY_MS);
      expect((await db.query("SELECT id FROM transfers WHERE id = $1", [old[0]])).rowCount).toBe(0);
      const [{ record }] = (await db.query<{ record: ArchivedTransfer }>("SELECT record FROM transfers_archive WHERE id = $1", [old[0]])).rows;
      expect(record).toMatchObject({ transfer: { id: old[0], state: "nonce-used" }, attempts: [{ hash: hashOf(0) }] });
    } finally {
      await db.close();
    }
  });

  it("the same signed bytes again (a rejected transfer's, signed anew at its nonce) move to the new transfer, as when the copy held them", async () => {
    const db = await database();
    try {
      const first = await db.lead(false);
      const rejected = first.recordSigned(undefined, { recipient: RECIPIENT, units: 1n }, { nonce: 0, hash: hashOf(0), rawTransaction: "0x02f8", signedAtBlock: 1 });
      first.recordRejected(rejected, { code: "INSUFFICIENT_FUNDS", message: "no gas" });
      await first.flushed();
      await db.query("UPDATE transfers SET created_at = created_at - $1", [30 * DAY_MS]);
      // A later transfer, so that the rejected one is not the newest (which a leader always holds).
      await db.query("INSERT INTO transfers (id, recipient, units, state, lane, created_at, updated_at) VALUES (2, $1, '1', 'refused', $2, 0, 0)", [RECIPIENT, OWNER.walletAddress]);
      await db.query("UPDATE transfers SET created_at = (SELECT created_at FROM transfers WHERE id = 1) + 1 WHERE id = 2");
      const leader = await db.lead(false);
      expect(leader.findById(rejected)).toBeUndefined();

      const again = leader.recordSigned(undefined, { recipient: RECIPIENT, units: 1n }, { nonce: 0, hash: hashOf(0), rawTransaction: "0x02f8", signedAtBlock: 9 });
      await leader.flushed();
      expect(leader.failure).toBeUndefined();
      const rows = (await db.query<{ transfer_id: number }>("SELECT transfer_id FROM attempts WHERE hash = $1", [hashOf(0)])).rows;
      expect(rows).toEqual([{ transfer_id: again }]);
      expect((await leader.lookUpByHash(hashOf(0)))?.id).toBe(again);
      expect(await leader.wasRecorded(hashOf(0))).toBe(true);
    } finally {
      await db.close();
    }
  });
});
