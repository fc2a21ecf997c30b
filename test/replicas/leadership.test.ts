/**
 * The leader's hold on the lead, on a real PostgreSQL: its session also writes the journal, so it may be
 * busy for long (a takeover copying a long history); the health check must not call it dead then, and
 * must notice at once when the session is really gone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateDatabase } from "../../src/journal/postgres-journal-store.js";
import { type LeaderSession, waitToLead } from "../../src/replicas/leadership.js";
import { type TestPostgres, connectTestClient, startTestPostgres } from "../helpers/postgres.js";

const INTERVAL_MS = 200;

describe("leadership", () => {
  let postgres: TestPostgres;
  let url: string;
  beforeAll(async () => {
    postgres = await startTestPostgres();
    url = await postgres.createDatabase();
    const client = await connectTestClient(url);
    await migrateDatabase(client);
    await client.end();
  }, 60_000);
  afterAll(async () => postgres?.stop());

  const lead = async (replicaId: string) =>
    (await waitToLead({ databaseUrl: url, replicaId, replicaUrl: `http://${replicaId}:3000`, intervalMs: INTERVAL_MS }, () => false)) as LeaderSession;
  const settledWithin = (promise: Promise<unknown>, ms: number) =>
    Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

  it("holds while its session is busy far longer than the health check waits (bulk work on the journal's connection)", async () => {
    const leader = await lead("busy");
    // 20 intervals of work on the leader's own session: the old check, queued behind it, gave up after 3.
    const busy = leader.session.query("SELECT pg_sleep($1)", [(20 * INTERVAL_MS) / 1000]);
    expect(await settledWithin(leader.lost, 20 * INTERVAL_MS + 500)).toBe(false);
    await busy;
    expect(await settledWithin(leader.lost, 3 * INTERVAL_MS)).toBe(false);
    await leader.release();
    expect((await leader.lost).message).toBe("released");
  });

  it("is lost within a few intervals once the database ends its session, and another replica can lead", async () => {
    const leader = await lead("doomed");
    const admin = await connectTestClient(url);
    try {
      const { rows } = await leader.session.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0].pid]);
      expect(await settledWithin(leader.lost, 5 * INTERVAL_MS)).toBe(true);
      const next = await lead("next");
      const { rows: recorded } = await admin.query<{ replica_id: string }>("SELECT replica_id FROM leadership WHERE id = 1");
      expect(recorded[0].replica_id).toBe("next");
      await next.release();
    } finally {
      await admin.end();
      await leader.release();
    }
  });

  it("is lost when the lock is gone although the session lives (the lock is the lead)", async () => {
    const leader = await lead("unlocked");
    await leader.session.query("SELECT pg_advisory_unlock_all()");
    expect(await settledWithin(leader.lost, 5 * INTERVAL_MS)).toBe(true);
    expect((await leader.lost).message).toMatch(/no longer holds this replica's leader lock/);
    await leader.release();
  });
});
