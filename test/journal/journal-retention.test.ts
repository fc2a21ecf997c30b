/**
 * Retention on real journals: only transfers whose story is over leave (final or refused, key expired,
 * every event delivered or given up), each archived first with all its rows: to a synced file for a
 * SQLite journal, to the shared database's transfers_archive table for PostgreSQL, where a new leader's
 * takeover then reads only what is left. The audit log's old entries follow, to an audit file or the
 * audit_archive table, and its chain still verifies (npm run audit:verify) from entry 1 with the archive and
 * from where the log starts without it.
 */
import { execFile } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { steadyWallClockNow } from "../../src/clock.js";
import { AUDIT_ARCHIVED_KIND, AuditChainCheck, type AuditRow, findAuditBreak } from "../../src/journal/audit/audit-chain.js";
import { archiveOldAuditEntries, archiveOldTransfers } from "../../src/journal/retention/journal-retention.js";
import { postgresJournalReader } from "../../src/journal/postgres-journal-reader.js";
import { migrateDatabase, openPostgresJournal, postgresOptions } from "../../src/journal/postgres-journal-store.js";
import { openKeptDatabase } from "../../src/journal/sqlite-keep-alive.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { ArchivedTransfer, TransferJournal } from "../../src/journal/transfer-journal.js";
import { type TestPostgres, startTestPostgres, testPool } from "../helpers/postgres.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const DAY_MS = 86_400_000;
const hashOf = (nonce: number) => `0x${nonce.toString(16).padStart(64, "0")}`;
const run = promisify(execFile);

/** `npm run audit:verify` with these arguments: its exit code and what it printed. */
async function auditVerify(...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run("npm", ["run", "--silent", "audit:verify", "--", ...args], { env: { ...process.env, DATABASE_URL: "", JOURNAL_ARCHIVE_DIR: "" } });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

/** A journal to fill, what its archive holds so far, and the same journal as the next process reads it. */
interface RetentionStore {
  journal: TransferJournal;
  archived(into: string | undefined): Promise<ArchivedTransfer[]>;
  /** The audit entries archived so far, in the order archived. */
  auditArchive(into: string | undefined): Promise<AuditRow[]>;
  /** audit:verify's arguments for this journal, and its archive (`archiveDir` for a file's). */
  verifyArgs(archiveDir: string): string[];
  /** Runs `sql` on the journal's own database, as someone with write access to it could. */
  tamper(sql: string): Promise<void>;
  reopen(): Promise<TransferJournal>;
  destroy(): Promise<void>;
}

function sqliteStore(): RetentionStore {
  const dir = mkdtempSync(join(tmpdir(), "retention-"));
  const path = join(dir, "transfers.sqlite");
  const store: RetentionStore = {
    journal: openSqliteJournal(path, OWNER),
    archived: async (into) => (into ? readFileSync(into, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line)) : []),
    auditArchive: async (into) => (into ? readFileSync(into, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line)) : []),
    verifyArgs: (archiveDir) => ["--journal", path, "--archive", archiveDir],
    tamper: async (sql) => {
      const db = openKeptDatabase(path);
      try {
        db.exec(sql);
      } finally {
        db.close();
      }
    },
    reopen: async () => {
      store.journal.close();
      store.journal = openSqliteJournal(path, OWNER);
      return store.journal;
    },
    destroy: async () => {
      store.journal.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return store;
}

let postgres: TestPostgres | undefined;
async function postgresStore(): Promise<RetentionStore> {
  postgres ??= await startTestPostgres();
  const url = await postgres.createDatabase();
  const sessions: pg.Client[] = [];
  const reads = testPool(url);
  const leader = async () => {
    const session = new pg.Client(postgresOptions(url));
    sessions.push(session);
    await session.connect();
    await migrateDatabase(session);
    return openPostgresJournal(session, OWNER, { reads: postgresJournalReader(reads) });
  };
  const store: RetentionStore = {
    journal: await leader(),
    archived: async () => (await sessions[0].query<{ record: ArchivedTransfer }>("SELECT record FROM transfers_archive ORDER BY archived_at, id")).rows.map((row) => row.record),
    auditArchive: async () => (await sessions[0].query<AuditRow>("SELECT * FROM audit_archive ORDER BY seq")).rows,
    verifyArgs: () => ["--database-url", url],
    tamper: async (sql) => {
      await sessions[0].query(sql);
    },
    // A new leader: it reads from the database what is not settled for good.
    reopen: async () => {
      store.journal = await leader();
      return store.journal;
    },
    destroy: async () => {
      await Promise.all(sessions.map((session) => session.end()));
      await reads.end();
    },
  };
  return store;
}

afterAll(async () => {
  await postgres?.stop();
});

describe.each([
  ["SQLite, to a file", sqliteStore],
  ["PostgreSQL, to its archive table", postgresStore],
] as const)("journal retention on %s", (_name, openStore) => {
  it("archives final and refused transfers whose key expired, and keeps the rest; the archive holds every row", async () => {
    const store = await openStore();
    try {
      const { journal } = store;
      const settings = { days: 90, archiveDir: join(tmpdir(), `archive-${process.pid}-${Date.now()}`) };
      const signed = (nonce: number, key?: string): number => {
        const claimed = key === undefined ? undefined : journal.claimKey(key, { recipient: RECIPIENT, units: 1n });
        const id = journal.recordSigned(claimed?.outcome === "claimed" ? claimed.entryId : undefined, { recipient: RECIPIENT, units: 1n }, { nonce, hash: hashOf(nonce), rawTransaction: "0x02f8", signedAtBlock: 1 });
        journal.recordAccepted(id);
        return id;
      };
      const settleAndFinalize = (minedNonceCount: number) => {
        journal.markNonceUsedBelow(minedNonceCount);
        for (const entry of journal.usedUnverified()) journal.recordMined(entry.id, entry.hash as string);
        journal.markSettledAt(5);
        journal.finalizeThrough(10);
      };
      const finalWithoutKey = signed(0);
      const refused = journal.claimKey("refused-key", { recipient: RECIPIENT, units: 5n });
      if (refused.outcome !== "claimed") throw new Error("the key was taken");
      journal.recordRefused(refused.entryId, { code: "INSUFFICIENT_TOKEN_BALANCE", message: "too little" });
      const reported = signed(1);
      settleAndFinalize(2);
      // Its event recorded, its delivery still pending: kept until delivered or given up.
      journal.recordEvent({ id: "msg_1", type: "transfer.finalized", entryId: reported, body: "{}" }, ["http://127.0.0.1:9/hook"], "transfer.finalized");
      // Keys made so far are past their TTL (on the journal's own clock: the wall clock can lag it by a few ms).
      journal.expireKeys(0, steadyWallClockNow() + 1);
      const keyStillValid = signed(2, "a-live-key");
      const notFinal = signed(3);
      settleAndFinalize(3);
      // Mined at a block the chain has not finalized yet.
      journal.markNonceUsedBelow(4);
      journal.recordMined(notFinal, hashOf(3));
      journal.markSettledAt(20);
      await journal.flushed();
      const farFuture = steadyWallClockNow() + 100 * DAY_MS;

      // Not old enough: nothing moves.
      expect(await archiveOldTransfers(journal, { ...settings, days: 200 }, farFuture)).toEqual({ archived: 0, into: undefined });

      const first = await archiveOldTransfers(journal, settings, farFuture);
      expect(first.archived).toBe(2);
      const archived = await store.archived(first.into);
      expect(archived.map((record) => record.transfer.id).sort()).toEqual([finalWithoutKey, refused.entryId].sort());
      expect(archived.find((record) => record.transfer.id === finalWithoutKey)).toMatchObject({
        transfer: { state: "nonce-used", final_block: 10, units: "1" },
        attempts: [{ hash: hashOf(0), raw_transaction: "0x02f8" }],
      });
      expect(archived.find((record) => record.transfer.id === refused.entryId)?.transfer).toMatchObject({ state: "refused", refusal_code: "INSUFFICIENT_TOKEN_BALANCE" });

      // The next process (a restart, or a new leader reading the database) no longer has them.
      const next = await store.reopen();
      expect(next.findById(finalWithoutKey)).toBeUndefined();
      expect(next.findByHash(hashOf(0))).toBeUndefined();
      for (const kept of [reported, keyStillValid, notFinal]) expect(next.findById(kept), `entry ${kept}`).toBeDefined();
      expect(next.findByKey("a-live-key")?.id).toBe(keyStillValid);

      // Delivered: the reported transfer goes too, with its event and delivery.
      const [delivery] = await next.deliveries("pending", 10);
      next.recordDeliveryAttempt(delivery.id, { state: "delivered", lastStatus: "200", nextAttemptAt: 0 });
      await next.flushed();
      const second = await archiveOldTransfers(next, settings, farFuture);
      expect(second.archived).toBe(1);
      const all = await store.archived(second.into);
      expect(all).toHaveLength(3);
      expect(all[2]).toMatchObject({ transfer: { id: reported }, webhookEvents: [{ id: "msg_1", type: "transfer.finalized" }], webhookDeliveries: [{ state: "delivered" }] });
      const last = await store.reopen();
      expect(await last.deliveries(undefined, 10)).toEqual([]);
      // Transfers' retention leaves the audit log as it is: the archived transfers' entries stay, and the chain verifies from its first.
      const audit = await last.auditEntries({ after: 0 }, 1_000);
      expect(audit.filter((entry) => entry.transfer_id === finalWithoutKey).map((entry) => entry.kind)).toEqual(["transfer.signed", "attempt.transfer", "transfer.accepted", "transfer.nonce-used"]);
      expect(findAuditBreak(audit)).toBeUndefined();
      rmSync(settings.archiveDir, { recursive: true, force: true });
    } finally {
      await store.destroy();
    }
  });

  /** Runs `test` on a fresh store of this kind and an archive directory of its own, both removed after. */
  const withStore = async (test: (store: RetentionStore, archiveDir: string) => Promise<void>) => {
    const store = await openStore();
    const archiveDir = mkdtempSync(join(tmpdir(), "audit-archive-"));
    try {
      await test(store, archiveDir);
    } finally {
      rmSync(archiveDir, { recursive: true, force: true });
      await store.destroy();
    }
  };

  it("archives audit entries older than the retention, never the last; the chain holds from entry 1 with the archive and from where the log starts without it", () =>
    withStore(async (store, archiveDir) => {
      const { journal } = store;
      const settings = { days: 90, archiveDir };
      for (let nonce = 0; nonce < 3; nonce++) {
        const id = journal.recordSigned(undefined, { recipient: RECIPIENT, units: 1n }, { nonce, hash: hashOf(nonce), rawTransaction: "0x02f8", signedAtBlock: 1 });
        journal.recordAccepted(id);
        await journal.flushed();
      }
      journal.recordAudit({ kind: "operator.reprice", actor: "key_admin", detail: { nonce: 2 } });
      await journal.flushed();
      const before = await journal.auditEntries({ after: 0 }, 1_000);
      expect(before.length).toBeGreaterThan(6);
      const farFuture = steadyWallClockNow() + 100 * DAY_MS;

      expect(await archiveOldAuditEntries(journal, { ...settings, days: 200 }, farFuture)).toEqual({ archived: 0, into: undefined });
      // An entry of this turn, entered and not yet committed (the pass runs beside the service's writes).
      journal.recordAudit({ kind: "operator.delivery_retry", actor: "key_admin", detail: { delivery: 1 } });
      const first = await archiveOldAuditEntries(journal, settings, farFuture);
      // All but the last sealed one, which the entries of the next commit chain on from; the archive holds them as they were.
      expect(first.archived).toBe(before.length - 1);
      expect(await store.auditArchive(first.into)).toEqual(before.slice(0, -1));
      const left = await journal.auditEntries({ after: 0 }, 1_000);
      const lastBefore = before.at(-1)?.seq as number;
      expect(left.map((entry) => [entry.seq, entry.kind])).toEqual([
        [lastBefore, before.at(-1)?.kind],
        [lastBefore + 1, "operator.delivery_retry"],
        [lastBefore + 2, AUDIT_ARCHIVED_KIND],
      ]);
      expect(JSON.parse(left[2].detail)).toMatchObject({ throughSeq: before.at(-2)?.seq, lastHash: before.at(-2)?.hash });
      expect(left[1].prev_hash).toBe(before.at(-1)?.hash);

      // A restart (or a new leader) chains on; a second pass archives what has grown old since, the first pass's entry too.
      const next = await store.reopen();
      next.recordAudit({ kind: "operator.resume_signing", actor: "key_admin", detail: {} });
      await next.flushed();
      const second = await archiveOldAuditEntries(next, settings, farFuture);
      expect(second.archived).toBe(3);
      const archive = await store.auditArchive(second.into);
      const log = await next.auditEntries({ after: 0 }, 1_000);
      const withArchive = new AuditChainCheck({ afterArchived: true });
      expect(findAuditBreak([...archive, ...log], withArchive) ?? withArchive.finish()).toBeUndefined();
      expect([withArchive.firstSeq, withArchive.lastSeq]).toEqual([1, log.at(-1)?.seq]);
      const logAlone = new AuditChainCheck({ afterArchived: true });
      expect(findAuditBreak(log, logAlone) ?? logAlone.finish()).toBeUndefined();
      expect(logAlone.firstSeq).toBe(archive.length + 1);

      // The command an operator runs: from entry 1 with the archive; from where the log starts without the files.
      const verified = await auditVerify(...store.verifyArgs(archiveDir));
      expect(verified.code, verified.output).toBe(0);
      expect(verified.output).toContain(`holds: ${archive.length + log.length} entries, 1 to ${log.at(-1)?.seq}`);
      expect(verified.output).toContain(`${archive.length} of them read from the archive`);
      // Without the archive files the log's head is missing: named, unless the log alone is asked for, from where it starts.
      const inFiles = first.into?.endsWith(".jsonl") ?? false;
      const filesElsewhere = store.verifyArgs(inFiles ? join(archiveDir, "moved-elsewhere") : archiveDir);
      if (inFiles) {
        const missing = await auditVerify(...filesElsewhere);
        expect(missing.code, missing.output).toBe(1);
        expect(missing.output).toContain(`entries 1 to ${archive.length} are missing before entry ${archive.length + 1}: removed`);
        expect(missing.output).toContain("--log-only");
      }
      const logOnly = await auditVerify(...filesElsewhere, "--log-only");
      expect(logOnly.code, logOnly.output).toBe(0);
      expect(logOnly.output).toContain(`holds: ${log.length} entries, ${archive.length + 1} to ${log.at(-1)?.seq}`);
      expect(logOnly.output).toContain(`entries 1 to ${archive.length} were archived by retention`);
      if (inFiles) {
        // A power loss tore the file's last line: skipped, and the next pass's lines start on a line of their own.
        appendFileSync(second.into as string, JSON.stringify(log[0]).slice(0, 40));
        const torn = await auditVerify(...store.verifyArgs(archiveDir));
        expect(torn.code, torn.output).toBe(0);
        expect(torn.output).toContain("1 torn line(s)");
        next.recordAudit({ kind: "operator.reprice", actor: "key_admin", detail: { nonce: 3 } });
        await next.flushed();
        expect((await archiveOldAuditEntries(next, settings, farFuture)).archived).toBe(2);
        const afterTorn = await auditVerify(...store.verifyArgs(archiveDir));
        expect(afterTorn.code, afterTorn.output).toBe(0);
        expect(afterTorn.output).toContain(`${archive.length + 2} of them read from the archive`);
      } else {
        // The database's archive is always read: its head removed is named, whatever entry vouched for the start.
        await store.tamper(`DELETE FROM audit_archive WHERE seq <= 2`);
        const headless = await auditVerify(...store.verifyArgs(archiveDir));
        expect(headless.code, headless.output).toBe(1);
        expect(headless.output).toContain("entries 1 to 2 are missing before entry 3: removed");
        expect(headless.output).not.toContain("--archive");
        await store.tamper(`INSERT INTO audit_archive SELECT * FROM json_populate_recordset(NULL::audit_archive, '${JSON.stringify(archive.slice(0, 2))}')`);
      }

      // Entries removed from the log's head beyond what was archived: no archiving entry accounts for them.
      const current = await next.auditEntries({ after: 0 }, 1_000);
      await store.tamper(`DELETE FROM audit_log WHERE seq = ${current[0].seq}`);
      const removed = await auditVerify(...store.verifyArgs(archiveDir));
      expect(removed.code, removed.output).toBe(1);
      expect(removed.output).toContain(`entry ${current[0].seq} is missing before entry ${current[1].seq}: removed`);
      const removedLogOnly = await auditVerify(...store.verifyArgs(archiveDir), "--log-only");
      expect(removedLogOnly.code, removedLogOnly.output).toBe(1);
      expect(removedLogOnly.output).toContain(`no ${AUDIT_ARCHIVED_KIND} entry says they were archived`);
    }));

  it("archives a long audit log a batch at a time, each batch's archiving entry chained; a batch archived twice (a crash between file and commit) is no break", () =>
    withStore(async (store, archiveDir) => {
      const { journal } = store;
      for (let i = 0; i < 2_100; i++) journal.recordAudit({ kind: "operator.reprice", actor: "key_admin", detail: { i } });
      await journal.flushed();
      const entered = (await journal.auditEntries({ before: Number.MAX_SAFE_INTEGER }, 1))[0].seq;
      if (store.verifyArgs(archiveDir).includes("--journal")) {
        // As audit:verify finds it when a pass archives 2,000 entries after its snapshot of the log was taken and
        // before it reads the files: in the files, and still in that snapshot. Read once, from the snapshot.
        const early = join(archiveDir, "audit-2000-01-01.jsonl");
        const entries = [...(await journal.auditEntries({ after: 0 }, 1_000)), ...(await journal.auditEntries({ after: 1_000 }, 1_000))];
        writeFileSync(early, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
        const meanwhile = await auditVerify(...store.verifyArgs(archiveDir));
        expect(meanwhile.code, meanwhile.output).toBe(0);
        expect(meanwhile.output).toContain(`holds: ${entered} entries, 1 to ${entered}`);
        rmSync(early);
      }
      const pass = await archiveOldAuditEntries(journal, { days: 90, archiveDir }, steadyWallClockNow() + 100 * DAY_MS);
      const archive = await store.auditArchive(pass.into);
      const log = await journal.auditEntries({ after: 0 }, 1_000);
      // Everything old (here, the batches' own archiving entries too) but the last sealed entry, in order, once.
      expect(archive.length).toBe(pass.archived);
      expect(archive.map((entry) => entry.seq)).toEqual(Array.from({ length: pass.archived }, (_, i) => i + 1));
      const inFiles = pass.into?.endsWith(".jsonl") ?? false;
      // A file's batches each enter their archiving entry (2,101 and 2,102 after the first two), old enough here to
      // go in the third batch too; the database's table moves the 2,099 before its last entry, and enters one after.
      expect(pass.archived).toBe(inFiles ? entered + 1 : entered - 1);
      expect(log[0].seq).toBe(pass.archived + 1);
      const archivings = [...archive, ...log].filter((entry) => entry.kind === AUDIT_ARCHIVED_KIND).map((entry) => JSON.parse(entry.detail).throughSeq);
      expect(archivings).toEqual(inFiles ? [1_000, 2_000, pass.archived] : [pass.archived]);
      expect((await auditVerify(...store.verifyArgs(archiveDir))).code).toBe(0);
      if (inFiles) {
        // The second batch written again right after itself, as the pass after a crash between its append and its commit writes it.
        const lines = readFileSync(pass.into as string, "utf8").trimEnd().split("\n");
        writeFileSync(pass.into as string, [...lines.slice(0, 2_000), ...lines.slice(1_000, 2_000), ...lines.slice(2_000)].map((line) => `${line}\n`).join(""));
        const repeated = await auditVerify(...store.verifyArgs(archiveDir));
        expect(repeated.code, repeated.output).toBe(0);
        expect(repeated.output).toContain(`${pass.archived} of them read from the archive`);
      }
    }));
});
