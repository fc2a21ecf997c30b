/**
 * npm run audit:verify                  checks the audit log's hash chain in JOURNAL_PATH's journal (or the
 *                                       PostgreSQL journal of DATABASE_URL), from its first entry to its last
 * npm run audit:verify -- --journal F   the SQLite journal at F
 * npm run audit:verify -- --expect 912:5b0c…   also checks that entry 912 still has the hash an earlier run
 *                                       printed (kept outside the database): catches entries removed from
 *                                       the end, and a log rewritten whole
 * In the image: node dist/src/audit-verify.js. Exits 0 when the chain holds, 1 naming the first entry where it
 * breaks, 2 when the journal cannot be read. Read-only: it never writes the journal.
 */
import { existsSync } from "node:fs";
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
const { values } = parseArgs({ options: { journal: { type: "string" }, "database-url": { type: "string" }, expect: { type: "string" } } });
const kept = keptEntry(values.expect);
const databaseUrl = values["database-url"] ?? (values.journal === undefined ? process.env.DATABASE_URL : undefined);
const journalPath = values.journal ?? process.env.JOURNAL_PATH ?? "./data/transfers.sqlite";

const check = new AuditChainCheck();
let first: number | undefined;
let last: number | undefined;
try {
  const broken = (databaseUrl ? await checkPostgres(databaseUrl) : checkSqlite(journalPath)) ?? keptEntryBreak();
  const where = databaseUrl ? `the PostgreSQL journal (${new URL(databaseUrl).host})` : journalPath;
  if (broken) {
    console.log(`audit log BROKEN in ${where} at entry ${broken.seq}: ${broken.reason}`);
    console.log(`${check.checked} entries before it hold (from entry ${first ?? "-"}).`);
    process.exit(1);
  }
  console.log(`audit log of ${where} holds: ${check.checked} entries${first === undefined ? "" : `, ${first} to ${last}`}, last hash ${check.lastHash}`);
  if (last !== undefined) console.log(`keep this outside the database, and check against it next time: --expect ${last}:${check.lastHash}`);
} catch (error) {
  console.error(`audit:verify could not read the journal: ${(error as Error).message}`);
  process.exit(2);
}

// The rows as they are read, noting the first and last seq seen, and the kept entry's hash.
function* visited(rows: Iterable<AuditRow>): Generator<AuditRow> {
  for (const row of rows) {
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
  const db = openKeptDatabase(path, { readonly: true });
  try {
    return findAuditBreak(visited(sqliteAuditRows(db)), check);
  } finally {
    db.close();
  }
}

async function checkPostgres(url: string) {
  const client = new pg.Client(postgresOptions(url));
  await client.connect();
  try {
    for (let after = 0; ; ) {
      const { rows } = await client.query<AuditRow>("SELECT * FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2", [after, PAGE]);
      const broken = findAuditBreak(visited(rows), check);
      if (broken) return broken;
      if (rows.length < PAGE) return undefined;
      after = rows[rows.length - 1].seq;
    }
  } finally {
    await client.end();
  }
}
