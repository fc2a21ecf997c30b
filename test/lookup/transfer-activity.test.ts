/**
 * The activity tally against a journal filled hour by hour: each hour's transfers by what became of them,
 * read in slices however many there are, entries of 0 units (top-ups, fillers) left out, and gas put in the
 * hour it was seen spent.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openKeptDatabase } from "../../src/journal/sqlite-keep-alive.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { JournalState, TransferJournal } from "../../src/journal/transfer-journal.js";
import { ACTIVITY_HOURS, TransferActivity } from "../../src/lookup/transfer-activity.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const HOUR_MS = 3_600_000;
const NOW = Date.parse("2026-11-26T10:30:00Z");
const CURRENT_HOUR = Date.parse("2026-11-26T10:00:00Z");
const fail = (error: unknown) => {
  throw error;
};

let dir: string;
let journal: TransferJournal;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "activity-test-"));
  const path = join(dir, "journal.sqlite");
  openSqliteJournal(path, OWNER).close();
  const db = openKeptDatabase(path);
  const insert = db.prepare(
    "INSERT INTO transfers (recipient, units, state, lane, created_at, updated_at) VALUES ('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', @units, @state, @lane, @at, @at)",
  );
  const made = (at: number, state: JournalState, count: number, units = "5") => {
    for (let index = 0; index < count; index++) insert.run({ units, state, lane: OWNER.walletAddress, at: at + index });
  };
  db.transaction(() => {
    // A day and an hour ago: outside the 24 hours.
    made(CURRENT_HOUR - 24 * HOUR_MS, "nonce-used", 3);
    // Five hours ago: a busy hour, more than one slice of the tally.
    made(CURRENT_HOUR - 5 * HOUR_MS, "nonce-used", 4_500);
    made(CURRENT_HOUR - 5 * HOUR_MS + 600_000, "rejected", 2);
    made(CURRENT_HOUR - 5 * HOUR_MS + 700_000, "refused", 1);
    // This hour: in flight, replaced, cancelled, and a gas top-up (0 units).
    made(CURRENT_HOUR + 60_000, "accepted", 2);
    made(CURRENT_HOUR + 120_000, "replaced", 1);
    made(CURRENT_HOUR + 180_000, "cancelled", 1);
    made(CURRENT_HOUR + 240_000, "nonce-used", 1, "0");
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

describe("TransferActivity", () => {
  it("tallies each of the last 24 hours' transfers by what became of them, in slices, leaving out entries of 0 units", async () => {
    let slices = 0;
    const counted: Pick<TransferJournal, "madeSince"> = {
      madeSince: (since, afterId, limit) => {
        slices++;
        return journal.madeSince(since, afterId, limit);
      },
    };
    const activity = new TransferActivity(counted, () => 0n, { onError: fail, now: () => NOW });
    const hours = await activity.hours();
    expect(hours).toHaveLength(ACTIVITY_HOURS);
    expect(hours[0].start).toBe(CURRENT_HOUR - 23 * HOUR_MS);
    expect(hours.at(-1)?.start).toBe(CURRENT_HOUR);
    const busy = hours.find((hour) => hour.start === CURRENT_HOUR - 5 * HOUR_MS);
    expect(busy).toMatchObject({ sent: 4_500, mined: 4_500, failed: 3 });
    // In flight counts as sent; replaced as sent and failed; cancelled as sent; the top-up not at all.
    expect(hours.at(-1)).toMatchObject({ sent: 4, mined: 0, failed: 1 });
    expect(hours.reduce((sum, hour) => sum + hour.sent, 0)).toBe(4_504);
    expect(slices).toBeGreaterThan(2);
  });

  it("puts gas into the hour it was seen spent; hours before the process started have no figure", async () => {
    let now = NOW;
    let spent = 1_000n;
    const activity = new TransferActivity(journal, () => spent, { onError: fail, now: () => now });
    spent = 1_700n;
    await activity.tally();
    now += HOUR_MS;
    spent = 2_000n;
    await activity.tally();
    const hours = await activity.hours();
    expect(hours.at(-2)).toMatchObject({ start: CURRENT_HOUR, gasSpentWei: 700n });
    expect(hours.at(-1)).toMatchObject({ start: CURRENT_HOUR + HOUR_MS, gasSpentWei: 300n });
    expect(hours.at(-3)?.gasSpentWei).toBeNull();
  });

  it("counts again only the hours that can still change: the current and the last one, and any with transfers in flight", async () => {
    let now = NOW;
    const asked: number[] = [];
    const counted: Pick<TransferJournal, "madeSince"> = {
      madeSince: (since, afterId, limit) => {
        if (afterId === undefined) asked.push(since);
        return journal.madeSince(since, afterId, limit);
      },
    };
    const activity = new TransferActivity(counted, () => 0n, { onError: fail, now: () => now });
    await activity.tally();
    expect(asked).toHaveLength(ACTIVITY_HOURS);
    asked.length = 0;
    // Two hours later: the busy hour (settled) keeps its count; this hour (two in flight) is counted again.
    now += 2 * HOUR_MS;
    await activity.tally();
    expect(asked).not.toContain(CURRENT_HOUR - 5 * HOUR_MS);
    expect(asked).toContain(CURRENT_HOUR);
    expect(asked.sort((a, b) => a - b)).toEqual([CURRENT_HOUR, CURRENT_HOUR + HOUR_MS, CURRENT_HOUR + 2 * HOUR_MS]);
    const hours = await activity.hours();
    expect(hours.find((hour) => hour.start === CURRENT_HOUR - 5 * HOUR_MS)).toMatchObject({ sent: 4_500, mined: 4_500, failed: 3 });
    expect(hours.at(-1)?.start).toBe(CURRENT_HOUR + 2 * HOUR_MS);
  });

  it("counts what was made since the last tally on top of it within seconds, reading only what came after the highest id it counted", async () => {
    // A journal of one hour so far: ids rise with times.
    const rows: { id: number; createdAt: number; state: JournalState }[] = [];
    const make = (state: JournalState) => rows.push({ id: rows.length + 1, createdAt: NOW + rows.length, state });
    for (let index = 0; index < 5; index++) make("nonce-used");
    const readFrom: (number | undefined)[] = [];
    const fake: Pick<TransferJournal, "madeSince"> = {
      madeSince: (since, afterId, limit) => {
        readFrom.push(afterId);
        return rows.filter((row) => (afterId === undefined ? row.createdAt >= since : row.id > afterId)).slice(0, limit);
      },
    };
    const activity = new TransferActivity(fake, () => 0n, { onError: fail, now: () => NOW + 60_000 });
    await activity.tally();
    expect((await activity.hours()).at(-1)).toMatchObject({ sent: 5, mined: 5 });
    make("accepted");
    make("refused");
    readFrom.length = 0;
    await activity.countRecent();
    expect(readFrom).toEqual([5]);
    expect((await activity.hours()).at(-1)).toMatchObject({ sent: 6, mined: 5, failed: 1 });
    // The new one mined: the next count says so; a tally then counts the hour whole, and nothing twice.
    rows[5].state = "nonce-used";
    await activity.countRecent();
    expect((await activity.hours()).at(-1)).toMatchObject({ sent: 6, mined: 6, failed: 1 });
    await activity.tally();
    expect((await activity.hours()).at(-1)).toMatchObject({ sent: 6, mined: 6, failed: 1 });
    readFrom.length = 0;
    await activity.countRecent();
    expect(readFrom).toEqual([7]);
    expect((await activity.hours()).at(-1)).toMatchObject({ sent: 6, mined: 6, failed: 1 });
  });

  it("reports a tally that failed and keeps the last one", async () => {
    let broken = false;
    const errors: unknown[] = [];
    const flaky: Pick<TransferJournal, "madeSince"> = {
      madeSince: (since, afterId, limit) => {
        if (broken) throw new Error("disk I/O error");
        return journal.madeSince(since, afterId, limit);
      },
    };
    const activity = new TransferActivity(flaky, () => 0n, { onError: (error) => errors.push(error), now: () => NOW });
    const before = await activity.hours();
    broken = true;
    activity.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await activity.stop();
    expect(errors.map((error) => (error as Error).message)).toEqual(["disk I/O error"]);
    expect(await activity.hours()).toEqual(before);
  });
});
