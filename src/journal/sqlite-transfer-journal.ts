/** The transfer journal in an embedded SQLite database (better-sqlite3, WAL). */
import type { AddressBook } from "./approvals/address-book.js";
import { ADDRESS_BOOK_SCHEMA, SqliteAddressBook } from "./approvals/sqlite-address-book.js";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { steadyWallClockNow } from "../clock.js";
import { type AttemptRow, type DeliveryRow, type EntryRow, SEVERAL_NETWORKS_MARK, ownersChainOf, payoutAsText, toAttempt, toDelivery, toEntry } from "./journal-rows.js";
import { type JournalReplica, type JournalSeed, SqliteChangeLog, seedTables } from "./sqlite-change-log.js";
import { AUDIT_GENESIS, AUDIT_KEYED_KIND, type AuditEntry, AuditEntryUnsealedError, type AuditKey, AuditKeyError, type AuditRow, auditEntryHash, auditKeyId, sealingAfter } from "./audit/audit-chain.js";
import { HISTORY_INDEXES, NETWORK_HISTORY_INDEXES, SqliteHistoryReader } from "./history/sqlite-history.js";
import { openKeptDatabase } from "./sqlite-keep-alive.js";
import { type JournalStatements, prepareStatements } from "./sqlite-statements.js";
import {
  type DeliveryState,
  type ArchivedTransfer,
  type AuditCursor,
  type HistoryFilter,
  type HistoryPage,
  type JournalAttempt,
  type JournalElsewhere,
  type JournalEntry,
  type JournalState,
  type StoredDisplacement,
  type StoredOutflow,
  type OutflowWatchProgress,
  type StoredSigningPause,
  type TransferEventType,
  type WebhookDelivery,
  type WebhookEventRecord,
  JournalOwnerMismatchError,
  JournalUnavailableError,
  type KeyClaim,
  type PayoutOrder,
  PayoutItemsTakenError,
  type RecordedRefusal,
  type SignedTransfer,
  type TransferJournal,
  type TransferRequest,
} from "./transfer-journal.js";

/**
 * Which token and chain a journal belongs to (another is refused), and the wallet whose transfers the
 * journal object opened writes and follows: its lane. One journal holds every lane of a wallet pool.
 */
export interface JournalOwner {
  chainId: bigint;
  walletAddress: string;
  tokenAddress: string;
  /** The deployment pays on other networks too: the journal is marked so that versions before networks refuse it (see SEVERAL_NETWORKS_MARK). */
  severalNetworks?: boolean;
}

/** A write that should have changed one entry found none: the journal and the service disagree. */
export class JournalWriteError extends Error {
  override name = "JournalWriteError";
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS journal_owner (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    chain_id TEXT NOT NULL,
    wallet_address TEXT NOT NULL,
    token_address TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS transfers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    idempotency_key TEXT UNIQUE,
    recipient TEXT NOT NULL,
    units TEXT NOT NULL,
    api_key_id TEXT,
    state TEXT NOT NULL,
    nonce INTEGER,
    hash TEXT,
    raw_transaction TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS transfers_key_age ON transfers (created_at) WHERE idempotency_key IS NOT NULL;
  -- History by time (GET /transfers?since=), and retention's oldest-first walk.
  CREATE INDEX IF NOT EXISTS transfers_created ON transfers (created_at);
  CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    transfer_id INTEGER NOT NULL REFERENCES transfers (id),
    hash TEXT NOT NULL UNIQUE,
    raw_transaction TEXT NOT NULL,
    kind TEXT NOT NULL,
    signed_at_block INTEGER NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS attempts_transfer ON attempts (transfer_id);
  CREATE TABLE IF NOT EXISTS webhook_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    -- Null for an event about no transfer (wallet.unexpected_outflow).
    transfer_id INTEGER REFERENCES transfers (id),
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS webhook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_seq INTEGER NOT NULL REFERENCES webhook_events (seq),
    endpoint TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_status TEXT,
    next_attempt_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
  CREATE INDEX IF NOT EXISTS webhook_deliveries_state ON webhook_deliveries (state, id);
  -- "Is an earlier event of this transfer still pending for this endpoint?", asked for every due delivery.
  CREATE INDEX IF NOT EXISTS webhook_events_transfer ON webhook_events (transfer_id, seq);
  CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_seq);
  -- The payout item ids each API key used, and the batch that holds each (see payoutItemsHeld). Kept for
  -- good, also when retention archives the batch: an item id is never paid twice.
  CREATE TABLE IF NOT EXISTS payout_items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    api_key TEXT NOT NULL,
    item_id TEXT NOT NULL,
    transfer_id INTEGER NOT NULL,
    UNIQUE (api_key, item_id)
  );
  CREATE INDEX IF NOT EXISTS payout_items_transfer ON payout_items (transfer_id);
  -- Every time signing was paused (PAUSE_ON_UNEXPECTED_OUTFLOW) and who resumed it: a restart or a new
  -- leader keeps a pause no admin has ended. A row per pause, and one pause at a time: a few rows for good.
  CREATE TABLE IF NOT EXISTS signing_pauses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    since INTEGER NOT NULL,
    reason TEXT NOT NULL,
    hash TEXT,
    latest_hash TEXT,
    outflows INTEGER NOT NULL,
    resumed_at INTEGER,
    resumed_by TEXT
  );
  -- Every unexpected outflow reported (a transaction of a wallet the service never signed, log_index -1; or
  -- a token Transfer out of one, its log's index), so that a restart or a new leader, finding it again, does
  -- not report it (webhook, pause) twice. A row per outflow: each one the wallet's key, or a spender, made.
  CREATE TABLE IF NOT EXISTS wallet_outflows (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chain_id TEXT NOT NULL,
    hash TEXT NOT NULL,
    log_index INTEGER NOT NULL,
    wallet TEXT NOT NULL,
    block_number INTEGER NOT NULL,
    detected_at INTEGER NOT NULL,
    -- A token Transfer: what it says and how many alike its transaction made before it (OUTFLOW_LOG_KEY_INDEX); null otherwise.
    log_key TEXT,
    UNIQUE (chain_id, hash, log_index)
  );
  -- The head at the outflow watch's first check of each network: what happened before is not the service's
  -- to judge (the lanes' funding, the key's use before the service), also after a restart.
  CREATE TABLE IF NOT EXISTS outflow_watch_starts (
    chain_id INTEGER PRIMARY KEY,
    first_block INTEGER NOT NULL
  );
  -- The audit log: every state change of every transfer, every attempt signed, every operator action and
  -- the settings each process started with, each entry chained to the one before by its hash (audit-chain.ts),
  -- sealed in the commit that makes it. Only retention deletes entries (and a working copy what it shipped):
  -- old ones, archived first, never the last (journal-retention.ts), so the chain verifies from entry 1 with
  -- the archive. AUTOINCREMENT: no seq is ever used again.
  CREATE TABLE IF NOT EXISTS audit_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    kind TEXT NOT NULL,
    transfer_id INTEGER,
    actor TEXT,
    detail TEXT NOT NULL,
    prev_hash TEXT,
    hash TEXT
  );
  CREATE INDEX IF NOT EXISTS audit_log_unsealed ON audit_log (seq) WHERE hash IS NULL;
  -- Where the log began to be sealed with AUDIT_KEY_FILE's key (AUDIT_KEYED_KIND): found at open at no cost.
  CREATE INDEX IF NOT EXISTS audit_log_keyed ON audit_log (seq) WHERE kind = 'journal.audit_keyed';
`;

/**
 * What the audit log notes by itself, in the transaction of the change: a transfer made or changing state
 * (with the admin key that approved or rejected it), and every attempt signed for it. Made after a working
 * copy is seeded, so that seeding notes nothing. The entries are sealed (hashed) before their commit.
 */
const AUDIT_TRIGGERS = `
  -- Made again at every open: a payout batch's entry names every item (id, recipient, amount) since 3 December.
  DROP TRIGGER IF EXISTS transfers_audit_made;
  CREATE TRIGGER transfers_audit_made AFTER INSERT ON transfers BEGIN
    INSERT INTO audit_log (at, kind, transfer_id, actor, detail) VALUES (NEW.updated_at, 'transfer.' || NEW.state, NEW.id, NULL,
      json_object('state', NEW.state, 'lane', NEW.lane, 'chainId', NEW.chain_id, 'token', NEW.token, 'recipient', NEW.recipient, 'units', NEW.units,
        'apiKeyId', NEW.api_key_id, 'nonce', NEW.nonce, 'hash', NEW.hash, 'approvalExpiresAt', NEW.approval_expires_at, 'payout', json(NEW.payout)));
  END;
  CREATE TRIGGER IF NOT EXISTS transfers_audit_state AFTER UPDATE OF state ON transfers WHEN OLD.state IS NOT NEW.state BEGIN
    INSERT INTO audit_log (at, kind, transfer_id, actor, detail) VALUES (NEW.updated_at, 'transfer.' || NEW.state, NEW.id,
      CASE WHEN NEW.approval_decided_by IS NOT OLD.approval_decided_by THEN NEW.approval_decided_by END,
      json_object('from', OLD.state, 'state', NEW.state, 'lane', NEW.lane, 'nonce', NEW.nonce, 'hash', NEW.hash, 'minedHash', NEW.mined_hash,
        'refusalCode', NEW.refusal_code, 'approvalDecidedBy', NEW.approval_decided_by));
  END;
  -- A claim nothing was signed for, dropped (its key freed for a retry that runs afresh). Settled transfers
  -- leave the journal only by retention or a working copy's forgetting: their entries stay, and say enough.
  CREATE TRIGGER IF NOT EXISTS transfers_audit_released AFTER DELETE ON transfers WHEN OLD.state IN ('claimed', 'awaiting-approval') BEGIN
    INSERT INTO audit_log (at, kind, transfer_id, actor, detail) VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'transfer.released', OLD.id, NULL,
      json_object('state', OLD.state));
  END;
  -- The same signed bytes again belong to the newest transfer (see insertAttempt): entered as its attempt.
  CREATE TRIGGER IF NOT EXISTS attempts_audit_moved AFTER UPDATE OF transfer_id ON attempts WHEN OLD.transfer_id IS NOT NEW.transfer_id BEGIN
    INSERT INTO audit_log (at, kind, transfer_id, actor, detail) VALUES (NEW.created_at, 'attempt.' || NEW.kind, NEW.transfer_id, NULL,
      json_object('hash', NEW.hash, 'signedAtBlock', NEW.signed_at_block, 'movedFrom', OLD.transfer_id));
  END;
  CREATE TRIGGER IF NOT EXISTS attempts_audit_signed AFTER INSERT ON attempts BEGIN
    INSERT INTO audit_log (at, kind, transfer_id, actor, detail) VALUES (NEW.created_at, 'attempt.' || NEW.kind, NEW.transfer_id, NULL,
      json_object('hash', NEW.hash, 'signedAtBlock', NEW.signed_at_block));
  END;
  -- Bytes a node refused for their nonce, dropped as the transfer is signed again at a fresh one (recordSigned):
  -- they can never be mined. Retention removes the attempts of settled transfers only, entered as journal.archived.
  CREATE TRIGGER IF NOT EXISTS attempts_audit_dropped AFTER DELETE ON attempts WHEN (SELECT state FROM transfers WHERE id = OLD.transfer_id) = 'signed' BEGIN
    INSERT INTO audit_log (at, kind, transfer_id, actor, detail) VALUES (CAST(unixepoch('subsec') * 1000 AS INTEGER), 'attempt.dropped', OLD.transfer_id, NULL,
      json_object('hash', OLD.hash, 'kind', OLD.kind));
  END;
`;

// The journal owner's network and token: those of every row made before rows recorded their own.
const OWNERS_CHAIN = `(SELECT replace(chain_id, '${SEVERAL_NETWORKS_MARK}', '') FROM journal_owner WHERE id = 1)`;
const OWNERS_TOKEN = "(SELECT token_address FROM journal_owner WHERE id = 1)";
/** Gives the rows without a network and token (made before they were recorded) the journal owner's. */
const OWNERS_NETWORK_AND_TOKEN = `UPDATE transfers SET chain_id = ${OWNERS_CHAIN}, token = ${OWNERS_TOKEN} WHERE chain_id IS NULL`;

// Journals written by earlier versions: answers of refusals were not kept, and "settled" meant what
// "nonce-used" says.
const MIGRATIONS = [
  "ALTER TABLE transfers ADD COLUMN refusal_code TEXT",
  "ALTER TABLE transfers ADD COLUMN refusal_message TEXT",
  "ALTER TABLE transfers ADD COLUMN mined_hash TEXT",
  "ALTER TABLE transfers ADD COLUMN notify INTEGER NOT NULL DEFAULT 0",
  "ALTER TABLE transfers ADD COLUMN reported TEXT",
  "ALTER TABLE transfers ADD COLUMN settled_block INTEGER",
  "ALTER TABLE transfers ADD COLUMN reported_block_hash TEXT",
  // Transfers settled before finality was followed are history: taken as final and verified, so that the
  // first round after an upgrade does not look through the whole chain for them.
  `ALTER TABLE transfers ADD COLUMN final_block INTEGER;
   UPDATE transfers SET settled_block = 0, final_block = 0 WHERE state IN ('nonce-used', 'cancelled', 'replaced')`,
  // Every transfer of a one-wallet journal was sent by the wallet it was made for: its first lane.
  `ALTER TABLE transfers ADD COLUMN lane TEXT;
   UPDATE transfers SET lane = (SELECT wallet_address FROM journal_owner WHERE id = 1)`,
  // The network (chain id) and token of each transfer: a journal of one network and token had them in its owner.
  `ALTER TABLE transfers ADD COLUMN chain_id TEXT;
   ALTER TABLE transfers ADD COLUMN token TEXT;
   ${OWNERS_NETWORK_AND_TOKEN}`,
  // A payout batch's items (journal-rows' payoutAsText).
  "ALTER TABLE transfers ADD COLUMN payout TEXT",
  // Two-person approval (APPROVAL_ABOVE): until when a transfer waits for one (null for a transfer that
  // needed none), and the admin key that decided it, and when.
  "ALTER TABLE transfers ADD COLUMN approval_expires_at INTEGER",
  "ALTER TABLE transfers ADD COLUMN approval_decided_by TEXT",
  "ALTER TABLE transfers ADD COLUMN approval_decided_at INTEGER",
  "ALTER TABLE wallet_outflows ADD COLUMN log_key TEXT",
  // What displaced a transfer (a StoredDisplacement as JSON): a restart goes on from it.
  "ALTER TABLE transfers ADD COLUMN displacement TEXT",
  // Where the network's outflow watch got to (an OutflowWatchProgress as JSON): a restart goes on from it.
  "ALTER TABLE outflow_watch_starts ADD COLUMN progress TEXT",
  // The first audit entry sealed with AUDIT_KEY_FILE's key: kept here too, since retention archives the entry.
  "ALTER TABLE journal_owner ADD COLUMN audit_keyed_from INTEGER",
];
/**
 * A token outflow is reported once per transaction and log key, wherever a reorganisation mines it (its log
 * index moves). Rows without a log key (the transaction itself, an earlier version's) are never equal here.
 */
const OUTFLOW_LOG_KEY_INDEX = "CREATE UNIQUE INDEX IF NOT EXISTS wallet_outflows_once_by_log_key ON wallet_outflows (chain_id, hash, log_key)";
/** Transfers that wait for an admin's approval: few (APPROVALS_AWAITING_MAX), listed and expired along the first index. */
const AWAITING_APPROVAL_INDEX = `
  CREATE INDEX IF NOT EXISTS transfers_awaiting_approval ON transfers (approval_expires_at, id) WHERE state = 'awaiting-approval';
  -- Approved transfers count against the per-key cap from their approval (spentSince).
  CREATE INDEX IF NOT EXISTS transfers_approval_decided ON transfers (approval_decided_at) WHERE approval_decided_at IS NOT NULL;
`;
/**
 * The version of the indexes below and HISTORY_INDEXES: a journal whose indexes are of another version has
 * them made again (once). Raise it with any change to an index's definition.
 */
const INDEXES_VERSION = 2;
const UNSETTLED_INDEX = `
  DROP INDEX IF EXISTS transfers_unsettled;
  CREATE INDEX transfers_unsettled ON transfers (lane, state, nonce) WHERE state IN ('claimed', 'signed', 'accepted');
  DROP INDEX IF EXISTS transfers_unreported;
  CREATE INDEX transfers_unreported ON transfers (lane, nonce) WHERE notify = 1 AND (reported IS NULL OR reported NOT IN ('transfer.confirmed', 'transfer.failed', 'transfer.cancelled', 'transfer.finalized'));
  -- Settled transfers not final yet, per lane: what the finality tracker follows.
  DROP INDEX IF EXISTS transfers_unfinal;
  CREATE INDEX transfers_unfinal ON transfers (lane, settled_block) WHERE final_block IS NULL AND state IN ('nonce-used', 'cancelled', 'replaced');
  -- Final transfers whose finality is not reported yet: the outcome reported, its finality not.
  DROP INDEX IF EXISTS transfers_finality_unreported;
  CREATE INDEX transfers_finality_unreported ON transfers (lane, nonce) WHERE notify = 1 AND reported IN ('transfer.confirmed', 'transfer.failed', 'transfer.cancelled');
  -- Which nonces of a lane the journal holds: the outflow watch asks for each nonce the chain counts.
  DROP INDEX IF EXISTS transfers_lane_nonce;
  CREATE INDEX transfers_lane_nonce ON transfers (lane, chain_id, nonce) WHERE nonce IS NOT NULL;
`;
// Rows an earlier version wrote after this one had run (a rollback, or an older leader of several replicas)
// have no lane: that version served one wallet, the journal's first.
const LANES_OF_EARLIER_VERSIONS = "UPDATE transfers SET lane = (SELECT wallet_address FROM journal_owner WHERE id = 1) WHERE lane IS NULL";
// Before attempts existed, a transfer's one transaction lived in its own row; its block is not known (0:
// it counts as waiting since long ago).
const ATTEMPTS_OF_EARLIER_VERSIONS = `
  INSERT INTO attempts (transfer_id, hash, raw_transaction, kind, signed_at_block, created_at)
  SELECT id, hash, raw_transaction, 'transfer', 0, created_at FROM transfers WHERE hash IS NOT NULL;
  PRAGMA user_version = 1;
`;

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
  db.exec(SCHEMA);
  db.exec(ADDRESS_BOOK_SCHEMA);
  addColumns(db);
  db.exec(OUTFLOW_LOG_KEY_INDEX);
  allowEventsOfNoTransfer(db);
  // A leader's working copy is filled before its indexes are made: one build of each index is quicker
  // than keeping them all up to date through a million inserts.
  if (seed) seedTables(db, seed);
  // What the audit log holds before this open's upgrades of the rows (the file's triggers write their
  // entries): those are sealed at open, nothing from before, the shared database's included.
  const auditWrittenAfter = lastAuditEntry(db);
  makeIndexes(db);
  db.exec(AUDIT_TRIGGERS);
  const store = new SqliteJournalStore(db, notify, replica && new SqliteChangeLog(db, replica), { replica, elsewhere, auditKey });
  try {
    store.checkOwner(owner);
    db.exec(LANES_OF_EARLIER_VERSIONS);
    // Rows an earlier version wrote after this one had run (a rollback, an older leader) lack them too.
    db.exec(OWNERS_NETWORK_AND_TOKEN);
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

/**
 * An earlier version's webhook_events required a transfer id: the table is made again without that
 * constraint (SQLite cannot drop it in place), once, as SQLite's documented way to change a table goes:
 * foreign keys off, a new table filled from the old one, the old dropped, the new renamed, in one transaction.
 */
function allowEventsOfNoTransfer(db: Database.Database): void {
  const column = db.prepare("SELECT \"notnull\" FROM pragma_table_info('webhook_events') WHERE name = 'transfer_id'").pluck().get();
  if (column !== 1) return;
  db.exec("PRAGMA foreign_keys = OFF");
  try {
    db.exec(`BEGIN;
      CREATE TABLE webhook_events_without_constraint (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        transfer_id INTEGER REFERENCES transfers (id),
        type TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      INSERT INTO webhook_events_without_constraint (seq, id, transfer_id, type, body, created_at) SELECT seq, id, transfer_id, type, body, created_at FROM webhook_events;
      DROP TABLE webhook_events;
      ALTER TABLE webhook_events_without_constraint RENAME TO webhook_events;
      CREATE INDEX webhook_events_transfer ON webhook_events (transfer_id, seq);
      COMMIT;`);
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  } finally {
    db.exec("PRAGMA foreign_keys = ON");
  }
}

/** Adds the columns an earlier version's journal lacks (a column that exists already is fine). */
function addColumns(db: Database.Database): void {
  for (const migration of MIGRATIONS) {
    try {
      db.exec(`BEGIN; ${migration}; COMMIT`);
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      if (!/duplicate column name/.test((error as Error).message)) throw error;
    }
  }
}

/**
 * Makes the indexes of this version, once: a journal whose indexes are of INDEXES_VERSION already keeps
 * them (remaking them at every start read the whole table, more than a second at a million transfers).
 */
function makeIndexes(db: Database.Database): void {
  db.exec("CREATE TABLE IF NOT EXISTS journal_indexes (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)");
  const indexesVersion = db.prepare("SELECT version FROM journal_indexes WHERE id = 1").pluck();
  if (indexesVersion.get() !== INDEXES_VERSION) {
    db.exec(`BEGIN; ${UNSETTLED_INDEX} ${HISTORY_INDEXES} INSERT OR REPLACE INTO journal_indexes (id, version) VALUES (1, ${INDEXES_VERSION}); COMMIT`);
  }
  db.exec(NETWORK_HISTORY_INDEXES);
  db.exec(AWAITING_APPROVAL_INDEX);
  // Earlier versions' index of the current hash: nothing reads along it (a hash is looked up among the
  // attempts), and its random keys cost every commit a page per transfer signed.
  db.exec("DROP INDEX IF EXISTS transfers_hash");
  // Rows an old version may still write (a rollback): found through the state index.
  db.exec("UPDATE transfers SET state = 'nonce-used' WHERE state = 'settled'");
}

/** Idempotency keys forgotten per call of expireKeys: a backlog goes in later calls (a key may outlive its lifetime, never the reverse). */
export const KEYS_EXPIRED_PER_CALL = 2_000;

/**
 * The database under every lane's journal object: one connection, one group commit, one failure. Lanes
 * share it, so that a key claimed in one lane is seen by all, and a commit holds the writes of every lane.
 */
class SqliteJournalStore {
  readonly db: Database.Database;
  readonly statements: JournalStatements;
  // Group commit: writes of one event-loop turn share a transaction and so a single fsync.
  #pendingCommit: Promise<void> | undefined;
  #failure: JournalUnavailableError | undefined;
  // The commit itself succeeded and only shipping it to the shared database failed: what the database
  // holds then is a fact to look up, not a loss to assume.
  #shippingFailed = false;
  // A COMMIT failed after it may have written its transaction to the WAL (see #commit).
  #commitMayBeOnDisk = false;
  // Every hash of the transfers that have several attempts: few, and asked about by every lookup.
  readonly severalAttemptHashes = new Set<string>();
  // The last audit entry before the transaction under way: the service seals only entries after it.
  #auditWrittenAfter = 0;
  /** Where the working copy's walk for transfers it need not hold goes on from (see forgetSettledForGood). */
  evictionCursor = { createdAt: -1, id: -1 };
  // 1 when webhooks report on the transfers made from now on.
  readonly notify: number;
  // Ships each commit to the shared database, when there is one.
  readonly #changeLog: SqliteChangeLog | undefined;
  readonly history: SqliteHistoryReader;

  /** The shared database this journal is the working copy of, if any: retention archives there. */
  readonly replica: JournalReplica | undefined;
  /** What the working copy does not hold, read from the shared database. */
  readonly elsewhere: JournalElsewhere | undefined;
  readonly #auditKey: AuditKey | undefined;
  /** ADDRESS_BOOK's entries, held in memory; each change written in the shared transaction with its audit entry. */
  readonly addressBook: SqliteAddressBook;

  constructor(db: Database.Database, notify: boolean, changeLog: SqliteChangeLog | undefined, parts: Pick<SqliteJournalOptions, "replica" | "elsewhere" | "auditKey">) {
    this.db = db;
    this.replica = parts.replica;
    this.elsewhere = parts.elsewhere;
    this.#auditKey = parts.auditKey;
    this.notify = notify ? 1 : 0;
    this.#changeLog = changeLog;
    this.statements = prepareStatements(db);
    this.history = new SqliteHistoryReader(db);
    this.addressBook = new SqliteAddressBook(db, {
      write: (statement) => this.write(statement),
      audit: (kind, actor, detail) => this.statements.insertAudit.run({ at: steadyWallClockNow(), kind, transferId: null, actor, detail: JSON.stringify(detail) }),
    }, parts.auditKey);
    if (this.statements.userVersion.pluck().get() === 0) db.exec(ATTEMPTS_OF_EARLIER_VERSIONS);
    for (const hash of this.statements.severalAttemptHashes.pluck().all() as string[]) this.severalAttemptHashes.add(hash);
  }

  /** Records the owner in a new journal; refuses a journal of another token or chain. */
  checkOwner(owner: JournalOwner): void {
    const chain = owner.chainId.toString();
    const expected = { chain_id: owner.severalNetworks ? `${chain}${SEVERAL_NETWORKS_MARK}` : chain, wallet_address: owner.walletAddress, token_address: owner.tokenAddress };
    const stored = this.statements.owner.get() as typeof expected | undefined;
    if (!stored) {
      this.statements.insertOwner.run(expected);
      return;
    }
    if (ownersChainOf(stored.chain_id) !== chain || stored.token_address !== expected.token_address) {
      throw new JournalOwnerMismatchError(`JOURNAL_PATH: this journal belongs to token ${stored.token_address} on chain ${ownersChainOf(stored.chain_id)}; use another file`);
    }
    // Once marked, for good: a journal that held another network's transfers keeps them.
    if (owner.severalNetworks && stored.chain_id === chain) this.statements.markOwner.run(expected);
  }

  get failure(): JournalUnavailableError | undefined {
    return this.#failure;
  }

  /**
   * Whether its rows are what a restart (or the next leader) finds: alone on its disk, a commit that failed
   * was rolled back. A working copy's commit may have failed to ship, and its rows then say more than the
   * shared database knows.
   */
  get rowsAreTheRecord(): boolean {
    return !this.#changeLog;
  }

  async wasRecorded(hash: string): Promise<boolean | undefined> {
    if (!this.#failure) return this.statements.attemptByHash.get(hash.toLowerCase()) !== undefined;
    // Rolled back here, maybe committed on disk: a restart may find it and send it, or not.
    if (this.#commitMayBeOnDisk && !this.#changeLog) return undefined;
    // A failed local commit was rolled back: nothing of it is anywhere.
    if (!this.#shippingFailed || !this.#changeLog) return false;
    // Of this transfer: the same bytes may be an older transfer's attempt in the database (see insertAttempt).
    const attempt = this.statements.attemptByHash.get(hash.toLowerCase()) as AttemptRow | undefined;
    return attempt ? this.#changeLog.holds(hash.toLowerCase(), attempt.transfer_id) : false;
  }

  flushed(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    // A commit made is durable only once shipped, when there is a shared database.
    return this.#pendingCommit ?? this.#changeLog?.lastShipment ?? Promise.resolve();
  }

  // Opens the shared transaction on the first write of a turn and commits it once the turn is over.
  write<T>(statement: () => T): T {
    if (this.#failure) throw this.#failure;
    if (!this.#pendingCommit) {
      this.db.exec("BEGIN IMMEDIATE");
      this.#auditWrittenAfter = (this.statements.lastAuditSeq.get() as number | undefined) ?? 0;
      this.#pendingCommit = new Promise<void>((resolve, reject) =>
        setImmediate(() => {
          this.#pendingCommit = undefined;
          if (!this.db.open) return resolve();
          if (this.#failure) return reject(this.#failure);
          try {
            this.#sealAudit();
            this.#commit();
            if (!this.#changeLog) return resolve();
            // Taken right after the commit, before any later write: only committed rows leave the process.
            this.#changeLog.shipCommitted().then(resolve, (error: unknown) => {
              if (!this.#failure) this.#shippingFailed = true;
              this.#failure ??= new JournalUnavailableError(error);
              reject(this.#failure);
            });
          } catch (error) {
            this.#rollBack();
            // Whatever this turn wrote is gone, and the service may already have acted on it in memory:
            // from now on nothing is written, so nothing can be broadcast without its record.
            this.#failure = new JournalUnavailableError(error);
            reject(this.#failure);
          }
        }),
      );
      // A failed commit must reach the writer awaiting flushed(), not crash the process meanwhile.
      this.#pendingCommit.catch(() => undefined);
    }
    try {
      return statement();
    } catch (error) {
      // A statement that fails (SQLITE_FULL, I/O) fails the whole shared transaction.
      if (error instanceof JournalWriteError) throw error;
      this.#failure = new JournalUnavailableError(error);
      this.#rollBack();
      throw this.#failure;
    }
  }

  // SQLite rolls a COMMIT that failed at the disk back in memory only. A full disk stops it before its
  // commit frame reaches the WAL; any other failure (a failed sync above all) may have left the frames whole
  // there, and a restart's recovery then finds the transaction committed.
  #commit(): void {
    try {
      this.db.exec("COMMIT");
    } catch (error) {
      if ((error as { code?: unknown }).code !== "SQLITE_FULL") this.#commitMayBeOnDisk = true;
      throw error;
    }
  }

  // A rollback that fails too must not escape the commit's callback and stop the process: the journal is
  // failed already, and takes no more writes.
  #rollBack(): void {
    try {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
    } catch {
      // Nothing more to undo from here; the failure is reported through flushed().
    }
  }

  // Chains the audit entries this transaction made to the last sealed one, in order, before the commit: an
  // entry is never committed without its hash. One without its hash from before is not the service's to seal.
  #sealAudit(): void {
    const unsealed = this.statements.unsealedAudit.all() as AuditRow[];
    if (unsealed.length === 0) return;
    if (unsealed[0].seq <= this.#auditWrittenAfter) throw new AuditEntryUnsealedError(unsealed[0].seq);
    let previous = (this.statements.lastAuditHash.get() as string | undefined) ?? AUDIT_GENESIS;
    for (const row of unsealed) {
      const hash = auditEntryHash(previous, row, this.#auditKey);
      this.statements.sealAudit.run({ seq: row.seq, previous, hash });
      previous = hash;
    }
  }

  /** Deletes transfers (a JSON array of ids) and everything of theirs; call it inside write(). */
  forget(ids: string): void {
    for (const row of this.statements.attemptsOfEach.all(ids) as AttemptRow[]) this.severalAttemptHashes.delete(row.hash);
    this.statements.forgetDeliveries.run(ids);
    this.statements.forgetEvents.run(ids);
    this.statements.forgetAttempts.run(ids);
    this.statements.forgetTransfers.run(ids);
  }

  /** Runs `change` inside write() without shipping it (see SqliteChangeLog.unshipped); undefined when it cannot now. */
  unshipped<T>(change: () => T): T | undefined {
    return this.#changeLog ? this.#changeLog.unshipped(change) : undefined;
  }

  // A write by id must change exactly that entry.
  writeOne(description: string, statement: () => Database.RunResult): void {
    const { changes } = this.write(statement);
    if (changes !== 1) throw new JournalWriteError(`journal: ${description} changed ${changes} entries instead of 1`);
  }

  attemptsOf(entryId: number): JournalAttempt[] {
    return (this.statements.attemptsOf.all(entryId) as AttemptRow[]).map(toAttempt);
  }

  /** The attempts of each of these entries, in one read. */
  attemptsOfEach(entryIds: readonly number[]): Map<number, JournalAttempt[]> {
    const rows = this.statements.attemptsOfEach.all(JSON.stringify(entryIds)) as AttemptRow[];
    return groupBy(rows, (row) => row.transfer_id, toAttempt);
  }

  close(): void {
    if (!this.db.open) return;
    if (this.db.inTransaction && !this.#failure) {
      this.#sealAudit();
      this.db.exec("COMMIT");
    }
    this.db.close();
  }

  /**
   * At open, before anything else: seals the entries this open's upgrades of the file wrote (after
   * `writtenAfter`, the last entry when the file was opened); one from before without its hash refuses the
   * open (AuditEntryUnsealedError).
   */
  sealOpeningEntries(writtenAfter: number): void {
    // With a key after entries sealed without one, the first entry sealed with it says so (AuditKeyError
    // when the last entry was sealed with another key, or with one while none is set: nothing starts).
    const last = this.statements.lastSealedAudit.get() as AuditRow | undefined;
    const sealing = sealingAfter(last, this.#auditKey);
    // Sealed with the key once, sealed without it at the end: entries were written after it without the key.
    const keyedFrom = sealing === "begin keyed" ? ((this.statements.firstKeyedAudit.get() as number | undefined) ?? (this.statements.ownerKeyedFrom.get() as number | null) ?? undefined) : undefined;
    if (keyedFrom !== undefined) {
      throw new AuditKeyError(
        `the audit log was sealed with a key from entry ${keyedFrom} on, and its last entry ${last?.seq} was sealed without one: entries after it were written without the key (someone with the database). Check it with npm run audit:verify and AUDIT_KEY_FILE`,
      );
    }
    this.db.exec("BEGIN IMMEDIATE");
    this.#auditWrittenAfter = writtenAfter;
    try {
      if (sealing === "begin keyed") {
        const detail = JSON.stringify({ keyId: auditKeyId(this.#auditKey as AuditKey) });
        const marker = this.statements.insertAudit.run({ at: steadyWallClockNow(), kind: AUDIT_KEYED_KIND, transferId: null, actor: null, detail });
        this.statements.markKeyedFrom.run(Number(marker.lastInsertRowid));
      }
      this.#sealAudit();
      this.db.exec("COMMIT");
    } catch (error) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      throw error;
    }
  }
}

/** Which network (chain id, decimal) and token a view's transfers are made on and followed on. */
interface ViewNetwork {
  chain: string;
  token: string;
}

/**
 * The journal as one lane of one network sees it: its own transfers to make and follow (a wallet has a
 * nonce sequence per chain), and every lane's and network's keys, hashes and events.
 */
class SqliteTransferJournal implements TransferJournal {
  readonly #store: SqliteJournalStore;
  readonly #network: ViewNetwork;
  // The journal openSqliteJournal returned owns the database; a lane's view of it does not.
  readonly #ownsStore: boolean;

  constructor(
    store: SqliteJournalStore,
    readonly lane: string,
    network: ViewNetwork,
    ownsStore = true,
  ) {
    this.#store = store;
    this.#network = network;
    this.#ownsStore = ownsStore;
  }

  get addressBook(): AddressBook {
    return this.#store.addressBook;
  }

  forLane(walletAddress: string): TransferJournal {
    return new SqliteTransferJournal(this.#store, walletAddress, this.#network, false);
  }

  forNetwork(chainId: bigint, tokenAddress: string): TransferJournal {
    return new SqliteTransferJournal(this.#store, this.lane, { chain: chainId.toString(), token: tokenAddress }, false);
  }

  /** The statement parameters that name this view's lane on its network. */
  get #laneOnNetwork(): { lane: string; chain: string } {
    return { lane: this.lane, chain: this.#network.chain };
  }

  get failure(): JournalUnavailableError | undefined {
    return this.#store.failure;
  }

  wasRecorded(hash: string): Promise<boolean | undefined> {
    return this.#store.wasRecorded(hash);
  }

  flushed(): Promise<void> {
    return this.#store.flushed();
  }

  findByKey(key: string): JournalEntry | undefined {
    const row = this.#store.statements.byKey.get(key) as EntryRow | undefined;
    return row && toEntry(row, this.#store.attemptsOf(row.id));
  }

  claimKey(key: string, request: TransferRequest): KeyClaim {
    return this.#claim(key, request, null);
  }

  requestApproval(key: string | undefined, request: TransferRequest, expiresAt: number): KeyClaim {
    return this.#claim(key ?? null, request, expiresAt);
  }

  // A new entry, claimed (or waiting for its approval until `approvalExpiresAt`), or the one that holds `key`.
  #claim(key: string | null, request: TransferRequest, approvalExpiresAt: number | null): KeyClaim {
    // A journal that takes no writes still knows its keys: a repeat gets its first answer, not a 503 that
    // says nothing was done (the claim's write would throw). Not a working copy's: see rowsAreTheRecord.
    if (key !== null && this.#store.failure && this.#store.rowsAreTheRecord) {
      const held = this.#store.statements.byKey.get(key) as EntryRow | undefined;
      if (held) return { outcome: "existing", entry: toEntry(held, this.#store.attemptsOf(held.id)) };
    }
    const now = steadyWallClockNow();
    const { payout } = request;
    const inserted = this.#store.write(() =>
      this.#store.statements.claim.run({
        key,
        recipient: request.recipient,
        units: request.units.toString(),
        apiKeyId: request.apiKeyId ?? null,
        state: approvalExpiresAt === null ? "claimed" : "awaiting-approval",
        approvalExpiresAt,
        notify: this.#store.notify,
        ...this.#network,
        token: request.token ?? this.#network.token,
        payout: payout ? payoutAsText(payout) : null,
        lane: this.lane,
        now,
      }),
    );
    if (inserted.changes === 1) {
      const entryId = Number(inserted.lastInsertRowid);
      if (payout) this.#takePayoutItems(entryId, request.apiKeyId ?? "", payout);
      return { outcome: "claimed", entryId };
    }
    const row = this.#store.statements.byKey.get(key) as EntryRow;
    return { outcome: "existing", entry: toEntry(row, this.#store.attemptsOf(row.id)) };
  }

  awaitingApproval(limit: number): JournalEntry[] {
    return (this.#store.statements.awaitingApproval.all(limit) as EntryRow[]).map((row) => toEntry(row, []));
  }

  awaitingApprovalCount(apiKeyId?: string): number {
    const { statements } = this.#store;
    return (apiKeyId === undefined ? statements.awaitingApprovalCount.get() : statements.awaitingApprovalCountOf.get(apiKeyId)) as number;
  }

  restateRefusal(entryId: number, refusal: RecordedRefusal): boolean {
    const restated = this.#store.write(() => this.#store.statements.restateRefusal.run({ id: entryId, ...refusal, now: steadyWallClockNow() })).changes === 1;
    if (restated) this.recordAudit({ kind: "transfer.refusal_restated", actor: null, transferId: entryId, detail: { refusalCode: refusal.code } });
    return restated;
  }

  takeApproved(entryId: number, by: string, at: number): boolean {
    const { statements } = this.#store;
    return this.#store.write(() => statements.takeApproved.run({ id: entryId, lane: this.lane, chain: this.#network.chain, by, at, now: steadyWallClockNow() })).changes === 1;
  }

  returnToApproval(entryId: number): boolean {
    return this.#store.write(() => this.#store.statements.returnToApproval.run({ id: entryId, now: steadyWallClockNow() })).changes === 1;
  }

  refuseApproval(entryId: number, by: string, at: number, refusal: RecordedRefusal): boolean {
    const { statements } = this.#store;
    const refused = this.#store.write(() => statements.refuseApproval.run({ id: entryId, by, at, ...refusal, now: steadyWallClockNow() })).changes === 1;
    // Nothing of the batch was sent: its item ids may be paid by another.
    if (refused) this.#store.write(() => statements.freePayoutItems.run(entryId));
    return refused;
  }

  // In the claim's own write: the ids are the batch's from the moment it exists, or it does not exist.
  #takePayoutItems(entryId: number, apiKey: string, payout: PayoutOrder): void {
    const { statements } = this.#store;
    const paid = payout.items.filter((item) => item.duplicateOf === undefined).map((item) => item.id);
    const taken = paid.filter((itemId) => statements.payoutItemHolder.get(apiKey, itemId) !== undefined);
    if (taken.length > 0) {
      this.#store.writeOne(`withdrawing the claim of entry ${entryId}`, () => statements.deleteClaim.run(entryId));
      throw new PayoutItemsTakenError(taken);
    }
    for (const itemId of paid) this.#store.write(() => statements.takePayoutItem.run(apiKey, itemId, entryId));
  }

  recordOutflow(outflow: StoredOutflow): boolean {
    const { changes } = this.#store.write(() => this.#store.statements.insertOutflow.run({ ...outflow, logIndex: outflow.logIndex ?? -1 }));
    return changes === 1;
  }

  outflowWatchStart(): number | undefined {
    return (this.#store.statements.outflowWatchStart.get(Number(this.#laneOnNetwork.chain)) as number | undefined) ?? undefined;
  }

  recordOutflowWatchStart(block: number): void {
    this.#store.write(() => this.#store.statements.insertOutflowWatchStart.run(Number(this.#laneOnNetwork.chain), block));
  }

  outflowWatchProgress(): OutflowWatchProgress | undefined {
    const kept = this.#store.statements.outflowWatchProgress.get(Number(this.#laneOnNetwork.chain)) as string | null | undefined;
    return kept ? (JSON.parse(kept) as OutflowWatchProgress) : undefined;
  }

  recordOutflowWatchProgress(progress: OutflowWatchProgress): void {
    const row = { chain: Number(this.#laneOnNetwork.chain), logsReadTo: progress.logsReadTo, progress: JSON.stringify(progress) };
    this.#store.write(() => this.#store.statements.keepOutflowWatchProgress.run(row));
  }

  signingPause(): StoredSigningPause | undefined {
    return this.#store.statements.signingPause.get() as StoredSigningPause | undefined;
  }

  recordSigningPaused(pause: StoredSigningPause): void {
    const { statements } = this.#store;
    this.recordAudit({ kind: "wallet.signing_paused", actor: null, detail: { ...pause } });
    if (this.#store.write(() => statements.updateSigningPause.run(pause)).changes > 0) return;
    this.#store.writeOne("recording a signing pause", () => statements.insertSigningPause.run(pause));
  }

  recordSigningResumed(by: string, at: number): void {
    if (this.#store.write(() => this.#store.statements.resumeSigning.run({ by, at })).changes > 0) {
      this.recordAudit({ kind: "operator.resume_signing", actor: by, detail: { at } });
    }
  }

  recordAudit(entry: AuditEntry): void {
    const { kind, actor, transferId = null, detail } = entry;
    this.#store.write(() => this.#store.statements.insertAudit.run({ at: steadyWallClockNow(), kind, transferId, actor, detail: JSON.stringify(detail) }));
  }

  auditHead(): AuditRow | undefined {
    return this.#store.statements.lastSealedAudit.get() as AuditRow | undefined;
  }

  async auditEntries(cursor: AuditCursor, limit: number): Promise<AuditRow[]> {
    const { elsewhere, statements } = this.#store;
    if (!elsewhere) return ("after" in cursor ? statements.auditAfter.all({ ...cursor, limit }) : statements.auditBefore.all({ ...cursor, limit })) as AuditRow[];
    // The shared database holds the whole log once this copy's commits are shipped there.
    await this.flushed();
    return elsewhere.auditEntries(cursor, limit);
  }

  async payoutItemsHeld(apiKeyId: string, itemIds: readonly string[]): Promise<Map<string, number>> {
    const held = new Map<string, number>();
    for (const itemId of itemIds) {
      const holder = this.#store.statements.payoutItemHolder.get(apiKeyId, itemId) as number | undefined;
      if (holder !== undefined) held.set(itemId, holder);
    }
    // A working copy holds the ids of the batches it holds; the shared database has every one. An id it
    // has not is taken by no batch but through this leader's own claims, which the claim checks again.
    const { elsewhere } = this.#store;
    const missing = itemIds.filter((itemId) => !held.has(itemId));
    if (elsewhere && missing.length > 0) for (const [itemId, holder] of await elsewhere.payoutItemsHeld(apiKeyId, missing)) held.set(itemId, holder);
    return held;
  }

  recordSigned(entryId: number | undefined, request: TransferRequest, signed: SignedTransfer): number {
    const { nonce, hash, rawTransaction, signedAtBlock, kind = "transfer" } = signed;
    const values = { nonce, hash, rawTransaction, now: steadyWallClockNow() };
    let id: number;
    if (entryId !== undefined) {
      this.#store.writeOne(`signing entry ${entryId}`, () => this.#store.statements.updateSigned.run({ ...values, id: entryId }));
      this.#store.write(() => this.#store.statements.dropAttempts.run(entryId));
      id = entryId;
    } else {
      const inserted = this.#store.write(() =>
        // A nonce filler or a gas top-up (0 units) is no client's transfer: webhooks do not report it.
        this.#store.statements.insertSigned.run({ ...values, ...this.#network, token: request.token ?? this.#network.token, lane: this.lane, recipient: request.recipient, units: request.units.toString(), apiKeyId: request.apiKeyId ?? null, notify: request.units > 0n ? this.#store.notify : 0 }),
      );
      id = Number(inserted.lastInsertRowid);
    }
    this.#insertAttempt(id, { hash, rawTransaction, kind, signedAtBlock });
    return id;
  }

  recordAttempt(entryId: number, attempt: Omit<JournalAttempt, "createdAt">): void {
    this.#insertAttempt(entryId, attempt);
    const attempts = this.#store.attemptsOf(entryId);
    if (attempts.length > 1) for (const { hash } of attempts) this.#store.severalAttemptHashes.add(hash);
  }

  recordMined(entryId: number, hash: string): void {
    this.#store.writeOne(`marking ${hash} mined for entry ${entryId}`, () => this.#store.statements.setMined.run({ id: entryId, hash, now: steadyWallClockNow() }));
  }

  recordAccepted(entryId: number): boolean {
    return this.#setStateFrom(entryId, "accepted", ["signed"]);
  }

  recordRefused(entryId: number, refusal: RecordedRefusal): void {
    this.#store.writeOne(`refusing entry ${entryId}`, () => this.#store.statements.setRefusal.run({ id: entryId, state: "refused", from: "claimed", ...refusal, now: steadyWallClockNow() }));
    this.#store.write(() => this.#store.statements.freePayoutItems.run(entryId));
  }

  recordRejected(entryId: number, refusal: RecordedRefusal): void {
    this.#store.writeOne(`rejecting entry ${entryId}`, () => this.#store.statements.setRefusal.run({ id: entryId, state: "rejected", from: "signed", ...refusal, now: steadyWallClockNow() }));
    this.#store.write(() => this.#store.statements.freePayoutItems.run(entryId));
  }

  recordReplaced(entryId: number): boolean {
    return this.#setStateFrom(entryId, "replaced", ["signed", "accepted", "nonce-used"]);
  }

  recordDisplacement(entryId: number, displacement: StoredDisplacement | null): void {
    const text = displacement && JSON.stringify({ by: displacement.by, block: { number: displacement.block.number, hash: displacement.block.hash }, nonce: displacement.nonce });
    this.#store.writeOne(`recording what displaced entry ${entryId}`, () => this.#store.statements.setDisplacement.run({ id: entryId, displacement: text, now: steadyWallClockNow() }));
  }

  recordSignedAgain(entryId: number, signed: SignedTransfer): void {
    const { nonce, hash, rawTransaction, signedAtBlock, kind = "transfer" } = signed;
    this.#store.writeOne(`signing entry ${entryId} again at nonce ${nonce}`, () => this.#store.statements.setNewNonce.run({ id: entryId, nonce, now: steadyWallClockNow() }));
    this.#insertAttempt(entryId, { hash, rawTransaction, kind, signedAtBlock });
    for (const { hash: attemptHash } of this.#store.attemptsOf(entryId)) this.#store.severalAttemptHashes.add(attemptHash);
  }

  // Changes the state only from one of `from`; whether it did. An entry that does not exist is an error.
  #setStateFrom(entryId: number, state: JournalEntry["state"], from: JournalEntry["state"][]): boolean {
    const { changes } = this.#store.write(() => this.#store.statements.setStateFrom.run({ id: entryId, state, from: JSON.stringify(from), now: steadyWallClockNow() }));
    if (changes === 0 && !this.#store.statements.byId.get(entryId)) throw new JournalWriteError(`journal: marking entry ${entryId} ${state} found no such entry`);
    return changes === 1;
  }

  releaseKey(entryId: number): boolean {
    const released = this.#store.write(() => this.#store.statements.deleteClaim.run(entryId)).changes === 1;
    if (released) this.#store.write(() => this.#store.statements.freePayoutItems.run(entryId));
    return released;
  }

  markNonceUsedBelow(minedNonceCount: number): number {
    return this.#store.write(() => this.#store.statements.markNonceUsed.run({ ...this.#laneOnNetwork, count: minedNonceCount, now: steadyWallClockNow() })).changes;
  }

  markUnminedFrom(minedNonceCount: number, atBlock: number): number {
    return this.#store.write(() => this.#store.statements.markUnmined.run({ ...this.#laneOnNetwork, count: minedNonceCount, block: atBlock, now: steadyWallClockNow() })).changes;
  }

  markSettledAt(block: number, resettle = false): number {
    return this.#store.write(() => this.#store.statements.settleAt.run({ ...this.#laneOnNetwork, block, resettle: resettle ? 1 : 0, now: steadyWallClockNow() })).changes;
  }

  lowestUnfinalSettledBlock(): number | undefined {
    return (this.#store.statements.lowestUnfinalSettled.get(this.#laneOnNetwork) as number | null) ?? undefined;
  }

  hasUnfinal(): boolean {
    return this.#store.statements.hasUnfinal.get(this.#laneOnNetwork) !== undefined;
  }

  unfinal(): JournalEntry[] {
    return (this.#store.statements.unfinal.all(this.#laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.#store.attemptsOf(row.id)));
  }

  markUnmined(entryId: number): boolean {
    return this.#store.write(() => this.#store.statements.unmineOne.run({ id: entryId, now: steadyWallClockNow() })).changes === 1;
  }

  finalizeThrough(finalizedBlock: number): number {
    return this.#store.write(() => this.#store.statements.finalize.run({ ...this.#laneOnNetwork, finalized: finalizedBlock, now: steadyWallClockNow() })).changes;
  }

  finalizedUnreported(): JournalEntry[] {
    return (this.#store.statements.finalizedUnreported.all(this.#laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.#store.attemptsOf(row.id)));
  }

  usedUnverified(): JournalEntry[] {
    return (this.#store.statements.usedUnverified.all(this.#laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.#store.attemptsOf(row.id)));
  }

  lanesWithUnsettled(): string[] {
    return this.#store.statements.lanesWithUnsettled.all({ chain: this.#network.chain }) as string[];
  }

  networksWithUnsettled(): bigint[] {
    return (this.#store.statements.networksWithUnsettled.all() as string[]).map((chain) => BigInt(chain));
  }

  unsettled(): JournalEntry[] {
    const rows = this.#store.statements.unsettled.all(this.#laneOnNetwork) as EntryRow[];
    // By the entries' ids: a join from the attempts' side read every attempt of the history.
    const attempts = this.#store.attemptsOfEach(rows.map((row) => row.id));
    return rows.map((row) => toEntry(row, attempts.get(row.id) ?? []));
  }

  findById(entryId: number): JournalEntry | undefined {
    const row = this.#store.statements.byId.get(entryId) as EntryRow | undefined;
    return row && toEntry(row, this.#store.attemptsOf(row.id));
  }

  findByHash(hash: string): JournalEntry | undefined {
    const attempt = this.#store.statements.attemptByHash.get(hash.toLowerCase()) as AttemptRow | undefined;
    const row = attempt && (this.#store.statements.byId.get(attempt.transfer_id) as EntryRow | undefined);
    return row && toEntry(row, this.#store.attemptsOf(row.id));
  }

  #insertAttempt(entryId: number, attempt: Omit<JournalAttempt, "createdAt">): void {
    this.#store.writeOne(`adding an attempt to entry ${entryId}`, () =>
      this.#store.statements.insertAttempt.run({ transferId: entryId, ...attempt, now: steadyWallClockNow() }),
    );
  }

  async lookUpByHash(hash: string): Promise<JournalEntry | undefined> {
    return this.findByHash(hash) ?? this.#store.elsewhere?.findByHash(hash);
  }

  findWithSeveralAttempts(hash: string): JournalEntry | undefined | Promise<JournalEntry | undefined> {
    const lowercase = hash.toLowerCase();
    if (this.#store.severalAttemptHashes.has(lowercase)) return this.findByHash(lowercase);
    // A transfer held here is held with every attempt: one attempt of it is no re-priced transfer.
    const { elsewhere } = this.#store;
    return elsewhere && this.#store.statements.attemptByHash.get(lowercase) === undefined ? elsewhere.findWithSeveralAttempts(lowercase) : undefined;
  }


  async unjournaledNonces(nonces: readonly number[]): Promise<number[]> {
    const { lane, chain } = this.#laneOnNetwork;
    const held = new Set(this.#store.statements.noncesHeld.all({ lane, chain, nonces: JSON.stringify(nonces) }) as number[]);
    const missing = nonces.filter((nonce) => !held.has(nonce));
    // A working copy holds what is not settled for good: absence here is a question for the shared database.
    const { elsewhere } = this.#store;
    if (missing.length === 0 || !elsewhere) return missing;
    await this.flushed().catch(() => undefined);
    const heldThere = await elsewhere.noncesHeld(lane, chain, missing);
    return missing.filter((nonce) => !heldThere.has(nonce));
  }

  async highestNonce(): Promise<number | undefined> {
    const { lane, chain } = this.#laneOnNetwork;
    const here = this.#store.statements.highestNonce.get({ lane, chain }) as number | null;
    const there = this.#store.elsewhere ? await this.#store.elsewhere.highestNonce(lane, chain) : undefined;
    const highest = Math.max(here ?? -1, there ?? -1);
    return highest < 0 ? undefined : highest;
  }

  recordEvent(event: WebhookEventRecord, endpoints: readonly string[], reported?: TransferEventType, blockHash: string | null = null): void {
    const now = steadyWallClockNow();
    const { lastInsertRowid } = this.#store.write(() => this.#store.statements.insertEvent.run({ ...event, now }));
    for (const endpoint of endpoints) this.#store.write(() => this.#store.statements.insertDelivery.run({ seq: lastInsertRowid, endpoint, now }));
    if (reported) this.#store.writeOne(`reporting entry ${event.entryId}`, () => this.#store.statements.setReported.run({ id: event.entryId, reported, blockHash, now }));
  }

  unreportedSettled(): JournalEntry[] {
    return (this.#store.statements.unreportedSettled.all(this.#laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.#store.attemptsOf(row.id)));
  }

  reportedButUnmined(): JournalEntry[] {
    return (this.#store.statements.reportedButUnmined.all(this.#laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.#store.attemptsOf(row.id)));
  }

  dueDeliveries(now: number, limit: number, excludedIds: ReadonlySet<number>): (WebhookDelivery & { body: string })[] {
    const rows = this.#store.statements.dueDeliveries.all({ now, limit: limit + excludedIds.size }) as DeliveryRow[];
    return rows
      .filter((row) => !excludedIds.has(row.id))
      .slice(0, limit)
      .map((row) => ({ ...toDelivery(row), body: row.body as string }));
  }

  recordDeliveryAttempt(id: number, outcome: { state: DeliveryState; lastStatus: string; nextAttemptAt: number }): void {
    this.#store.writeOne(`recording delivery ${id}`, () => this.#store.statements.deliveryAttempt.run({ id, ...outcome, now: steadyWallClockNow() }));
  }

  async deliveries(state: DeliveryState | undefined, limit: number): Promise<WebhookDelivery[]> {
    const { elsewhere } = this.#store;
    // A working copy holds every undelivered delivery (see HOT_TRANSFERS), not every delivered one.
    if (elsewhere && (state === undefined || state === "delivered")) {
      await this.flushed().catch(() => undefined);
      return elsewhere.deliveries(state, limit);
    }
    if (state === undefined) return (this.#store.statements.latestDeliveries.all({ limit }) as DeliveryRow[]).map(toDelivery);
    return (this.#store.statements.deliveriesIn.all({ state, limit }) as DeliveryRow[]).map(toDelivery);
  }

  async deliveriesOf(entryId: number, limit: number): Promise<WebhookDelivery[]> {
    const { elsewhere } = this.#store;
    if (elsewhere && this.#store.statements.byId.get(entryId) === undefined) return elsewhere.deliveriesOf(entryId, limit);
    return (this.#store.statements.deliveriesOfTransfer.all({ entryId, limit }) as DeliveryRow[]).map(toDelivery);
  }

  retryDelivery(id: number): boolean {
    return this.#store.write(() => this.#store.statements.retryDelivery.run({ id, now: steadyWallClockNow() })).changes === 1;
  }

  deliveryBacklog(): { pending: number; oldestCreatedAt: number | null } {
    const row = this.#store.statements.backlog.get() as { pending: number; oldest: number | null };
    return { pending: row.pending, oldestCreatedAt: row.oldest };
  }

  async history(filter: HistoryFilter, beforeId: number | undefined, limit: number): Promise<HistoryPage> {
    const { elsewhere } = this.#store;
    if (elsewhere) {
      // What this copy committed is read there once shipped (a failed shipment: what the database holds).
      await this.flushed().catch(() => undefined);
      return elsewhere.history(filter, beforeId, limit);
    }
    const { rows, nextBefore } = this.#store.history.read(filter, beforeId, limit);
    const attempts = this.#store.attemptsOfEach(rows.map((row) => row.id));
    return { entries: rows.map((row) => toEntry(row, attempts.get(row.id) ?? [])), nextBefore };
  }

  spentSince(since: number): { apiKeyId: string; units: bigint; at: number }[] {
    const rows = this.#store.statements.spentSince.all({ since, ...this.#network }) as { api_key_id: string; units: string; at: number }[];
    return rows.map((row) => ({ apiKeyId: row.api_key_id, units: BigInt(row.units), at: row.at }));
  }

  madeSince(since: number, afterId: number | undefined, limit: number): { id: number; createdAt: number; state: JournalState }[] {
    const { statements } = this.#store;
    // Times rise with ids (HISTORY_TIMES_RISE): from the first id made since `since` on, by id.
    const from = afterId === undefined ? this.#store.history.firstIdAtOrAfter(since) : afterId + 1;
    if (from === undefined) return [];
    return (statements.madeFrom.all({ from, limit }) as { id: number; created_at: number; state: JournalState }[]).map((row) => ({
      id: row.id,
      createdAt: row.created_at,
      state: row.state,
    }));
  }

  releaseRefusedKey(entryId: number): boolean {
    const released = this.#store.write(() => this.#store.statements.releaseRefusedKey.run({ id: entryId, now: steadyWallClockNow() })).changes === 1;
    // In the same commit; the key itself stays out of the log (keys expire, the log does not).
    if (released) this.recordAudit({ kind: "transfer.key-released", actor: null, transferId: entryId, detail: {} });
    return released;
  }

  archivable(before: number, limit: number): ArchivedTransfer[] {
    const { statements } = this.#store;
    const transfers = statements.archivable.all({ before, limit }) as (EntryRow & { id: number })[];
    const ids = JSON.stringify(transfers.map((row) => row.id));
    type Row = Record<string, unknown>;
    const ofTransfer = (row: Row) => row.transfer_id as number;
    const attempts = groupBy(statements.attemptsOfEach.all(ids) as Row[], ofTransfer, (row) => row);
    const events = statements.eventsOfEach.all(ids) as Row[];
    const eventsByTransfer = groupBy(events, ofTransfer, (row) => row);
    const transferOfEvent = new Map(events.map((event) => [event.seq as number, event.transfer_id as number]));
    const deliveries = groupBy(statements.deliveriesOfEach.all(ids) as Row[], (row) => transferOfEvent.get(row.event_seq as number) as number, (row) => row);
    return transfers.map((transfer) => ({
      transfer: { ...transfer },
      attempts: attempts.get(transfer.id) ?? [],
      webhookEvents: eventsByTransfer.get(transfer.id) ?? [],
      webhookDeliveries: deliveries.get(transfer.id) ?? [],
    }));
  }

  get databaseArchive(): ((records: readonly ArchivedTransfer[]) => Promise<void>) | undefined {
    const { replica } = this.#store;
    return replica && ((records) => replica.archive(records));
  }

  async archiveSettledElsewhere(before: number): Promise<number> {
    const { replica, statements } = this.#store;
    if (!replica) return 0;
    return replica.archiveSettled(before, (ids) => new Set(statements.heldOf.all(JSON.stringify(ids)) as number[]));
  }

  archivableAudit(before: number, limit: number): AuditRow[] {
    const { replica, statements } = this.#store;
    if (replica) return [];
    // Never the last sealed entry: the next commit seals its entries from its hash (this turn's entries,
    // entered but not yet committed, are unsealed and do not count).
    const lastSealed = statements.lastSealedAuditSeq.get() as number | undefined;
    if (lastSealed === undefined) return [];
    const archivable: AuditRow[] = [];
    for (const row of statements.auditAfter.all({ after: 0, limit }) as AuditRow[]) {
      if (row.seq >= lastSealed || row.at >= before || row.hash === null) break;
      archivable.push(row);
    }
    return archivable;
  }

  forgetArchivedAudit(throughSeq: number): void {
    this.#store.write(() => this.#store.statements.forgetAuditThrough.run(throughSeq));
  }

  async archiveAuditElsewhere(before: number): Promise<{ count: number; last: AuditRow } | undefined> {
    return this.#store.replica?.archiveAudit(before);
  }

  forgetArchived(entryIds: readonly number[]): void {
    // A payout batch's item ids stay (payout_items): an archived batch still holds them.
    this.#store.write(() => this.#store.forget(JSON.stringify(entryIds)));
  }

  forgetSettledForGood(before: number, limit: number): { examined: number; forgotten: number } | undefined {
    const store = this.#store;
    if (!store.elsewhere) return { examined: 0, forgotten: 0 };
    return store.write(() =>
      store.unshipped(() => {
        const { createdAt, id } = store.evictionCursor;
        const rows = store.statements.coldFrom.all({ before, limit, afterCreated: createdAt, afterId: id }) as { id: number; created_at: number; cold: number }[];
        const cold = rows.filter((row) => row.cold === 1).map((row) => row.id);
        if (cold.length > 0) store.forget(JSON.stringify(cold));
        // The audit log is the shared database's once shipped: the copy keeps its last entry to chain on from.
        store.statements.forgetShippedAudit.run();
        const last = rows.at(-1);
        // Walked to the end: the next walk starts from the oldest again (what was held may be cold by then).
        store.evictionCursor = last && rows.length === limit ? { createdAt: last.created_at, id: last.id } : { createdAt: -1, id: -1 };
        return { examined: rows.length, forgotten: cold.length };
      }),
    );
  }

  expireKeys(maxAgeMs: number, now = steadyWallClockNow()): number {
    return this.#store.write(() => this.#store.statements.expireKeys.run({ cutoff: now - maxAgeMs, limit: KEYS_EXPIRED_PER_CALL })).changes;
  }

  close(): void {
    if (this.#ownsStore) this.#store.close();
  }
}

/** Rows read for several entries at once, by entry (each shaped by `shape`), in the order read. */
function groupBy<Row, Shaped>(rows: readonly Row[], entryOf: (row: Row) => number, shape: (row: Row) => Shaped): Map<number, Shaped[]> {
  const byEntry = new Map<number, Shaped[]>();
  for (const row of rows) {
    const entryId = entryOf(row);
    const group = byEntry.get(entryId);
    if (group) group.push(shape(row));
    else byEntry.set(entryId, [shape(row)]);
  }
  return byEntry;
}
