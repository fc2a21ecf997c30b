/** A backlog of idempotency keys is forgotten batch by batch, each committed before the next. */
import { afterEach, describe, expect, it } from "vitest";
import { steadyWallClockNow } from "../../src/clock.js";
import { KEYS_EXPIRED_PER_CALL } from "../../src/journal/retention/sqlite-retention-records.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";
import { KEY_EXPIRY_BATCHES_PER_ROUND, expireKeyBacklog } from "../../src/send-path/key-expiry.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1n };

/** A journal that answers `batches` in turn (then 0) and notes each call in order. */
function scriptedJournal(batches: number[]) {
  const calls: string[] = [];
  let next = 0;
  return {
    calls,
    journal: {
      expireKeys: () => {
        calls.push("expire");
        return batches[next++] ?? 0;
      },
      flushed: async () => {
        calls.push("flushed");
      },
    },
  };
}

describe("forgetting a backlog of idempotency keys", () => {
  let journal: TransferJournal | undefined;
  afterEach(() => journal?.close());

  it("waits for each batch's commit before the next, and stops at a batch that forgets nothing", async () => {
    const scripted = scriptedJournal([2_000, 2_000, 5]);
    expect(await expireKeyBacklog(scripted.journal, 60_000)).toBe(4_005);
    expect(scripted.calls).toEqual(["expire", "flushed", "expire", "flushed", "expire", "flushed", "expire", "flushed"]);
  });

  it("leaves the rest of a larger backlog to the next round", async () => {
    const scripted = scriptedJournal(Array.from({ length: 2 * KEY_EXPIRY_BATCHES_PER_ROUND }, () => 2_000));
    expect(await expireKeyBacklog(scripted.journal, 60_000)).toBe(KEY_EXPIRY_BATCHES_PER_ROUND * 2_000);
    expect(scripted.calls.filter((call) => call === "expire")).toHaveLength(KEY_EXPIRY_BATCHES_PER_ROUND);
  });

  it("rejects when a batch's commit fails", async () => {
    const failing = { expireKeys: () => 2_000, flushed: () => Promise.reject(new Error("disk gone")) };
    await expect(expireKeyBacklog(failing, 60_000)).rejects.toThrow("disk gone");
  });

  it("forgets more keys than one batch on a real SQLite journal, and leaves keys within their lifetime", async () => {
    journal = openSqliteJournal(":memory:", OWNER);
    const backlog = 2 * KEYS_EXPIRED_PER_CALL + 5;
    for (let index = 0; index < backlog; index++) journal.claimKey(`backlog-${index}`, REQUEST);
    await journal.flushed();
    const later = () => steadyWallClockNow() + 61_000;
    expect(await expireKeyBacklog(journal, 60_000, later)).toBe(backlog);
    expect(journal.findByKey("backlog-0")).toBeUndefined();
    expect(journal.findByKey(`backlog-${backlog - 1}`)).toBeUndefined();

    journal.claimKey("young", REQUEST);
    expect(await expireKeyBacklog(journal, 60_000)).toBe(0);
    expect(journal.findByKey("young")).toBeDefined();
  });
});
