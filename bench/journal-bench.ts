/**
 * Journal size and startup read after many transfers, with and without retention (npm run bench:journal).
 *
 * A SQLite journal is filled with TRANSFERS (default 1,000,000) transfers settled for good, spread evenly
 * over the last year (and over recipients, API keys and lanes, see spread()), each with one attempt holding
 * a signed transaction of a real transfer's length. Then: the file's size, and what a start reads (opening
 * the journal: its migrations and in-memory indexes, the unsettled transfers, the per-key caps' last 24 h,
 * the first history page), a filtered history page for each filter GET /transfers offers, and the whole
 * history as CSV (time, the most memory it took, the longest hold of the event loop), before and after a retention
 * pass of RETENTION_DAYS (default 90), and for a journal that kept only that window all along. Then the
 * same history in PostgreSQL (an embedded server; SKIP_POSTGRES=true skips it, SKIP_SQLITE=true runs it
 * alone): a new leader's takeover read (the first after the bulk fill, and the next), the history pages it
 * reads there, and a retention pass.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { join } from "node:path";
import { Wallet } from "ethers";
import pg from "pg";
import { archiveOldTransfers } from "../src/journal/retention/journal-retention.js";
import { postgresJournalReader } from "../src/journal/postgres-journal-reader.js";
import { openKeptDatabase } from "../src/journal/sqlite-keep-alive.js";
import { migrateDatabase, openPostgresJournal, postgresOptions } from "../src/journal/postgres-journal-store.js";
import { openSqliteJournal } from "../src/journal/sqlite-transfer-journal.js";
import type { HistoryFilter, TransferJournal } from "../src/journal/transfer-journal.js";
import { encodeTransfer } from "../src/node/erc20.js";
import { historyCsv } from "../src/lookup/transfer-history.js";
import { servedNetworkOf } from "../src/network-settings/network-choice.js";
import { startTestPostgres } from "../test/helpers/postgres.js";

const TRANSFERS = Number(process.env.TRANSFERS ?? 1_000_000);
const RETENTION_DAYS = Number(process.env.RETENTION_DAYS ?? 90);
const DAY_MS = 86_400_000;
const LANES = ["", "0x90F79bf6EB2c4f870365E785982E1f101E93b906", "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65", "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc"];
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
  const db = openKeptDatabase(path);
  db.exec("PRAGMA journal_mode = WAL");
  const transfer = db.prepare(
    `INSERT INTO transfers (recipient, units, api_key_id, state, nonce, hash, raw_transaction, notify, lane, settled_block, final_block, mined_hash, created_at, updated_at)
     VALUES (@recipient, '1000000000000000000', @apiKeyId, @state, @nonce, @hash, @raw, 0, @lane, @block, @block, NULL, @at, @at)`,
  );
  const attempt = db.prepare("INSERT INTO attempts (transfer_id, hash, raw_transaction, kind, signed_at_block, created_at) VALUES (?, ?, ?, 'transfer', ?, ?)");
  const insert = db.transaction((from: number, to: number) => {
    for (let nonce = from; nonce < to; nonce++) {
      const at = now - days * DAY_MS + Math.floor((nonce / count) * days * DAY_MS);
      const hash = `0x${nonce.toString(16).padStart(64, "0")}`;
      const { lastInsertRowid } = transfer.run({ ...spread(nonce), nonce, hash, raw: RAW, block: nonce + 1, at });
      attempt.run(lastInsertRowid, hash, RAW, nonce + 1, at);
    }
  });
  for (let from = 0; from < count; from += 50_000) insert(from, Math.min(count, from + 50_000));
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  // Rows made by hand are not the service's: the audit entries their triggers wrote would rightly refuse the open.
  db.exec("DELETE FROM audit_log WHERE hash IS NULL");
  db.close();
}

/**
 * Who a filled transfer went to, for whom, from which lane and how it ended: 5,000 recipients, five API keys,
 * four lanes; about 1 % refused and 0.1 % cancelled, the rest mined.
 */
function spread(index: number): { recipient: string; apiKeyId: string; lane: string; state: string } {
  return {
    recipient: `0x${(index % 5000).toString(16).padStart(40, "0")}`,
    apiKeyId: `key_${index % 5}`,
    lane: index % 4 === 0 ? OWNER.walletAddress : LANES[index % 4],
    state: index % 997 === 0 ? "cancelled" : index % 101 === 0 ? "rejected" : "nonce-used",
  };
}

/** What a start reads, timed; and the file's size and the bytes its live pages hold. */
async function measure(path: string, now: number): Promise<{ startMs: number; fileMb: number; liveMb: number }> {
  const started = performance.now();
  const journal = openSqliteJournal(path, OWNER);
  journal.unsettled();
  journal.spentSince(now - DAY_MS);
  await journal.history({}, undefined, 100);
  const startMs = performance.now() - started;
  journal.close();
  const db = openKeptDatabase(path, { readonly: true });
  const read = (pragma: string) => {
    const statement = db.prepare(`PRAGMA ${pragma}`).pluck();
    return statement.get() as number;
  };
  const pages = read("page_count") - read("freelist_count");
  const liveMb = (pages * read("page_size")) / 2 ** 20;
  db.close();
  return { startMs, fileMb: statSync(path).size / 2 ** 20, liveMb };
}

const dir = mkdtempSync(join(tmpdir(), "journal-bench-"));
try {
  const now = Date.now();
  if (process.env.SKIP_SQLITE !== "true") {
    const full = join(dir, "full.sqlite");
    let started = performance.now();
    fill(full, TRANSFERS, 365, now);
    console.log(`filled ${TRANSFERS.toLocaleString("en")} transfers over 365 days in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const before = await measure(full, now);
    const opened = openSqliteJournal(full, OWNER);
    await printFilteredPages("SQLite", opened, now);
    opened.close();
    await measureCsvExport(full);

    const journal = openSqliteJournal(full, OWNER);
    started = performance.now();
    const pass = await archiveOldTransfers(journal, { days: RETENTION_DAYS, archiveDir: join(dir, "archive") }, now);
    const passSeconds = (performance.now() - started) / 1000;
    journal.close();
    const after = await measure(full, now);

    const windowed = join(dir, "window.sqlite");
    const kept = Math.round((TRANSFERS * RETENTION_DAYS) / 365);
    fill(windowed, kept, RETENTION_DAYS, now);
    const steady = await measure(windowed, now);

    const row = (label: string, rows: number, figures: { startMs: number; fileMb: number; liveMb: number }) =>
      `| ${label} | ${rows.toLocaleString("en")} | ${figures.fileMb.toFixed(0)} MB (${figures.liveMb.toFixed(0)} MB live) | ${figures.startMs.toFixed(0)} ms |`;
    console.log(`\nretention pass (${RETENTION_DAYS} days): ${pass.archived.toLocaleString("en")} archived in ${passSeconds.toFixed(1)} s, archive file ${(statSync(pass.into as string).size / 2 ** 20).toFixed(0)} MB\n`);
    console.log("| Journal | Transfers in it | File | Startup read |");
    console.log("|---|---|---|---|");
    console.log(row("a year, no retention", TRANSFERS, before));
    console.log(row(`after a ${RETENTION_DAYS}-day retention pass`, TRANSFERS - pass.archived, after));
    console.log(row(`${RETENTION_DAYS}-day retention all along`, kept, steady));
  }
  if (process.env.SKIP_POSTGRES !== "true") await postgresTakeover(now);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The filters GET /transfers and the console offer, on the full journal: the slowest of five reads of the
 * first page and of a page from the middle of the history (a cursor), 100 transfers a page.
 */
async function printFilteredPages(store: string, journal: TransferJournal, now: number): Promise<void> {
  const middle = Math.round(TRANSFERS / 2);
  const filters: [string, HistoryFilter][] = [
    ["none", {}],
    ["state=pending (none in it)", { states: ["signed", "accepted"] }],
    ["state=rejected (1 %)", { states: ["refused", "rejected"] }],
    ["state=cancelled (0.1 %)", { states: ["cancelled"] }],
    ["recipient (1 in 5,000)", { recipient: spread(7).recipient }],
    ["apiKeyId", { apiKeyId: "key_3" }],
    ["a transfer key's own, state=mined", { apiKeyId: "key_3", states: ["nonce-used"] }],
    ["lane", { lane: LANES[2] }],
    ["since the last 24 h", { since: now - DAY_MS }],
    ["until 200 days ago", { until: now - 200 * DAY_MS }],
    ["a week 100 days ago", { since: now - 107 * DAY_MS, until: now - 100 * DAY_MS }],
    ["recipient and apiKeyId that never meet", { recipient: spread(7).recipient, apiKeyId: "key_3" }],
    ["lane, apiKeyId and state=cancelled", { lane: LANES[2], apiKeyId: "key_1", states: ["cancelled"] }],
    ["idempotencyKey", { idempotencyKeys: ["key_1/order-1", "key_3/order-1"] }],
  ];
  const slowest = async (filter: HistoryFilter, below: number | undefined) => {
    let most = 0;
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      await journal.history(filter, below, 100);
      most = Math.max(most, performance.now() - started);
    }
    return most;
  };
  console.log(`\n${store}, ${TRANSFERS.toLocaleString("en")} transfers: a filtered page of 100 (slowest of 5 reads; target under 20 ms)\n`);
  console.log("| Filter | First page | Page from the middle |");
  console.log("|---|---|---|");
  for (const [name, filter] of filters) console.log(`| ${name} | ${(await slowest(filter, undefined)).toFixed(1)} ms | ${(await slowest(filter, middle)).toFixed(1)} ms |`);
}

/**
 * The whole history as CSV (what GET /transfers streams with Accept: text/csv): time, size, the most memory
 * it took, and the longest the event loop was held meanwhile (target: never over 50 ms).
 */
async function measureCsvExport(path: string): Promise<void> {
  const journal = openSqliteJournal(path, OWNER);
  const networks = [{ tokens: [{ address: OWNER.tokenAddress, decimals: 18 }], network: servedNetworkOf(undefined, { chainId: BigInt(OWNER.chainId), tokenAddress: OWNER.tokenAddress }) }];
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  let bytes = 0;
  let rows = -1;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  for await (const chunk of historyCsv(journal, {}, undefined, undefined, networks)) {
    bytes += Buffer.byteLength(chunk);
    rows += chunk.split("\r\n").length - 1;
    peak = Math.max(peak, process.memoryUsage().rss);
  }
  loop.disable();
  journal.close();
  console.log(
    `\nCSV export of the whole journal: ${rows.toLocaleString("en")} rows, ${(bytes / 2 ** 20).toFixed(0)} MB in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
      `resident memory at most ${((peak - baseline) / 2 ** 20).toFixed(0)} MB above where it started; ` +
      `the event loop held at most ${(loop.max / 1e6).toFixed(1)} ms (p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms)`,
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
  const pool = new pg.Pool(postgresOptions(postgres.url));
  const reads = postgresJournalReader(pool);
  try {
    const filler = await session();
    await migrateDatabase(filler);
    // Filled by the server itself: the same rows as the SQLite journal's.
    const madeAt = `${now - 365 * DAY_MS} + (g::bigint * ${365 * DAY_MS} / ${TRANSFERS})`;
    await filler.query(
      // As spread() fills the SQLite journal: row g is transfer g - 1.
      `INSERT INTO transfers (id, recipient, units, api_key_id, state, nonce, hash, raw_transaction, notify, lane, settled_block, final_block, created_at, updated_at)
       SELECT g, '0x' || lpad(to_hex((g - 1) % 5000), 40, '0'), '1000000000000000000', 'key_' || ((g - 1) % 5),
         CASE WHEN (g - 1) % 997 = 0 THEN 'cancelled' WHEN (g - 1) % 101 = 0 THEN 'rejected' ELSE 'nonce-used' END,
         g - 1, '0x' || lpad(to_hex(g - 1), 64, '0'), $1, 0, ($2::text[])[1 + (g - 1) % 4], g, g, ${madeAt}, ${madeAt}
       FROM generate_series(1, ${TRANSFERS}) g`,
      [RAW, [OWNER.walletAddress, ...LANES.slice(1)]],
    );
    await filler.query(
      `INSERT INTO attempts (id, transfer_id, hash, raw_transaction, kind, signed_at_block, created_at)
       SELECT g, g, '0x' || lpad(to_hex(g - 1), 64, '0'), $1, 'transfer', g, ${madeAt} FROM generate_series(1, ${TRANSFERS}) g`,
      [RAW],
    );
    const takeover = async () => {
      const started = performance.now();
      const journal = await openPostgresJournal(await session(), OWNER, { reads });
      return { journal, seconds: (performance.now() - started) / 1000 };
    };
    const size = async () => Number((await filler.query<{ bytes: string }>("SELECT pg_database_size(current_database()) AS bytes")).rows[0].bytes) / 2 ** 20;
    // The first after the bulk fill gives the tables their statistics (see analyzeOnce); the next is as every later one.
    const first = await takeover();
    first.journal.close();
    const before = await takeover();
    const sizeBefore = await size();
    await printFilteredPages("PostgreSQL (read there by the leader, which serves GET /transfers)", before.journal, now);
    // What a shipment of the leader's commits would wait meanwhile: a probe on the same session.
    const leaderSession = sessions[sessions.length - 1];
    let longestWaitMs = 0;
    let passing = true;
    const probe = (async () => {
      while (passing) {
        const asked = performance.now();
        await leaderSession.query("SELECT 1");
        longestWaitMs = Math.max(longestWaitMs, performance.now() - asked);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    let started = performance.now();
    const pass = await archiveOldTransfers(before.journal, { days: RETENTION_DAYS, archiveDir: "" }, now);
    const passSeconds = (performance.now() - started) / 1000;
    passing = false;
    await probe;
    await filler.query("VACUUM ANALYZE transfers, attempts");
    started = performance.now();
    const after = await takeover();
    console.log(
      `\nPostgreSQL: retention pass archived ${pass.archived.toLocaleString("en")} into transfers_archive in ${passSeconds.toFixed(0)} s; ` +
        `a query on the leader's session (as a shipment of its commits) waited at most ${longestWaitMs.toFixed(0)} ms meanwhile\n`,
    );
    console.log("| PostgreSQL journal | Transfers in it | Database | New leader's takeover read |");
    console.log("|---|---|---|---|");
    console.log(`| a year, no retention: the first takeover after the bulk fill | ${TRANSFERS.toLocaleString("en")} | ${sizeBefore.toFixed(0)} MB | ${first.seconds.toFixed(2)} s |`);
    console.log(`| a year, no retention: the next takeover | ${TRANSFERS.toLocaleString("en")} | ${sizeBefore.toFixed(0)} MB | ${before.seconds.toFixed(2)} s |`);
    console.log(`| after a ${RETENTION_DAYS}-day retention pass | ${(TRANSFERS - pass.archived).toLocaleString("en")} | ${(await size()).toFixed(0)} MB (archive table included) | ${after.seconds.toFixed(2)} s |`);
    before.journal.close();
    after.journal.close();
  } finally {
    await Promise.all(sessions.map((client) => client.end().catch(() => undefined)));
    await pool.end();
    await postgres.stop();
  }
}
