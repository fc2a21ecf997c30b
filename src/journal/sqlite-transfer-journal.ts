/**
 * The transfer journal in an embedded SQLite database (better-sqlite3, WAL): each concern's records
 * (journal/<concern>/sqlite-*.ts) on one view of the store, whose group commit makes a change of any of them
 * durable together.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { withSqliteApprovalRecords } from "./approvals/sqlite-approval-records.js";
import type { AuditKey } from "./audit/audit-chain.js";
import { withSqliteAuditRecords } from "./audit/sqlite-audit-records.js";
import { withSqliteHistoryReads } from "./history/sqlite-history-reads.js";
import type { JournalElsewhere, JournalOwner } from "./journal-records.js";
import { withSqliteOutflowRecords } from "./outflows/sqlite-outflow-records.js";
import { withSqlitePayoutItemRecords } from "./payout-items/sqlite-payout-item-records.js";
import { withSqliteRetentionRecords } from "./retention/sqlite-retention-records.js";
import { type JournalReplica, type JournalSeed, SqliteChangeLog, seedTables } from "./sqlite-change-log.js";
import { SqliteJournalStore } from "./sqlite-journal-store.js";
import { SqliteJournalView, type ViewNetwork } from "./sqlite-journal-view.js";
import { openKeptDatabase } from "./sqlite-keep-alive.js";
import { createIndexesAndTriggers, createTables, upgradeEarlierRows } from "./sqlite-schema.js";
import type { TransferJournal } from "./transfer-journal.js";
import { withSqliteTransferRecords } from "./transfers/sqlite-transfer-records.js";
import { withSqliteWebhookOutbox } from "./webhook-outbox/sqlite-webhook-outbox.js";

export interface SqliteJournalOptions {
  synchronous?: "FULL" | "NORMAL";
  notify?: boolean;
  /** The rows to start from (a leader's working copy, read from the shared database). */
  seed?: JournalSeed;
  /** Where every commit is shipped before flushed() resolves (the shared database of several replicas). */
  replica?: JournalReplica;
  /** Where what the seed left out is read (the shared database, for a working copy). */
  elsewhere?: JournalElsewhere;
  /** AUDIT_KEY_FILE's key: every audit entry sealed from now on is an HMAC with it. */
  auditKey?: AuditKey;
}

// The last audit entry of a file (0 for none, or a file without the log yet).
function lastAuditEntry(db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_log'").get();
  return table ? ((db.prepare("SELECT seq FROM audit_log ORDER BY seq DESC LIMIT 1").pluck().get() as number | undefined) ?? 0) : 0;
}

/**
 * Opens (creating if needed) the journal at `path`; ":memory:" keeps it in memory.
 *
 * Every statement is prepared once, when the database is opened; openKeptDatabase keeps them for good.
 * Settings go through exec(), which makes no Statement object.
 */
export function openSqliteJournal(path: string, owner: JournalOwner, options: SqliteJournalOptions = {}): TransferJournal {
  const { synchronous = "FULL", notify = false, seed, replica, elsewhere, auditKey } = options;
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = openKeptDatabase(path);
  // FULL survives power loss; NORMAL survives a crashed process only, but skips an fsync per commit.
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA busy_timeout = 5000;`);
  createTables(db);
  // A leader's working copy is filled before its indexes are made: one build of each index is quicker
  // than keeping them all up to date through a million inserts.
  if (seed) seedTables(db, seed);
  // What the audit log holds before this open's upgrades of the rows (the file's triggers write their
  // entries): those are sealed at open, nothing from before, the shared database's included.
  const auditWrittenAfter = lastAuditEntry(db);
  createIndexesAndTriggers(db);
  const store = new SqliteJournalStore(db, notify, replica && new SqliteChangeLog(db, replica), { replica, elsewhere, auditKey });
  try {
    store.checkOwner(owner);
    upgradeEarlierRows(db);
    store.sealOpeningEntries(auditWrittenAfter);
    // Temporary data in memory from here on, once the set-up's index builds (whose sorts may spill to disk)
    // are done: a group commit's statement journal (what undoes one failed statement of the shared
    // transaction) otherwise spilled to a temp file at almost every commit, and then took every later
    // statement's pages. Each holds what one statement changes, and every statement of the running service
    // changes a bounded set (expireKeys goes in batches).
    db.exec("PRAGMA temp_store = MEMORY");
  } catch (error) {
    db.close();
    throw error;
  }
  return new SqliteTransferJournal(store, owner.walletAddress, { chain: owner.chainId.toString(), token: owner.tokenAddress });
}

// Each concern's records on the one view, bottom up: the audit log first (approvals, outflows and retention
// enter it), payout items before transfers (a claim takes its batch's item ids), transfers before approvals
// (an approval claims through the transfers' claim).
const Audited = withSqliteAuditRecords(SqliteJournalView);
const WithPayoutItems = withSqlitePayoutItemRecords(Audited);
const WithTransfers = withSqliteTransferRecords(WithPayoutItems);
const WithApprovals = withSqliteApprovalRecords(WithTransfers);
const WithOutflows = withSqliteOutflowRecords(WithApprovals);
const WithOutbox = withSqliteWebhookOutbox(WithOutflows);
const WithHistory = withSqliteHistoryReads(WithOutbox);
const SqliteJournalRecords = withSqliteRetentionRecords(WithHistory);

/**
 * The journal as one lane of one network sees it: its own transfers to make and follow (a wallet has a
 * nonce sequence per chain), and every lane's and network's keys, hashes and events.
 */
class SqliteTransferJournal extends SqliteJournalRecords implements TransferJournal {
  // The journal openSqliteJournal returned owns the database; a lane's view of it does not.
  readonly #ownsStore: boolean;

  constructor(store: SqliteJournalStore, lane: string, network: ViewNetwork, ownsStore = true) {
    super(store, lane, network);
    this.#ownsStore = ownsStore;
  }

  forLane(walletAddress: string): TransferJournal {
    return new SqliteTransferJournal(this.store, walletAddress, this.network, false);
  }

  forNetwork(chainId: bigint, tokenAddress: string): TransferJournal {
    return new SqliteTransferJournal(this.store, this.lane, { chain: chainId.toString(), token: tokenAddress }, false);
  }

  close(): void {
    if (this.#ownsStore) this.store.close();
  }
}
