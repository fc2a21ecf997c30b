/**
 * Journal size and startup read after many transfers, with and without retention (npm run bench:journal).
 *
 * A SQLite journal is filled with TRANSFERS (default 1,000,000) transfers settled for good, spread evenly
 * over the last year, each with one attempt holding a signed transaction of a real transfer's length. Then:
 * the file's size, and what a start reads (opening the journal: its migrations and in-memory indexes, the
 * unsettled transfers, the per-key caps' last 24 h, the first history page) and the whole history as CSV
 * (time, and the most memory it took), before and after a retention
 * pass of RETENTION_DAYS (default 90), and for a journal that kept only that window all along. Then the
 * same history in PostgreSQL (an embedded server; SKIP_POSTGRES=true skips it): a new leader's takeover
 * read before and after the retention pass.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Wallet } from "ethers";
import pg from "pg";
import { archiveOldTransfers } from "../src/journal/journal-retention.js";
import { migrateDatabase, openPostgresJournal, postgresOptions } from "../src/journal/postgres-journal-store.js";
import { openSqliteJournal } from "../src/journal/sqlite-transfer-journal.js";
import { encodeTransfer } from "../src/node/erc20.js";
import { historyCsv } from "../src/lookup/transfer-history.js";
import { startTestPostgres } from "../test/helpers/postgres.js";

const TRANSFERS = Number(process.env.TRANSFERS ?? 1_000_000);
const RETENTION_DAYS = Number(process.env.RETENTION_DAYS ?? 90);
const DAY_MS = 86_400_000;
const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
/** A signed EIP-1559 ERC-20 transfer: every row's attempt holds one (the history decodes its fees). */
const RAW = await Wallet.createRandom().signTransaction({
  type: 2,
  chainId: 31337n,
  nonce: 0,
  to: OWNER.tokenAddress,
  data: encodeTransfer(OWNER.walletAddress, 10n ** 18n),
  gasLimit: 60_000n,
  maxFeePerGas: 3_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
});

/** A journal with `count` settled, final transfers made evenly over the `days` days before `now`. */
function fill(path: string, count: number, days: number, now: number): void {
  openSqliteJournal(path, OWNER).close();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  const transfer = db.prepare(
    `INSERT INTO transfers (recipient, units, state, nonce, hash, raw_transaction, notify, lane, settled_block, final_block, mined_hash, created_at, updated_at)
     VALUES (@recipient, '1000000000000000000', 'nonce-used', @nonce, @hash, @raw, 0, @lane, @block, @block, NULL, @at, @at)`,
  );
  const attempt = db.prepare("INSERT INTO attempts (transfer_id, hash, raw_transaction, kind, signed_at_block, created_at) VALUES (?, ?, ?, 'transfer', ?, ?)");
  const insert = db.transaction((from: number, to: number) => {
    for (let nonce = from; nonce < to; nonce++) {
      const at = now - days * DAY_MS + Math.floor((nonce / count) * days * DAY_MS);
      const hash = `0x${nonce.toString(16).padStart(64, "0")}`;
      const { lastInsertRowid } = transfer.run({ recipient: `0x${(nonce % 5000).toString(16).padStart(40, "0")}`, nonce, hash, raw: RAW, lane: OWNER.walletAddress, block: nonce + 1, at });
      attempt.run(lastInsertRowid, hash, RAW, nonce + 1, at);
    }
  });
  for (let from = 0; from < count; from += 50_000) insert(from, Math.min(count, from + 50_000));
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}

/** What a start reads, timed; and the file's size and the bytes its live pages hold. */
function measure(path: string, now: number): { startMs: number; fileMb: number; liveMb: number } {
  const started = performance.now();
  const journal = openSqliteJournal(path, OWNER);
  journal.unsettled();
  journal.spentSince(now - DAY_MS);
  journal.history({}, undefined, 100);
  const startMs = performance.now() - started;
  journal.close();
  const db = new Database(path, { readonly: true });
  const pages = (db.pragma("page_count", { simple: true }) as number) - (db.pragma("freelist_count", { simple: true }) as number);
  const liveMb = (pages * (db.pragma("page_size", { simple: true }) as number)) / 2 ** 20;
  db.close();
  return { startMs, fileMb: statSync(path).size / 2 ** 20, liveMb };
}

const dir = mkdtempSync(join(tmpdir(), "journal-bench-"));
try {
  const now = Date.now();
  const full = join(dir, "full.sqlite");
  let started = performance.now();
  fill(full, TRANSFERS, 365, now);
  console.log(`filled ${TRANSFERS.toLocaleString("en")} transfers over 365 days in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const before = measure(full, now);
  await measureCsvExport(full);

  const journal = openSqliteJournal(full, OWNER);
  started = performance.now();
  const pass = await archiveOldTransfers(journal, { days: RETENTION_DAYS, archiveDir: join(dir, "archive") }, now);
  const passSeconds = (performance.now() - started) / 1000;
  journal.close();
  const after = measure(full, now);

  const windowed = join(dir, "window.sqlite");
  const kept = Math.round((TRANSFERS * RETENTION_DAYS) / 365);
  fill(windowed, kept, RETENTION_DAYS, now);
  const steady = measure(windowed, now);

  const row = (label: string, rows: number, figures: { startMs: number; fileMb: number; liveMb: number }) =>
    `| ${label} | ${rows.toLocaleString("en")} | ${figures.fileMb.toFixed(0)} MB (${figures.liveMb.toFixed(0)} MB live) | ${figures.startMs.toFixed(0)} ms |`;
  console.log(`\nretention pass (${RETENTION_DAYS} days): ${pass.archived.toLocaleString("en")} archived in ${passSeconds.toFixed(1)} s, archive file ${(statSync(pass.into as string).size / 2 ** 20).toFixed(0)} MB\n`);
  console.log("| Journal | Transfers in it | File | Startup read |");
  console.log("|---|---|---|---|");
  console.log(row("a year, no retention", TRANSFERS, before));
  console.log(row(`after a ${RETENTION_DAYS}-day retention pass`, TRANSFERS - pass.archived, after));
  console.log(row(`${RETENTION_DAYS}-day retention all along`, kept, steady));
  if (process.env.SKIP_POSTGRES !== "true") await postgresTakeover(now);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The whole history as CSV (what GET /transfers streams with Accept: text/csv): time, size, and the most memory it took. */
async function measureCsvExport(path: string): Promise<void> {
  const journal = openSqliteJournal(path, OWNER);
  const token = { address: OWNER.tokenAddress, decimals: 18 };
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  let bytes = 0;
  let rows = -1;
  const started = performance.now();
  for await (const chunk of historyCsv(journal, {}, undefined, undefined, token)) {
    bytes += Buffer.byteLength(chunk);
    rows += chunk.split("\r\n").length - 1;
    peak = Math.max(peak, process.memoryUsage().rss);
  }
  journal.close();
  console.log(
    `CSV export of the whole journal: ${rows.toLocaleString("en")} rows, ${(bytes / 2 ** 20).toFixed(0)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
      `resident memory at most ${((peak - baseline) / 2 ** 20).toFixed(0)} MB above where it started`,
  );
}

/** A new leader's takeover read of the same year in PostgreSQL, before and after a retention pass. */
async function postgresTakeover(now: number): Promise<void> {
  const postgres = await startTestPostgres();
  const sessions: pg.Client[] = [];
  const session = async () => {
    const client = new pg.Client(postgresOptions(postgres.url));
    sessions.push(client);
    await client.connect();
    return client;
  };
  try {
    const filler = await session();
    await migrateDatabase(filler);
    // Filled by the server itself: the same rows as the SQLite journal's.
    const spread = `${now - 365 * DAY_MS} + (g::bigint * ${365 * DAY_MS} / ${TRANSFERS})`;
    await filler.query(
      `INSERT INTO transfers (id, recipient, units, state, nonce, hash, raw_transaction, notify, lane, settled_block, final_block, created_at, updated_at)
       SELECT g, '0x' || lpad(to_hex(g % 5000), 40, '0'), '1000000000000000000', 'nonce-used', g - 1, '0x' || lpad(to_hex(g - 1), 64, '0'), $1, 0, $2, g, g, ${spread}, ${spread}
       FROM generate_series(1, ${TRANSFERS}) g`,
      [RAW, OWNER.walletAddress],
    );
    await filler.query(
      `INSERT INTO attempts (id, transfer_id, hash, raw_transaction, kind, signed_at_block, created_at)
       SELECT g, g, '0x' || lpad(to_hex(g - 1), 64, '0'), $1, 'transfer', g, ${spread} FROM generate_series(1, ${TRANSFERS}) g`,
      [RAW],
    );
    const takeover = async () => {
      const started = performance.now();
      const journal = await openPostgresJournal(await session(), OWNER);
      return { journal, seconds: (performance.now() - started) / 1000 };
    };
    const size = async () => Number((await filler.query<{ bytes: string }>("SELECT pg_database_size(current_database()) AS bytes")).rows[0].bytes) / 2 ** 20;
    const before = await takeover();
    const sizeBefore = await size();
    let started = performance.now();
    const pass = await archiveOldTransfers(before.journal, { days: RETENTION_DAYS, archiveDir: "" }, now);
    const passSeconds = (performance.now() - started) / 1000;
    await filler.query("VACUUM ANALYZE transfers, attempts");
    started = performance.now();
    const after = await takeover();
    console.log(`\nPostgreSQL: retention pass archived ${pass.archived.toLocaleString("en")} into transfers_archive in ${passSeconds.toFixed(0)} s\n`);
    console.log("| PostgreSQL journal | Transfers in it | Database | New leader's takeover read |");
    console.log("|---|---|---|---|");
    console.log(`| a year, no retention | ${TRANSFERS.toLocaleString("en")} | ${sizeBefore.toFixed(0)} MB | ${before.seconds.toFixed(1)} s |`);
    console.log(`| after a ${RETENTION_DAYS}-day retention pass | ${(TRANSFERS - pass.archived).toLocaleString("en")} | ${(await size()).toFixed(0)} MB (archive table included) | ${after.seconds.toFixed(1)} s |`);
    before.journal.close();
    after.journal.close();
  } finally {
    await Promise.all(sessions.map((client) => client.end().catch(() => undefined)));
    await postgres.stop();
  }
}
