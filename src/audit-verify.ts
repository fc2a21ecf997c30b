/**
 * npm run audit:verify                  checks the audit log's hash chain in JOURNAL_PATH's journal (or the
 *                                       PostgreSQL journal of DATABASE_URL), from its first entry to its last,
 *                                       reading first what retention archived: the audit files in
 *                                       JOURNAL_ARCHIVE_DIR (default archive/ next to the journal), or the
 *                                       database's audit_archive table; with no journal there, the newest dev
 *                                       run's (npm start without RPC_URL: dev-runs/ next to JOURNAL_PATH)
 * npm run audit:verify -- --journal F   the SQLite journal at F
 * npm run audit:verify -- --archive D   its archive's audit files are in D
 * npm run audit:verify -- --log-only    the log alone, from where it starts now: the entries before it must
 *                                       be accounted for by the chained entry that archived them (they are
 *                                       not read, so not checked)
 * npm run audit:verify -- --expect 912:5b0c…   also checks that entry 912 still has the hash an earlier run
 *                                       printed, or the service published (the audit.head webhook, its log
 *                                       line, kept outside the database): catches entries removed from the
 *                                       end, and a log rewritten whole
 * With AUDIT_KEY_FILE (or AUDIT_KEY) set as the service has it, entries sealed with that key are checked
 * too (their hashes are HMACs), and a log with no entry sealed with it, or one sealed without it after
 * entries sealed with it, is broken there. Without it, the first keyed entry reads as changed.
 * In the image: node dist/src/audit-verify.js. Exits 0 when the chain holds, 1 naming the first entry where it
 * breaks, 2 when the journal cannot be read. Read-only: it never writes the journal. It reads one snapshot
 * of the log, and of the archive only what is older than it (so a retention pass meanwhile changes nothing;
 * a SQLite journal's write-ahead log grows meanwhile, as under any long read).
 */
import { closeSync, existsSync, openSync, readSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { parseArgs } from "node:util";
import dotenv from "dotenv";
import pg from "pg";
import { latestDevRunJournal } from "./dev/dev-run-journal.js";
import { AuditChainCheck, type AuditRow, auditKeyOf, findAuditBreak } from "./journal/audit/audit-chain.js";
import { postgresOptions } from "./journal/postgres-journal-store.js";
import { sqliteAuditRows } from "./journal/audit/sqlite-audit-rows.js";
import { openKeptDatabase } from "./journal/sqlite-keep-alive.js";
import { withSecretFiles } from "./secret-files.js";

/** Entries read from PostgreSQL per query. */
const PAGE = 1_000;
/** Bytes read from an archive file at a time: a day's file of a first pass over a long history can be gigabytes. */
const CHUNK = 1 << 20;

dotenv.config({ quiet: true });
const { values } = parseArgs({
  options: { journal: { type: "string" }, "database-url": { type: "string" }, expect: { type: "string" }, archive: { type: "string" }, "log-only": { type: "boolean" } },
});
const kept = keptEntry(values.expect);
// DATABASE_URL_FILE and AUDIT_KEY_FILE as the service reads them (the Docker and Kubernetes secrets convention).
const secrets = secretsOfEnvironment();
const databaseUrl = values["database-url"] ?? (values.journal === undefined ? secrets.DATABASE_URL : undefined);
const auditKey = auditKeyOf(secrets.AUDIT_KEY);
const configuredJournal = values.journal ?? process.env.JOURNAL_PATH ?? "./data/transfers.sqlite";
// Right after a dev run (npm start without RPC_URL), JOURNAL_PATH holds nothing: the run's own journal is checked.
const devRunJournal = values.journal === undefined && !databaseUrl && !existsSync(configuredJournal) ? latestDevRunJournal(configuredJournal) : undefined;
if (devRunJournal) console.log(`no journal at ${configuredJournal}; checking the newest dev run's, ${devRunJournal} (--journal to choose)`);
const journalPath = devRunJournal ?? configuredJournal;
const archiveDir = values.archive ?? (process.env.JOURNAL_ARCHIVE_DIR || join(dirname(journalPath), "archive"));
const logOnly = values["log-only"] ?? false;

const check = new AuditChainCheck({ afterArchived: logOnly, key: auditKey });
/** Entries of the chain read from the archive (files, or the database's audit_archive table). */
let fromArchive = 0;
/** Lines of archive files a power loss left torn (never synced, so never deleted from the log): skipped. */
let tornLines = 0;
try {
  const broken = (databaseUrl ? await checkPostgres(databaseUrl) : checkSqlite(journalPath)) ?? check.finish() ?? keptEntryBreak();
  const where = databaseUrl ? `the PostgreSQL journal (${new URL(databaseUrl).host})` : journalPath;
  if (broken) {
    console.log(`audit log BROKEN in ${where} at entry ${broken.seq}: ${broken.reason}`);
    console.log(`${check.checked} entries before it hold (from entry ${check.firstSeq ?? "-"}).`);
    // A database's archive table is always read: a head missing there was removed, not moved elsewhere.
    if (!logOnly && !databaseUrl && check.checked === 0 && broken.reason.includes("missing before")) {
      console.log(`if retention archived the entries before it, pass where their files are (--archive), or --log-only to check from where the log starts`);
    }
    process.exit(1);
  }
  const span = check.firstSeq === undefined ? "" : `, ${check.firstSeq} to ${check.lastSeq}`;
  console.log(`audit log of ${where} holds: ${check.checked} entries${span}, last hash ${check.lastHash}`);
  if (check.keyedFrom !== undefined) console.log(`sealed with AUDIT_KEY_FILE's key from entry ${check.keyedFrom} on`);
  if (fromArchive > 0) console.log(`${fromArchive} of them read from the archive (${databaseUrl ? "the audit_archive table" : archiveDir})`);
  if (tornLines > 0) console.log(`${tornLines} torn line(s) in the archive files skipped (a power loss before a file was synced, its entries archived again; or a line a pass was writing)`);
  if (logOnly && check.firstSeq !== undefined && check.firstSeq > 1) {
    console.log(`entries 1 to ${check.firstSeq - 1} were archived by retention (an entry of the chain says so) and were not read`);
  }
  if (kept && kept.found === undefined) console.log(`entry ${kept.seq}, kept outside the database, was archived and not read here: check it with the archive`);
  if (check.lastSeq !== undefined) console.log(`keep this outside the database, and check against it next time: --expect ${check.lastSeq}:${check.lastHash}`);
} catch (error) {
  console.error(`audit:verify could not read the journal: ${(error as Error).message}`);
  process.exit(2);
}

// The rows as they are read, noting the kept entry's hash.
function* visited(rows: Iterable<AuditRow>): Generator<AuditRow> {
  for (const row of rows) {
    if (kept && row.seq === kept.seq) kept.found = row.hash;
    yield row;
  }
}

// A secret file that cannot be read means nothing can be checked: exit 2, never 1 (which says "broken").
function secretsOfEnvironment(): Record<string, string | undefined> {
  const { DATABASE_URL, DATABASE_URL_FILE, AUDIT_KEY, AUDIT_KEY_FILE } = process.env;
  try {
    return withSecretFiles({ DATABASE_URL, DATABASE_URL_FILE, AUDIT_KEY, AUDIT_KEY_FILE });
  } catch (error) {
    console.error(`audit:verify could not read its settings: ${(error as Error).message}`);
    process.exit(2);
  }
}

function keptEntry(value: string | undefined): { seq: number; hash: string; found?: string | null } | undefined {
  if (value === undefined) return undefined;
  const match = /^([0-9]+):([0-9a-f]{64})$/.exec(value);
  if (!match) {
    console.error("--expect is <seq>:<hash>, as an earlier run printed them (the last entry and its 64 hex digits)");
    process.exit(2);
  }
  return { seq: Number(match[1]), hash: match[2] };
}

// The entry kept outside the database, against the chain that held: gone (removed from the end) or rehashed (rewritten).
function keptEntryBreak() {
  if (!kept) return undefined;
  // Archived, and not read (--log-only): told, not a break.
  if (kept.found === undefined && check.firstSeq !== undefined && kept.seq < check.firstSeq) return undefined;
  if (kept.found === undefined) return { seq: kept.seq, reason: `entry ${kept.seq}, kept outside the database, is gone: the log ends at entry ${check.lastSeq ?? "none"} (entries removed from its end)` };
  if (kept.found !== kept.hash) return { seq: kept.seq, reason: `entry ${kept.seq} hashes to ${kept.found}, not to the ${kept.hash} kept outside the database: the log was rewritten` };
  return undefined;
}

function checkSqlite(path: string) {
  if (!existsSync(path)) throw new Error(`no journal at ${path} (JOURNAL_PATH, or --journal)`);
  const db = openKeptDatabase(path, { readonly: true });
  try {
    // One snapshot of the log, taken before the files are read: what a retention pass archives meanwhile is
    // in it, and is read from it rather than from the files.
    db.exec("BEGIN");
    const logStart = db.prepare("SELECT seq FROM audit_log ORDER BY seq LIMIT 1").pluck().get() as number | undefined;
    if (!logOnly) {
      const archived = findAuditBreak(visited(before(archivedEntries(archiveDir), logStart)), check);
      if (archived) return archived;
      fromArchive = check.checked;
    }
    return findAuditBreak(visited(sqliteAuditRows(db)), check);
  } finally {
    db.close();
  }
}

// The entries before `seq` (all without one).
function* before(rows: Iterable<AuditRow>, seq: number | undefined): Generator<AuditRow> {
  for (const row of rows) if (seq === undefined || row.seq < seq) yield row;
}

// The entries of the archive's audit files, in the order of their first entries (a clock set back across a
// restart can name a later file for an earlier day), each read a chunk at a time.
function* archivedEntries(dir: string): Generator<AuditRow> {
  if (!existsSync(dir)) return;
  const files = readdirSync(dir)
    .filter((name) => /^audit-[0-9]{4}-[0-9]{2}-[0-9]{2}\.jsonl$/.test(name))
    .map((name) => join(dir, name));
  const firstSeqOf = (file: string) => {
    for (const row of entriesOf(file, false)) return row.seq;
    return Number.POSITIVE_INFINITY;
  };
  // Two files starting alike: a pass cut off in its first batch of one, its batch written again in the other;
  // the shorter first, so that its entries are the ones read again within the batch remembered.
  const ordered = files.map((file) => ({ file, seq: firstSeqOf(file), size: statSync(file).size })).sort((a, b) => a.seq - b.seq || a.size - b.size);
  for (const { file } of ordered) yield* entriesOf(file);
}

// The entries of one archive file, line by line; a line that does not parse is one a power loss tore (counted once: `countTorn`).
function* entriesOf(file: string, countTorn = true): Generator<AuditRow> {
  for (const line of linesOf(file)) {
    if (line === "") continue;
    let row: AuditRow;
    try {
      row = JSON.parse(line) as AuditRow;
    } catch {
      if (countTorn) tornLines++;
      continue;
    }
    yield row;
  }
}

function* linesOf(file: string): Generator<string> {
  const descriptor = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(CHUNK);
    const decoder = new StringDecoder("utf8");
    let pending = "";
    for (;;) {
      const read = readSync(descriptor, buffer, 0, CHUNK, null);
      if (read === 0) break;
      const lines = (pending + decoder.write(buffer.subarray(0, read))).split("\n");
      pending = lines.pop() as string;
      yield* lines;
    }
    yield pending + decoder.end();
  } finally {
    closeSync(descriptor);
  }
}

async function checkPostgres(url: string) {
  const client = new pg.Client(postgresOptions(url));
  await client.connect();
  try {
    // One snapshot of both tables: an entry moved meanwhile is in exactly one of them.
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    // A database from before audit retention (migration 16) has no audit_archive.
    const hasArchive = (await client.query("SELECT to_regclass('audit_archive') IS NOT NULL AS present")).rows[0].present as boolean;
    const tables = hasArchive && !logOnly ? ["audit_archive", "audit_log"] : ["audit_log"];
    for (const table of tables) {
      for (let after = 0; ; ) {
        const { rows } = await client.query<AuditRow>(`SELECT * FROM ${table} WHERE seq > $1 ORDER BY seq LIMIT $2`, [after, PAGE]);
        const broken = findAuditBreak(visited(rows), check);
        if (broken) return broken;
        if (rows.length < PAGE) break;
        after = rows[rows.length - 1].seq;
      }
      if (table === "audit_archive") fromArchive = check.checked;
    }
    return undefined;
  } finally {
    await client.end();
  }
}
