/**
 * The audit log sealed with a key kept outside the database (AUDIT_KEY_FILE): every entry's hash is an HMAC,
 * so someone with the database alone cannot write a chain that checks. A log sealed without a key goes on
 * with it from the first entry the keyed service seals, never back; the service does not start on a log
 * whose last entry another key (or a key, when none is set) sealed; `npm run audit:verify` with the key
 * checks it, and names the first entry sealed without it after one sealed with it.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { AUDIT_KEYED_KIND, AuditChainCheck, AuditKeyError, type AuditRow, auditKeyId, auditKeyOf, findAuditBreak } from "../../src/journal/audit/audit-chain.js";
import { openKeptDatabase } from "../../src/journal/sqlite-keep-alive.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";

const run = promisify(execFile);
const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const KEY = "audit-key-5f0c9b8e2a7d41c3b6e9f0a2d4c8b1e7";
const OTHER_KEY = "audit-key-other-0d3e8c1b5a9f42e7c6b0d1a3f5e7c9b2";

describe("the audit log sealed with AUDIT_KEY_FILE", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function scratch(): string {
    const dir = mkdtempSync(join(tmpdir(), "audit-key-"));
    dirs.push(dir);
    return dir;
  }
  const rows = (path: string) => {
    const db = openKeptDatabase(path, { readonly: true });
    try {
      return db.prepare("SELECT * FROM audit_log ORDER BY seq").all() as AuditRow[];
    } finally {
      db.close();
    }
  };
  async function journalWith(path: string, key: string | undefined, entries: number[]): Promise<void> {
    const journal = openSqliteJournal(path, OWNER, { auditKey: auditKeyOf(key) });
    for (const index of entries) journal.recordAudit({ kind: "operator.cancel", actor: "key_a", detail: { index } });
    await journal.flushed();
    journal.close();
  }
  async function auditVerify(journal: string, env: Record<string, string>): Promise<{ code: number; output: string }> {
    try {
      const { stdout } = await run("npm", ["run", "--silent", "audit:verify", "--", "--journal", journal], { env: { ...process.env, DATABASE_URL: "", AUDIT_KEY: "", AUDIT_KEY_FILE: "", ...env } });
      return { code: 0, output: stdout };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, output: failed.stdout + failed.stderr };
    }
  }

  it("goes on from entries sealed without a key: the keyed service's first entry names the key, every entry after is an HMAC that checks only with the key", async () => {
    const path = join(scratch(), "transfers.sqlite");
    await journalWith(path, undefined, [1, 2]);
    await journalWith(path, KEY, [3, 4]);
    const log = rows(path);
    const keyed = log.findIndex((row) => row.kind === AUDIT_KEYED_KIND);
    expect(keyed).toBeGreaterThan(0);
    expect(JSON.parse(log[keyed].detail)).toEqual({ keyId: auditKeyId(Buffer.from(KEY)) });
    expect(log.slice(keyed + 1).map((row) => JSON.parse(row.detail).index)).toEqual([3, 4]);
    // With the key, the chain holds from entry 1; the entries before the key stay plain SHA-256.
    const withKey = new AuditChainCheck({ key: Buffer.from(KEY) });
    expect(findAuditBreak(log, withKey) ?? withKey.finish()).toBeUndefined();
    expect(withKey.keyedFrom).toBe(log[keyed].seq);
    expect(log[0].hash).toBe(createHash("sha256").update(JSON.stringify([log[0].prev_hash, log[0].seq, log[0].at, log[0].kind, log[0].transfer_id, log[0].actor, log[0].detail])).digest("hex"));
    // Without it (or with another), the first keyed entry does not check.
    expect(findAuditBreak(log)).toMatchObject({ seq: log[keyed].seq, reason: expect.stringContaining("sealed with a key (AUDIT_KEY_FILE") });
    expect(findAuditBreak(log, new AuditChainCheck({ key: Buffer.from(OTHER_KEY) }))).toMatchObject({ seq: log[keyed].seq });
  });

  it("a tail rewritten by someone with the database but not the key, hashes recomputed, breaks at its first entry; a log rewritten whole without the key too", async () => {
    const path = join(scratch(), "transfers.sqlite");
    await journalWith(path, KEY, [1, 2, 3]);
    const log = rows(path);
    // Entry 3 (index 2) is edited and every hash from it on recomputed as SHA-256, which needs no key.
    const rewritten = log.map((row) => ({ ...row }));
    rewritten[2].detail = JSON.stringify({ index: 9 });
    for (let index = 2; index < rewritten.length; index++) {
      const row = rewritten[index];
      row.prev_hash = rewritten[index - 1].hash;
      row.hash = createHash("sha256").update(JSON.stringify([row.prev_hash, row.seq, row.at, row.kind, row.transfer_id, row.actor, row.detail])).digest("hex");
    }
    expect(findAuditBreak(rewritten, new AuditChainCheck({ key: Buffer.from(KEY) }))).toMatchObject({ seq: rewritten[2].seq, reason: expect.stringContaining("sealed without the key after entry") });
    // The whole log rewritten without the key: each entry checks as SHA-256, and none with the key.
    const whole = log.filter((row) => row.kind !== AUDIT_KEYED_KIND).map((row, index) => ({ ...row, seq: index + 1 }));
    let previous = "0".repeat(64);
    for (const row of whole) {
      row.prev_hash = previous;
      row.hash = createHash("sha256").update(JSON.stringify([row.prev_hash, row.seq, row.at, row.kind, row.transfer_id, row.actor, row.detail])).digest("hex");
      previous = row.hash;
    }
    const check = new AuditChainCheck({ key: Buffer.from(KEY) });
    expect(findAuditBreak(whole, check)).toBeUndefined();
    expect(check.finish()).toMatchObject({ reason: expect.stringContaining("no entry up to the last") });
  });

  it("does not start on a log sealed with the key once and without it at the end (entries appended by someone without the key)", async () => {
    const path = join(scratch(), "transfers.sqlite");
    await journalWith(path, KEY, [1, 2]);
    const db = openKeptDatabase(path);
    try {
      // An entry appended and sealed with SHA-256, which needs no key.
      const last = db.prepare("SELECT * FROM audit_log ORDER BY seq DESC LIMIT 1").get() as AuditRow;
      const row = { seq: last.seq + 1, at: last.at + 1, kind: "operator.cancel", transfer_id: null, actor: "key_forged", detail: "{}" };
      const hash = createHash("sha256").update(JSON.stringify([last.hash, row.seq, row.at, row.kind, row.transfer_id, row.actor, row.detail])).digest("hex");
      db.prepare("INSERT INTO audit_log (seq, at, kind, transfer_id, actor, detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(row.seq, row.at, row.kind, row.transfer_id, row.actor, row.detail, last.hash, hash);
    } finally {
      db.close();
    }
    expect(() => openSqliteJournal(path, OWNER, { auditKey: Buffer.from(KEY) })).toThrow("entries after it were written without the key");
    // Also once retention has archived the entry that began the key (the journal keeps where it began).
    const archived = openKeptDatabase(path);
    try {
      archived.prepare("DELETE FROM audit_log WHERE kind = 'journal.audit_keyed'").run();
    } finally {
      archived.close();
    }
    expect(() => openSqliteJournal(path, OWNER, { auditKey: Buffer.from(KEY) })).toThrow("entries after it were written without the key");
  });

  it("does not start on a log whose last entry another key sealed, or a key when none is set", async () => {
    const path = join(scratch(), "transfers.sqlite");
    await journalWith(path, KEY, [1]);
    expect(() => openSqliteJournal(path, OWNER, { auditKey: Buffer.from(OTHER_KEY) })).toThrow(AuditKeyError);
    expect(() => openSqliteJournal(path, OWNER)).toThrow("was sealed with a key (set AUDIT_KEY_FILE");
    // The right key opens it.
    await journalWith(path, KEY, [2]);
    expect(rows(path).filter((row) => row.kind === AUDIT_KEYED_KIND)).toHaveLength(1);
  });

  it("ignores an address book row someone with the database wrote: with the key, only rows the service sealed pay without approval", async () => {
    const path = join(scratch(), "transfers.sqlite");
    const journal = openSqliteJournal(path, OWNER, { auditKey: auditKeyOf(KEY) });
    const supplier = { address: "0x90F79bf6EB2c4f870365E785982E1f101E93b906", label: "supplier", addedBy: "key_admin", addedAt: 1_000, effectiveAt: 2_000 };
    journal.addressBook.add(supplier);
    await journal.flushed();
    journal.close();
    const db = openKeptDatabase(path);
    try {
      db.prepare("INSERT INTO address_book (address, label, added_by, added_at, effective_at, mac) VALUES (?, 'thief', 'key_admin', 0, 0, ?)").run(OWNER.walletAddress, "ab".repeat(32));
    } finally {
      db.close();
    }
    const reopened = openSqliteJournal(path, OWNER, { auditKey: auditKeyOf(KEY) });
    try {
      expect(reopened.addressBook.entries()).toEqual([supplier]);
      expect(reopened.addressBook.ignored).toEqual([OWNER.walletAddress]);
      // An admin adds the address for real: the ignored row gives way, nothing fails.
      const again = { address: OWNER.walletAddress, label: "checked", addedBy: "key_admin", addedAt: 5_000, effectiveAt: 6_000 };
      expect(reopened.addressBook.add(again)).toBe(true);
      await reopened.flushed();
      expect([reopened.addressBook.entries(), reopened.addressBook.ignored]).toEqual([[supplier, again], []]);
    } finally {
      reopened.close();
    }
  });

  it("npm run audit:verify checks it with AUDIT_KEY_FILE, as the service reads it, and without the key names the first keyed entry", async () => {
    const dir = scratch();
    const path = join(dir, "transfers.sqlite");
    await journalWith(path, undefined, [1]);
    await journalWith(path, KEY, [2, 3]);
    writeFileSync(join(dir, "audit.key"), `${KEY}\n`);
    const keyed = rows(path).find((row) => row.kind === AUDIT_KEYED_KIND) as AuditRow;
    const held = await auditVerify(path, { AUDIT_KEY_FILE: join(dir, "audit.key") });
    expect(held, held.output).toMatchObject({ code: 0, output: expect.stringContaining(`sealed with AUDIT_KEY_FILE's key from entry ${keyed.seq} on`) });
    const unkeyed = await auditVerify(path, {});
    expect(unkeyed).toMatchObject({ code: 1, output: expect.stringContaining(`BROKEN in ${path} at entry ${keyed.seq}`) });
    const unreadable = await auditVerify(path, { AUDIT_KEY_FILE: join(dir, "missing.key") });
    expect(unreadable).toMatchObject({ code: 2, output: expect.stringContaining("AUDIT_KEY_FILE: cannot read") });
  });
});
