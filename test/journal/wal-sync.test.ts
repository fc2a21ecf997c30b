/**
 * JOURNAL_SYNCHRONOUS=FULL: each commit's WAL is synced in the thread pool, and nothing waiting on
 * flushed() goes on before that sync is done. The disk's answer is faked at the boundary (node:fs's
 * fdatasync), since a real disk cannot be made to fail a sync on demand here; the journal is a real one.
 */
import { type fdatasync as FdatasyncType, fstatSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

type SyncCallback = Parameters<typeof FdatasyncType>[1];
const disk = vi.hoisted(() => ({ held: [] as { fd: number; done: (error: NodeJS.ErrnoException | null) => void }[], syncedAtOnce: [] as number[] }));

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  return {
    ...fs,
    // Held until the test answers for the disk.
    fdatasync: (fd: number, done: SyncCallback) => disk.held.push({ fd, done }),
    fdatasyncSync: (fd: number) => {
      disk.syncedAtOnce.push(fd);
      fs.fdatasyncSync(fd);
    },
  };
});

const { openSqliteJournal } = await import("../../src/journal/sqlite-transfer-journal.js");
const { JournalUnavailableError } = await import("../../src/journal/transfer-journal.js");

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1n };
const hashOf = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const signed = (n: number) => ({ nonce: n, hash: hashOf(n), rawTransaction: "0x02", signedAtBlock: 1 });

/** Whether the promise has settled after the event loop has run everything it can. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  return done;
}

describe("a journal that syncs its commits off the event loop (JOURNAL_SYNCHRONOUS=FULL)", () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "wal-sync-"));
    path = join(dir, "transfers.sqlite");
    disk.held.length = 0;
    disk.syncedAtOnce.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("lets no writer go on before the commit's WAL is synced, and syncs the WAL file itself", async () => {
    const journal = openSqliteJournal(path, OWNER);
    // Opening wrote the schema and its seals: synced at once, before anything acts on them.
    expect(disk.syncedAtOnce).toHaveLength(1);
    journal.recordSigned(undefined, REQUEST, signed(1));
    const flushed = journal.flushed();
    expect(await settled(flushed)).toBe(false);
    expect(disk.held).toHaveLength(1);
    expect(fstatSync(disk.held[0].fd).ino).toBe(statSync(`${path}-wal`).ino);
    // A writer that asks after the commit was made, before its sync ended, waits too.
    expect(await settled(journal.flushed())).toBe(false);
    disk.held[0].done(null);
    await flushed;
    await journal.flushed();
    expect(await journal.wasRecorded(hashOf(1))).toBe(true);
    journal.close();
  });

  it("a failed sync fails the journal: the commit's outcome is unknown, later commits and writes fail", async () => {
    const journal = openSqliteJournal(path, OWNER);
    journal.recordSigned(undefined, REQUEST, signed(1));
    const first = journal.flushed();
    await settled(first);
    // A second commit is made while the first one's sync is under way.
    journal.recordSigned(undefined, REQUEST, signed(2));
    const second = journal.flushed();
    await settled(second);
    expect(disk.held).toHaveLength(2);
    disk.held[0].done(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" }));
    await expect(first).rejects.toBeInstanceOf(JournalUnavailableError);
    // The later sync succeeds, but after a failed one the disk's word is worth nothing: still a failure.
    disk.held[1].done(null);
    await expect(second).rejects.toBeInstanceOf(JournalUnavailableError);
    // In the database, not known to be on disk: a restart may find it and send it. Neither sent nor refused.
    expect(await journal.wasRecorded(hashOf(1))).toBeUndefined();
    expect(await journal.wasRecorded(hashOf(2))).toBeUndefined();
    // Never written: surely not recorded.
    expect(await journal.wasRecorded(hashOf(3))).toBe(false);
    expect(() => journal.recordSigned(undefined, REQUEST, signed(3))).toThrow(JournalUnavailableError);
    await expect(journal.flushed()).rejects.toBeInstanceOf(JournalUnavailableError);
    journal.close();
  });

  it("closing commits what is pending and syncs it at once", async () => {
    const journal = openSqliteJournal(path, OWNER);
    disk.syncedAtOnce.length = 0;
    journal.recordSigned(undefined, REQUEST, signed(1));
    journal.close();
    expect(disk.syncedAtOnce).toHaveLength(1);
    const reopened = openSqliteJournal(path, OWNER);
    expect(await reopened.wasRecorded(hashOf(1))).toBe(true);
    reopened.close();
  });

  it("with JOURNAL_SYNCHRONOUS=NORMAL, or in memory, nothing is synced and flushed() waits for the commit only", async () => {
    for (const journal of [openSqliteJournal(path, OWNER, { synchronous: "NORMAL" }), openSqliteJournal(":memory:", OWNER)]) {
      journal.recordSigned(undefined, REQUEST, signed(1));
      await journal.flushed();
      expect(await journal.wasRecorded(hashOf(1))).toBe(true);
      journal.close();
    }
    expect(disk.held).toHaveLength(0);
    expect(disk.syncedAtOnce).toHaveLength(0);
  });
});
