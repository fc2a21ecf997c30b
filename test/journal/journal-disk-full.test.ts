/**
 * A journal on a real, tiny filesystem (tmpfs) that fills up: a commit that fails must stop every later
 * write and every flush, so nothing is ever acted on (broadcast) without its record.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import { JournalUnavailableError, type TransferJournal } from "../../src/journal/transfer-journal.js";
import { fillFilesystem, mountTinyFilesystem } from "../helpers/tiny-filesystem.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1n };

describe("a journal whose disk fills up", () => {
  let mountPoint: string;
  let unmount: () => void;
  let journal: TransferJournal;

  beforeEach(() => {
    // Room for the schema (with the audit log's table, index and triggers) and a first commit, and little more.
    ({ mountPoint, unmount } = mountTinyFilesystem(1024));
    journal = openSqliteJournal(join(mountPoint, "transfers.sqlite"), OWNER);
  });
  afterEach(() => {
    journal.close();
    unmount();
  });

  it("rejects the flush of a claim whose commit failed, and every write and flush after it", async () => {
    const first = journal.claimKey("before", REQUEST);
    await journal.flushed();
    expect(first.outcome).toBe("claimed");

    fillFilesystem(mountPoint);
    const claim = journal.claimKey("lost", REQUEST);
    expect(claim.outcome).toBe("claimed");
    await expect(journal.flushed()).rejects.toBeInstanceOf(JournalUnavailableError);
    expect(journal.failure).toBeInstanceOf(JournalUnavailableError);
    // The signed transfer that would follow the claim is refused, not written to a row that is gone.
    expect(() => journal.recordSigned(claim.outcome === "claimed" ? claim.entryId : 0, REQUEST, { nonce: 1, hash: `0x${"ab".repeat(32)}`, rawTransaction: "0x02", signedAtBlock: 1 })).toThrow(
      JournalUnavailableError,
    );
    await expect(journal.flushed()).rejects.toBeInstanceOf(JournalUnavailableError);
  });

  it("a signed transfer whose commit found the disk full was surely not recorded: its bytes may never be sent", async () => {
    journal.claimKey("before", REQUEST);
    await journal.flushed();
    fillFilesystem(mountPoint);
    const hash = `0x${"cd".repeat(32)}`;
    journal.recordSigned(undefined, REQUEST, { nonce: 1, hash, rawTransaction: `0x02${"ef".repeat(200)}`, signedAtBlock: 1 });
    await expect(journal.flushed()).rejects.toMatchObject({ cause: { code: "SQLITE_FULL" } });
    expect(await journal.wasRecorded(hash)).toBe(false);
  });
});

// Keep the helper honest: the tiny filesystem really is tiny.
describe("the tiny filesystem helper", () => {
  it("refuses writes once full", () => {
    const { mountPoint, unmount } = mountTinyFilesystem(64);
    try {
      fillFilesystem(mountPoint);
      expect(() => writeFileSync(join(mountPoint, "more"), Buffer.alloc(8192))).toThrow(/ENOSPC/);
    } finally {
      unmount();
    }
  });
});

