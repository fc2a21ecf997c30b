/**
 * A COMMIT that fails at the disk for another reason than a full disk (a failed sync, an I/O error) is
 * rolled back in memory only: its frames may be whole in the WAL, and a restart's recovery then finds the
 * transaction committed. The journal must not call it lost. SQLite cannot be made to fail a sync on demand
 * here, so the COMMIT's answer is faked at the boundary (the database handle), with better-sqlite3's own
 * error type; the rest of the journal is real.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it, vi } from "vitest";

const disk = vi.hoisted(() => ({ failCommitWith: undefined as string | undefined }));

vi.mock("../../src/journal/sqlite-keep-alive.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/journal/sqlite-keep-alive.js")>();
  return {
    ...original,
    openKeptDatabase: (...args: Parameters<typeof original.openKeptDatabase>) => {
      const db = original.openKeptDatabase(...args);
      const exec = db.exec.bind(db);
      db.exec = (source: string) => {
        if (source === "COMMIT" && disk.failCommitWith) throw new Database.SqliteError("disk I/O error", disk.failCommitWith);
        return exec(source);
      };
      return db;
    },
  };
});

const { openSqliteJournal } = await import("../../src/journal/sqlite-transfer-journal.js");
const { JournalUnavailableError } = await import("../../src/journal/transfer-journal.js");

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1n };
const signed = (nonce: number, hash: string) => ({ nonce, hash, rawTransaction: "0x02", signedAtBlock: 1 });

describe("a journal whose COMMIT fails at the disk", () => {
  const dirs: string[] = [];
  afterEach(() => {
    disk.failCommitWith = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function openJournal() {
    const dir = mkdtempSync(join(tmpdir(), "commit-failure-"));
    dirs.push(dir);
    return openSqliteJournal(join(dir, "transfers.sqlite"), OWNER);
  }

  it("a failed sync: the transfer may be found after a restart, so whether it was recorded is not known", async () => {
    const journal = openJournal();
    const before = `0x${"01".repeat(32)}`;
    journal.recordSigned(undefined, REQUEST, signed(0, before));
    await journal.flushed();
    disk.failCommitWith = "SQLITE_IOERR_FSYNC";
    const hash = `0x${"02".repeat(32)}`;
    journal.recordSigned(undefined, REQUEST, signed(1, hash));
    await expect(journal.flushed()).rejects.toBeInstanceOf(JournalUnavailableError);
    // Neither "recorded" (it is not in the database this process reads) nor "not recorded" (its 417 would
    // free a nonce that the restart's copy of it may use): unknown, which the client is told as such.
    expect(await journal.wasRecorded(hash)).toBeUndefined();
    expect(() => journal.recordSigned(undefined, REQUEST, signed(2, `0x${"03".repeat(32)}`))).toThrow(JournalUnavailableError);
    disk.failCommitWith = undefined;
    journal.close();
  });

  it("a full disk: the commit frame never reached the WAL, so the transfer was surely not recorded", async () => {
    const journal = openJournal();
    disk.failCommitWith = "SQLITE_FULL";
    const hash = `0x${"04".repeat(32)}`;
    journal.recordSigned(undefined, REQUEST, signed(0, hash));
    await expect(journal.flushed()).rejects.toBeInstanceOf(JournalUnavailableError);
    expect(await journal.wasRecorded(hash)).toBe(false);
    disk.failCommitWith = undefined;
    journal.close();
  });
});
