/**
 * The SQLite journal's tables, indexes and audit triggers, and the upgrades of files earlier versions wrote:
 * each step idempotent, so that every open runs them all.
 */
import type Database from "better-sqlite3";
import { ADDRESS_BOOK_SCHEMA } from "./approvals/sqlite-address-book.js";
import { HISTORY_INDEXES, NETWORK_HISTORY_INDEXES } from "./history/sqlite-history.js";
import { SEVERAL_NETWORKS_MARK } from "./journal-rows.js";

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
/**
 * Gives a journal without attempts (an earlier version's) one attempt per signed transfer: before attempts
 * existed, a transfer's one transaction lived in its own row; its block is not known (0: it counts as
 * waiting since long ago).
 */
export const ATTEMPTS_OF_EARLIER_VERSIONS = `
  INSERT INTO attempts (transfer_id, hash, raw_transaction, kind, signed_at_block, created_at)
  SELECT id, hash, raw_transaction, 'transfer', 0, created_at FROM transfers WHERE hash IS NOT NULL;
  PRAGMA user_version = 1;
`;

/** Creates what a file lacks of the tables (an earlier version's file is upgraded in place). */
export function createTables(db: Database.Database): void {
  db.exec(SCHEMA);
  db.exec(ADDRESS_BOOK_SCHEMA);
  addColumns(db);
  db.exec(OUTFLOW_LOG_KEY_INDEX);
  allowEventsOfNoTransfer(db);
}

/** The indexes (built once the rows are in) and the triggers that enter state changes in the audit log. */
export function createIndexesAndTriggers(db: Database.Database): void {
  makeIndexes(db);
  db.exec(AUDIT_TRIGGERS);
}

/** Rows an earlier version wrote (or still writes, after a rollback) get the lane and network this one reads. */
export function upgradeEarlierRows(db: Database.Database): void {
  db.exec(LANES_OF_EARLIER_VERSIONS);
  // Rows an earlier version wrote after this one had run (a rollback, an older leader) lack them too.
  db.exec(OWNERS_NETWORK_AND_TOKEN);
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
