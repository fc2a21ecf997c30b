/**
 * The journal keeps SQLite's temporary data (the statement journal that lets one statement of a group
 * commit be undone alone, and the sorts of small lists) in memory. On disk, a turn's shared transaction
 * spilled that statement journal to a file in the temp directory and then wrote every later statement's
 * pages to it too: about four in five of the service's write calls under load, and a file made and
 * deleted at almost every commit. (The journal's set-up, which builds indexes, keeps SQLite's default.)
 */
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1n };
const TRANSFERS = 400;

// SQLite names its temporary files etilqs_* and unlinks them as soon as they are open: only the open
// descriptors show them.
function openSqliteTempFiles(): string[] {
  const links = readdirSync("/proc/self/fd").map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return "";
    }
  });
  return links.filter((link) => link.includes("etilqs_"));
}

// Open files are listed under /proc on Linux (CI's system and the Docker image's) only.
const noProc = !existsSync("/proc/self/fd");

describe.skipIf(noProc)(noProc ? "the journal's temporary data: NOT RUN, no /proc/self/fd on this system" : "the journal's temporary data", () => {
  let directory: string;
  let journal: TransferJournal;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "journal-temp-"));
    journal = openSqliteJournal(join(directory, "transfers.sqlite"), OWNER);
  });
  afterEach(() => {
    journal.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it("stays in memory while one turn's transaction changes hundreds of pages", async () => {
    for (let nonce = 0; nonce < TRANSFERS; nonce++) {
      journal.recordAccepted(journal.recordSigned(undefined, REQUEST, { nonce, hash: `0x${nonce.toString(16).padStart(64, "0")}`, rawTransaction: "0x02f8", signedAtBlock: 1 }));
    }
    await journal.flushed();

    // One turn: a statement that moves every transfer's index entries (and enters each in the audit log)
    // inside the transaction that already holds other writes, as a group commit does.
    const id = journal.recordSigned(undefined, REQUEST, { nonce: TRANSFERS, hash: `0x${"f".repeat(64)}`, rawTransaction: "0x02f8", signedAtBlock: 2 });
    expect(journal.markNonceUsedBelow(TRANSFERS)).toBe(TRANSFERS);
    journal.recordAccepted(id);
    const tempFilesInTheTurn = openSqliteTempFiles();
    await journal.flushed();

    expect(tempFilesInTheTurn).toEqual([]);
    expect(journal.findById(id)?.state).toBe("accepted");
  });
});
