/**
 * The PostgreSQL schema, as versioned SQL applied in order at startup. The journal's tables have the
 * SQLite journal's columns (the leader's working copy is shipped row by row); ids come from that copy.
 */
export const POSTGRES_MIGRATIONS: readonly { version: number; sql: string }[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE journal_owner (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        chain_id TEXT NOT NULL,
        wallet_address TEXT NOT NULL,
        token_address TEXT NOT NULL
      );
      CREATE TABLE transfers (
        id BIGINT PRIMARY KEY,
        idempotency_key TEXT,
        recipient TEXT NOT NULL,
        units TEXT NOT NULL,
        api_key_id TEXT,
        state TEXT NOT NULL,
        nonce BIGINT,
        hash TEXT,
        raw_transaction TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        refusal_code TEXT,
        refusal_message TEXT,
        mined_hash TEXT,
        notify INTEGER NOT NULL DEFAULT 0,
        reported TEXT,
        -- Checked at commit: within one shipped commit a key may move from an expired entry to a new one.
        CONSTRAINT transfers_idempotency_key UNIQUE (idempotency_key) DEFERRABLE INITIALLY DEFERRED
      );
      CREATE TABLE attempts (
        id BIGINT PRIMARY KEY,
        transfer_id BIGINT NOT NULL,
        hash TEXT NOT NULL,
        raw_transaction TEXT NOT NULL,
        kind TEXT NOT NULL,
        signed_at_block BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        CONSTRAINT attempts_hash UNIQUE (hash) DEFERRABLE INITIALLY DEFERRED
      );
      CREATE INDEX attempts_transfer ON attempts (transfer_id);
      CREATE TABLE webhook_events (
        seq BIGINT PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        transfer_id BIGINT NOT NULL,
        type TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE TABLE webhook_deliveries (
        id BIGINT PRIMARY KEY,
        event_seq BIGINT NOT NULL,
        endpoint TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_status TEXT,
        next_attempt_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      -- Who leads: the replica holding the advisory lock writes itself here, with a new epoch.
      CREATE TABLE leadership (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        epoch BIGINT NOT NULL,
        replica_id TEXT,
        url TEXT,
        since BIGINT
      );
      INSERT INTO leadership (id, epoch) VALUES (1, 0);
    `,
  },
  {
    // Finality: where a settled transfer was seen settled, and the finalized block that made it final.
    version: 2,
    sql: `
      ALTER TABLE transfers ADD COLUMN settled_block BIGINT;
      ALTER TABLE transfers ADD COLUMN reported_block_hash TEXT;
      ALTER TABLE transfers ADD COLUMN final_block BIGINT;
      UPDATE transfers SET settled_block = 0, final_block = 0 WHERE state IN ('nonce-used', 'cancelled', 'replaced');
    `,
  },
  {
    // Lanes of a wallet pool: each transfer's signing wallet. A one-wallet journal's are all its wallet's.
    version: 3,
    sql: `
      ALTER TABLE transfers ADD COLUMN lane TEXT;
      UPDATE transfers SET lane = (SELECT wallet_address FROM journal_owner WHERE id = 1);
    `,
  },
  {
    // Retention: transfers settled for good leave the journal's tables for this one, with all their rows
    // (JSON, as the file archive holds them), so that a new leader's takeover read stays bounded.
    version: 4,
    sql: `
      CREATE TABLE transfers_archive (
        id BIGINT PRIMARY KEY,
        archived_at BIGINT NOT NULL,
        record JSONB NOT NULL
      );
    `,
  },
  {
    // A new leader reads only what is not settled for good (see HOT_TRANSFERS in postgres-journal-store.ts);
    // the rest stays here and is read on demand, in the history's walks (see history-walks.ts).
    version: 5,
    sql: `
      CREATE INDEX transfers_history_state ON transfers (state, id);
      CREATE INDEX transfers_history_recipient ON transfers (recipient, state, id);
      CREATE INDEX transfers_history_key ON transfers (api_key_id, state, id);
      CREATE INDEX transfers_history_lane ON transfers (lane, state, id);
      CREATE INDEX transfers_created ON transfers (created_at, id);
      CREATE INDEX transfers_keyed ON transfers (id) WHERE idempotency_key IS NOT NULL;
      CREATE INDEX transfers_settled_unfinished ON transfers (id)
        WHERE state IN ('nonce-used', 'replaced', 'cancelled') AND (final_block IS NULL OR (notify = 1 AND reported IS DISTINCT FROM 'transfer.finalized'));
      CREATE INDEX webhook_events_transfer ON webhook_events (transfer_id);
      CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);
      CREATE INDEX webhook_deliveries_undelivered ON webhook_deliveries (event_seq) WHERE state <> 'delivered';
    `,
  },
  {
    // The network (chain id) and token of each transfer. A journal of one network and token had them in its
    // owner: the columns are added with the owner's values as their default, which PostgreSQL keeps for the
    // existing rows without rewriting them (a million rows: no pause), and the default is then dropped.
    version: 6,
    sql: `
      DO $$
      DECLARE owner_chain TEXT;
      DECLARE owner_token TEXT;
      BEGIN
        SELECT chain_id, token_address INTO owner_chain, owner_token FROM journal_owner WHERE id = 1;
        EXECUTE format('ALTER TABLE transfers ADD COLUMN chain_id TEXT DEFAULT %L', owner_chain);
        EXECUTE format('ALTER TABLE transfers ADD COLUMN token TEXT DEFAULT %L', owner_token);
        ALTER TABLE transfers ALTER COLUMN chain_id DROP DEFAULT;
        ALTER TABLE transfers ALTER COLUMN token DROP DEFAULT;
      END $$;
    `,
  },
  {
    // The history's network filter (GET /transfers?network=), walked like the others (see history-walks.ts).
    version: 7,
    sql: "CREATE INDEX transfers_history_chain ON transfers (chain_id, state, id);",
  },
  {
    // The history's token filter (GET /transfers?token=): several tokens share a network.
    version: 8,
    sql: "CREATE INDEX transfers_history_token ON transfers (token, state, id);",
  },
  {
    // A payout batch's items (journal-rows' payoutAsText; null for every other transfer, so no rewrite), and
    // the item ids each API key used, kept for good (retention does not archive them).
    version: 9,
    sql: `
      ALTER TABLE transfers ADD COLUMN payout TEXT;
      CREATE TABLE payout_items (
        id BIGINT PRIMARY KEY,
        api_key TEXT NOT NULL,
        item_id TEXT NOT NULL,
        transfer_id BIGINT NOT NULL,
        CONSTRAINT payout_items_key UNIQUE (api_key, item_id) DEFERRABLE INITIALLY DEFERRED
      );
      CREATE INDEX payout_items_transfer ON payout_items (transfer_id);
    `,
  },
  {
    // Which nonces of a lane the journal holds (the outflow watch asks for each nonce the chain counts).
    version: 10,
    sql: "CREATE INDEX transfers_lane_nonce ON transfers (lane, chain_id, nonce) WHERE nonce IS NOT NULL;",
  },
  {
    // An event about no transfer (wallet.unexpected_outflow) has no transfer id. Only the constraint changes: no rewrite.
    version: 11,
    sql: "ALTER TABLE webhook_events ALTER COLUMN transfer_id DROP NOT NULL;",
  },
  {
    // Every pause of signing (PAUSE_ON_UNEXPECTED_OUTFLOW) and who ended it: a new leader keeps a pause no admin
    // ended. Every unexpected outflow reported: a new leader does not report one again.
    version: 12,
    sql: `
      CREATE TABLE signing_pauses (
        id BIGINT PRIMARY KEY,
        since BIGINT NOT NULL,
        reason TEXT NOT NULL,
        hash TEXT,
        latest_hash TEXT,
        outflows INTEGER NOT NULL,
        resumed_at BIGINT,
        resumed_by TEXT
      );
      CREATE TABLE wallet_outflows (
        id BIGINT PRIMARY KEY,
        chain_id TEXT NOT NULL,
        hash TEXT NOT NULL,
        log_index INTEGER NOT NULL,
        wallet TEXT NOT NULL,
        block_number BIGINT NOT NULL,
        detected_at BIGINT NOT NULL,
        CONSTRAINT wallet_outflows_once UNIQUE (chain_id, hash, log_index) DEFERRABLE INITIALLY DEFERRED
      );
      CREATE TABLE outflow_watch_starts (
        chain_id BIGINT PRIMARY KEY,
        first_block BIGINT NOT NULL
      );
    `,
  },
  {
    // Two-person approval (APPROVAL_ABOVE): until when a transfer waits, who decided it and when. Nullable: no rewrite.
    version: 13,
    sql: `
      ALTER TABLE transfers ADD COLUMN approval_expires_at BIGINT;
      ALTER TABLE transfers ADD COLUMN approval_decided_by TEXT;
      ALTER TABLE transfers ADD COLUMN approval_decided_at BIGINT;
    `,
  },
  {
    // The audit log (audit-chain.ts): each entry sealed with the hash of the one before it by the leader's
    // working copy, in the commit it ships. Retention moves old entries to audit_archive (version 16).
    version: 14,
    sql: `
      CREATE TABLE audit_log (
        seq BIGINT PRIMARY KEY,
        at BIGINT NOT NULL,
        kind TEXT NOT NULL,
        transfer_id BIGINT,
        actor TEXT,
        detail TEXT NOT NULL,
        prev_hash TEXT,
        hash TEXT
      );
    `,
  },
  {
    // A token outflow is one per transaction and log key (what it says, and how many alike before it), wherever
    // a reorganisation mines it (its log index moves). Nullable (the transaction itself, rows of earlier
    // versions): no rewrite. An older version's working copy has no such column: it can no longer take over.
    version: 15,
    sql: `
      ALTER TABLE wallet_outflows ADD COLUMN log_key TEXT;
      ALTER TABLE wallet_outflows ADD CONSTRAINT wallet_outflows_once_by_log_key UNIQUE (chain_id, hash, log_key) DEFERRABLE INITIALLY DEFERRED;
    `,
  },
  {
    // Audit entries retention moved out of audit_log (JOURNAL_RETENTION_DAYS), as they were, in a table of the
    // same columns and key: audit:verify checks the chain through both tables, from entry 1.
    version: 16,
    sql: "CREATE TABLE audit_archive (LIKE audit_log INCLUDING ALL)",
  },
  {
    // A new leader holds the transfers approved within the daily caps' window, however old their request
    // (HOT_TRANSFERS): they count against their key's cap from the approval.
    version: 17,
    sql: "CREATE INDEX transfers_approval_decided ON transfers (approval_decided_at) WHERE approval_decided_at IS NOT NULL",
  },
  {
    // What displaced a transfer (a StoredDisplacement as JSON): a new leader goes on from it. Nullable: no rewrite.
    version: 18,
    sql: "ALTER TABLE transfers ADD COLUMN displacement TEXT",
  },
  {
    // Where a network's outflow watch got to (an OutflowWatchProgress as JSON): a new leader goes on from it. Nullable: no rewrite.
    version: 19,
    sql: "ALTER TABLE outflow_watch_starts ADD COLUMN progress TEXT",
  },
  {
    // ADDRESS_BOOK: the recipients paid without approval, each from its effective_at (a cooling-off after it was added).
    version: 20,
    sql: `
      CREATE TABLE address_book (
        id BIGINT PRIMARY KEY,
        address TEXT NOT NULL,
        label TEXT,
        added_by TEXT NOT NULL,
        added_at BIGINT NOT NULL,
        effective_at BIGINT NOT NULL,
        mac TEXT,
        CONSTRAINT address_book_once UNIQUE (address) DEFERRABLE INITIALLY DEFERRED
      );
    `,
  },
];
