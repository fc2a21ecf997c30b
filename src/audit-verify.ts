/**
 * npm run audit:verify                  checks the audit log's hash chain in JOURNAL_PATH's journal (or the
 *                                       PostgreSQL journal of DATABASE_URL), from its first entry to its last
 * npm run audit:verify -- --journal F   the SQLite journal at F
 * npm run audit:verify -- --expect 912:5b0c…   also checks that entry 912 still has the hash an earlier run
 *                                       printed (kept outside the database): catches entries removed from
 *                                       the end, and a log rewritten whole
 * npm run audit:verify -- --archive D   the audit files retention archived to D (default: JOURNAL_ARCHIVE_DIR,
 *                                       or archive/ next to the journal), read first; the shared database's
 *                                       audit_archive table always is. Without them the log is checked from
 *                                       where it starts, vouched for by the entry that archived the rest
 * In the image: node dist/src/audit-verify.js. Exits 0 when the chain holds, 1 naming the first entry where it
 * breaks, 2 when the journal cannot be read. Read-only: it never writes the journal.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import dotenv from "dotenv";
import pg from "pg";
import { AuditChainCheck, type AuditRow, findAuditBreak } from "./journal/audit-chain.js";
import { postgresOptions } from "./journal/postgres-journal-store.js";
import { sqliteAuditRows } from "./journal/sqlite-audit-rows.js";
import { openKeptDatabase } from "./journal/sqlite-keep-alive.js";

/** Entries read from PostgreSQL per query. */
const PAGE = 1_000;

dotenv.config({ quiet: true });
const { values } = parseArgs({ options: { journal: { type: "string" }, "database-url": { type: "string" }, expect: { type: "string" }, archive: { type: "string" } } });
const kept = keptEntry(values.expect);
const databaseUrl = values["database-url"] ?? (values.journal === undefined ? process.env.DATABASE_URL : undefined);
const journalPath = values.journal ?? process.env.JOURNAL_PATH ?? "./data/transfers.sqlite";
const archiveDir = values.archive ?? (process.env.JOURNAL_ARCHIVE_DIR || join(dirname(journalPath), "archive"));

const check = new AuditChainCheck({ afterArchived: true });
let first: number | undefined;
let last: number | undefined;
/** Entries read from the archive (files, or the database's audit_archive table). */
let fromArchive = 0;
try {
  const broken = (databaseUrl ? await checkPostgres(databaseUrl) : checkSqlite(journalPath)) ?? check.finish() ?? keptEntryBreak();
  const where = databaseUrl ? `the PostgreSQL journal (${new URL(databaseUrl).host})` : journalPath;
  if (broken) {
    console.log(`audit log BROKEN in ${where} at entry ${broken.seq}: ${broken.reason}`);
    console.log(`${check.checked} entries before it hold (from entry ${first ?? "-"}).`);
    process.exit(1);
  }
  console.log(`audit log of ${where} holds: ${check.checked} entries${first === undefined ? "" : `, ${first} to ${last}`}, last hash ${check.lastHash}`);
  if (fromArchive > 0) console.log(`${fromArchive} of them read from the archive (${databaseUrl ? "the audit_archive table" : archiveDir})`);
  const firstChecked = check.firstSeq;
  if (firstChecked !== undefined && firstChecked > 1) {
    console.log(`entries 1 to ${firstChecked - 1} were archived by retention (an entry of the chain says so) and were not read: --archive names where their files are`);
  }
  if (last !== undefined) console.log(`keep this outside the database, and check against it next time: --expect ${last}:${check.lastHash}`);
} catch (error) {
  console.error(`audit:verify could not read the journal: ${(error as Error).message}`);
  process.exit(2);
}

// The rows as they are read, noting the first and last seq seen, and the kept entry's hash.
function* visited(rows: Iterable<AuditRow>, archived = false): Generator<AuditRow> {
  for (const row of rows) {
    if (archived) fromArchive++;
    first ??= row.seq;
    last = row.seq;
    if (kept && row.seq === kept.seq) kept.found = row.hash;
    yield row;
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
  if (kept.found === undefined) return { seq: kept.seq, reason: `entry ${kept.seq}, kept outside the database, is gone: the log ends at entry ${last ?? "none"} (entries removed from its end)` };
  if (kept.found !== kept.hash) return { seq: kept.seq, reason: `entry ${kept.seq} hashes to ${kept.found}, not to the ${kept.hash} kept outside the database: the log was rewritten` };
  return undefined;
}

function checkSqlite(path: string) {
  if (!existsSync(path)) throw new Error(`no journal at ${path} (JOURNAL_PATH, or --journal)`);
  const archived = findAuditBreak(visited(archivedEntries(archiveDir), true), check);
  if (archived) return archived;
  const db = openKeptDatabase(path, { readonly: true });
  try {
    return findAuditBreak(visited(sqliteAuditRows(db)), check);
  } finally {
    db.close();
  }
}

// The entries of the archive's audit files, oldest file first (each is named for its day), a file at a time.
function* archivedEntries(dir: string): Generator<AuditRow> {
  if (!existsSync(dir)) return;
  const files = readdirSync(dir).filter((name) => /^audit-[0-9]{4}-[0-9]{2}-[0-9]{2}\.jsonl$/.test(name)).sort();
  for (const file of files) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) if (line !== "") yield JSON.parse(line) as AuditRow;
  }
}

async function checkPostgres(url: string) {
  const client = new pg.Client(postgresOptions(url));
  await client.connect();
  try {
    // A database from before audit retention (migration 16) has no audit_archive.
    const hasArchive = (await client.query("SELECT to_regclass('audit_archive') IS NOT NULL AS present")).rows[0].present as boolean;
    const tables = hasArchive ? ["audit_archive", "audit_log"] : ["audit_log"];
    for (const table of tables) {
      for (let after = 0; ; ) {
        const { rows } = await client.query<AuditRow>(`SELECT * FROM ${table} WHERE seq > $1 ORDER BY seq LIMIT $2`, [after, PAGE]);
        const broken = findAuditBreak(visited(rows, table === "audit_archive"), check);
        if (broken) return broken;
        if (rows.length < PAGE) break;
        after = rows[rows.length - 1].seq;
      }
    }
    return undefined;
  } finally {
    await client.end();
  }
}
