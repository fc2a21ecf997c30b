/**
 * The service seals only the audit entries it writes, in the commit that writes them. An entry whose hash
 * someone with the database blanked (to edit it and have the service vouch for the edit) is never sealed
 * again: found while running, the commit fails and the journal takes no more writes; found at open, the
 * journal refuses to open, so the service does not start on it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuditEntryUnsealedError } from "../../src/journal/audit/audit-chain.js";
import { openKeptDatabase } from "../../src/journal/sqlite-keep-alive.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import { JournalUnavailableError } from "../../src/journal/transfer-journal.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };

describe("sealing the audit log", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function journalFile(): string {
    const dir = mkdtempSync(join(tmpdir(), "audit-sealing-"));
    dirs.push(dir);
    return join(dir, "transfers.sqlite");
  }
  const outside = (path: string, sql: string) => {
    const db = openKeptDatabase(path);
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
  };

  it("an entry blanked while the service runs fails the next commit, and the journal takes no more writes", async () => {
    const path = journalFile();
    const journal = openSqliteJournal(path, OWNER);
    for (const index of [1, 2, 3]) journal.recordAudit({ kind: "operator.cancel", actor: "key_a", detail: { index } });
    await journal.flushed();
    outside(path, "UPDATE audit_log SET detail = '{\"index\":9}', prev_hash = NULL, hash = NULL WHERE seq = (SELECT MAX(seq) FROM audit_log)");
    journal.recordAudit({ kind: "operator.cancel", actor: "key_a", detail: { index: 4 } });
    const failed = await journal.flushed().catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(JournalUnavailableError);
    expect((failed as JournalUnavailableError).cause).toBeInstanceOf(AuditEntryUnsealedError);
    expect(() => journal.recordAudit({ kind: "operator.cancel", actor: "key_a", detail: { index: 5 } })).toThrow(JournalUnavailableError);
    journal.close();
  });

  it("entries blanked from one on, edited, are not sealed again at open: the journal refuses to open, naming the first", async () => {
    const path = journalFile();
    const journal = openSqliteJournal(path, OWNER);
    for (const index of [1, 2, 3, 4]) journal.recordAudit({ kind: "operator.cancel", actor: "key_a", detail: { index } });
    await journal.flushed();
    journal.close();
    outside(path, "UPDATE audit_log SET prev_hash = NULL, hash = NULL WHERE seq >= 2; UPDATE audit_log SET actor = 'key_b' WHERE seq = 3");
    expect(() => openSqliteJournal(path, OWNER)).toThrow(AuditEntryUnsealedError);
    expect(() => openSqliteJournal(path, OWNER)).toThrow("the audit log's entry 2 has no hash");
  });
});
