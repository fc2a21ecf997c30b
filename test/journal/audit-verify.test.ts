/**
 * `npm run audit:verify` on a journal a simulator run made (faults, kills and all): the chain holds; one
 * byte of one entry changed, or one entry removed, and it fails naming that entry (or the one after the gap).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditEntryUnsealedError } from "../../src/journal/audit/audit-chain.js";
import { openKeptDatabase } from "../../src/journal/sqlite-keep-alive.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import { DEFAULT_SIMULATION, simulateSeed } from "../simulation/simulator.js";

const run = promisify(execFile);

async function auditVerify(journal: string, ...extra: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run("npm", ["run", "--silent", "audit:verify", "--", "--journal", journal, ...extra], { env: { ...process.env, DATABASE_URL: "" } });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe("npm run audit:verify", () => {
  let dir: string;
  let journal: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "audit-"));
    const report = await simulateSeed(7, { ...DEFAULT_SIMULATION, node: "anvil", transfers: 10, keepJournalIn: dir });
    expect(report.violations).toEqual([]);
    journal = join(dir, "transfers.sqlite");
  }, 300_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const entries = () => {
    const db = openKeptDatabase(journal, { readonly: true });
    try {
      return db.prepare("SELECT seq, kind, detail FROM audit_log ORDER BY seq").all() as { seq: number; kind: string; detail: string }[];
    } finally {
      db.close();
    }
  };
  const readRow = (seq: number) => {
    const db = openKeptDatabase(journal, { readonly: true });
    try {
      return db.prepare("SELECT seq, at, kind, transfer_id, actor, detail, prev_hash, hash FROM audit_log WHERE seq = ?").get(seq) as Record<string, unknown>;
    } finally {
      db.close();
    }
  };
  const change = (sql: string, ...values: unknown[]) => {
    const db = openKeptDatabase(journal);
    try {
      db.prepare(sql).run(...values);
    } finally {
      db.close();
    }
  };

  it("holds on the journal of a simulator run: every state change of its transfers is in the chain", async () => {
    const logged = entries();
    expect(logged.length).toBeGreaterThan(20);
    expect(logged.map((entry) => entry.kind)).toEqual(expect.arrayContaining(["service.started", "transfer.claimed", "transfer.signed", "attempt.transfer", "transfer.nonce-used"]));
    const verified = await auditVerify(journal);
    expect(verified.code, verified.output).toBe(0);
    expect(verified.output).toContain(`holds: ${logged.length} entries, ${logged[0].seq} to ${logged[logged.length - 1].seq}`);
  });

  it("fails naming the entry when one byte of it changed, and the entry after a removed one", async () => {
    const logged = entries();
    const target = logged[Math.floor(logged.length / 2)];
    // One byte: the detail's first digit, one more (or a 1 for a 9).
    const at = target.detail.search(/[0-9]/);
    const digit = target.detail[at];
    const changed = target.detail.slice(0, at) + (digit === "9" ? "1" : String(Number(digit) + 1)) + target.detail.slice(at + 1);
    change("UPDATE audit_log SET detail = ? WHERE seq = ?", changed, target.seq);
    const tampered = await auditVerify(journal);
    expect(tampered.code, tampered.output).toBe(1);
    expect(tampered.output).toContain(`BROKEN in ${journal} at entry ${target.seq}: entry ${target.seq} (${target.kind}) was changed`);

    change("UPDATE audit_log SET detail = ? WHERE seq = ?", target.detail, target.seq);
    expect((await auditVerify(journal)).code).toBe(0);
    const removed = logged[3];
    const row = readRow(removed.seq);
    change("DELETE FROM audit_log WHERE seq = ?", removed.seq);
    const gap = await auditVerify(journal);
    expect(gap.code, gap.output).toBe(1);
    expect(gap.output).toContain(`at entry ${logged[4].seq}: entry ${removed.seq} is missing before entry ${logged[4].seq}: removed`);
    change("INSERT INTO audit_log (seq, at, kind, transfer_id, actor, detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", ...Object.values(row));
    expect((await auditVerify(journal)).code).toBe(0);
  });

  it("catches entries removed from the end only against the last entry kept from an earlier run (--expect)", async () => {
    const logged = entries();
    const before = await auditVerify(journal);
    const keep = /--expect ([0-9]+:[0-9a-f]{64})/.exec(before.output)?.[1] as string;
    expect(keep).toMatch(new RegExp(`^${logged[logged.length - 1].seq}:`));
    expect((await auditVerify(journal, "--expect", keep)).code).toBe(0);
    change("DELETE FROM audit_log WHERE seq >= ?", logged[logged.length - 2].seq);
    // The log alone still looks whole.
    expect((await auditVerify(journal)).code).toBe(0);
    const truncated = await auditVerify(journal, "--expect", keep);
    expect(truncated.code, truncated.output).toBe(1);
    expect(truncated.output).toContain(`entry ${logged[logged.length - 1].seq}, kept outside the database, is gone`);
  });

  it("an entry edited with the hashes from it on blanked is never sealed again: the journal refuses to open (the service to start), and audit:verify fails", async () => {
    const logged = entries();
    const edited = logged[logged.length - 3];
    const rows = logged.slice(-3).map((entry) => readRow(entry.seq));
    change("UPDATE audit_log SET detail = ? WHERE seq = ?", JSON.stringify({ edited: true }), edited.seq);
    change("UPDATE audit_log SET prev_hash = NULL, hash = NULL WHERE seq >= ?", edited.seq);
    const owner = (() => {
      const db = openKeptDatabase(journal, { readonly: true });
      try {
        return db.prepare("SELECT chain_id, wallet_address, token_address FROM journal_owner").get() as { chain_id: string; wallet_address: string; token_address: string };
      } finally {
        db.close();
      }
    })();
    // What a restart of the service on this file does first (its journal's open): no sealing, a refusal naming the entry.
    const opening = () => openSqliteJournal(journal, { chainId: BigInt(owner.chain_id.replace(/\D.*$/, "")), walletAddress: owner.wallet_address, tokenAddress: owner.token_address });
    expect(opening).toThrow(AuditEntryUnsealedError);
    expect(opening).toThrow(`entry ${edited.seq} has no hash`);
    const verified = await auditVerify(journal);
    expect(verified.code, verified.output).toBe(1);
    expect(verified.output).toContain(`at entry ${edited.seq}`);
    for (const row of rows) change("UPDATE audit_log SET detail = ?, prev_hash = ?, hash = ? WHERE seq = ?", row.detail, row.prev_hash, row.hash, row.seq);
    expect((await auditVerify(journal)).code).toBe(0);
  });

  it("says so when there is no journal to read (exit 2)", async () => {
    const missing = await auditVerify(join(dir, "none.sqlite"));
    expect(missing.code).toBe(2);
    expect(missing.output).toContain("no journal at");
  });

  it("reads DATABASE_URL_FILE as the service does: the PostgreSQL journal it names, not a SQLite file", async () => {
    const urlFile = join(dir, "database-url");
    writeFileSync(urlFile, "postgres://transfers:pw@127.0.0.1:1/transfers\n");
    const failed = await run("npm", ["run", "--silent", "audit:verify"], { env: { ...process.env, DATABASE_URL: "", DATABASE_URL_FILE: urlFile, JOURNAL_PATH: join(dir, "none.sqlite") } }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect((failed as { code: number }).code).toBe(2);
    const output = `${(failed as { stdout: string }).stdout}${(failed as { stderr: string }).stderr}`;
    expect(output).toContain("ECONNREFUSED 127.0.0.1:1");
    expect(output).not.toContain("no journal at");
  });
});
