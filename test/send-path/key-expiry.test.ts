/** A backlog of idempotency keys is forgotten within a round, batch by batch, on a real SQLite journal. */
import { afterEach, describe, expect, it } from "vitest";
import { steadyWallClockNow } from "../../src/clock.js";
import { KEYS_EXPIRED_PER_CALL, openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";
import { expireKeyBacklog } from "../../src/send-path/key-expiry.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1n };

describe("forgetting a backlog of idempotency keys", () => {
  let journal: TransferJournal;
  afterEach(() => journal.close());

  it("forgets more keys than one batch in one round, a turn between batches, and then nothing", async () => {
    journal = openSqliteJournal(":memory:", OWNER);
    const backlog = 2 * KEYS_EXPIRED_PER_CALL + 5;
    for (let index = 0; index < backlog; index++) journal.claimKey(`backlog-${index}`, REQUEST);
    await journal.flushed();
    const later = () => steadyWallClockNow() + 61_000;

    let turns = 0;
    const counting = setInterval(() => turns++, 0);
    const forgotten = await expireKeyBacklog(journal, 60_000, later);
    clearInterval(counting);

    expect(forgotten).toBe(backlog);
    // Three batches, with the event loop free in between.
    expect(turns).toBeGreaterThan(0);
    expect(journal.findByKey("backlog-0")).toBeUndefined();
    expect(journal.findByKey(`backlog-${backlog - 1}`)).toBeUndefined();
    expect(await expireKeyBacklog(journal, 60_000, later)).toBe(0);
  });

  it("leaves keys within their lifetime", async () => {
    journal = openSqliteJournal(":memory:", OWNER);
    journal.claimKey("young", REQUEST);
    expect(await expireKeyBacklog(journal, 60_000)).toBe(0);
    expect(journal.findByKey("young")).toBeDefined();
  });
});
