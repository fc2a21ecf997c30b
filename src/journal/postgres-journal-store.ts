/**
 * The journal in PostgreSQL, for several replicas of one wallet. The leader reads what is not settled for
 * good when it takes over (HOT_TRANSFERS) and ships every commit of its working copy here, on the database
 * session that holds the leader's lock: a replica that lost the lock has lost that session, so it cannot
 * write. The rest of the history stays here, read on demand (postgresJournalReader), as followers read it.
 */
import pg from "pg";
import { steadyWallClockNow } from "../clock.js";
import type { AuditKey } from "./audit/audit-chain.js";
import type { JournalElsewhere } from "./journal-records.js";
import { SEVERAL_NETWORKS_MARK, ownersChainOf } from "./journal-rows.js";
import { POSTGRES_MIGRATIONS } from "./postgres-migrations.js";
import { BY_IDS } from "./postgres-by-ids.js";
import { type ChangedRow, JOURNAL_TABLES, type JournalReplica, type JournalRow, type JournalSeed, type JournalTable } from "./sqlite-change-log.js";
import type { JournalOwner } from "./journal-records.js";
import { openSqliteJournal } from "./sqlite-transfer-journal.js";
import { JournalOwnerMismatchError, type TransferJournal } from "./transfer-journal.js";
import { PostgresRetention } from "./retention/postgres-retention.js";

/** Serializes schema changes of replicas that start together (pg_advisory_xact_lock key). */
const MIGRATION_LOCK_KEY = 7_310_001;
const TABLES = Object.keys(JOURNAL_TABLES) as JournalTable[];
/** Rows per INSERT: PostgreSQL takes at most 65535 parameters in one statement. */
const ROWS_PER_STATEMENT = 500;
/** Parameters of one combined statement, well below PostgreSQL's 65535. */
const MAX_PARAMETERS = 30_000;
const INT8_OID = 20;
/** How many times (100 ms apart) a failed session's backend is looked for before its fate is called unknown. */
const BACKEND_GONE_CHECKS = 50;
/**
 * How far back a new leader holds every transfer, settled or not: the per-key caps count a day of spending
 * (TransferPolicy), and a day is at most the retention (JOURNAL_RETENTION_DAYS is at least 1).
 */
export const HELD_WINDOW_MS = 86_400_000;


/**
 * The ids of the transfers a new leader holds (the complement of SETTLED_FOR_GOOD, plus the window $1, by
 * request or by approval: an approved transfer counts against its key's daily cap from its approval, and
 * the newest transfer, whose time the next one's must not fall below), each branch along its own index.
 */
const HOT_TRANSFERS = `
  SELECT id FROM transfers WHERE state IN ('claimed', 'signed', 'accepted')
  UNION SELECT id FROM transfers WHERE state = 'awaiting-approval'
  UNION SELECT id FROM transfers
    WHERE state IN ('nonce-used', 'replaced', 'cancelled') AND (final_block IS NULL OR (notify = 1 AND reported IS DISTINCT FROM 'transfer.finalized'))
  UNION SELECT id FROM transfers WHERE idempotency_key IS NOT NULL
  UNION SELECT id FROM transfers WHERE created_at >= $1
  UNION SELECT id FROM transfers WHERE approval_decided_at >= $1
  UNION SELECT e.transfer_id FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq WHERE d.state <> 'delivered' AND e.transfer_id IS NOT NULL
  UNION (SELECT id FROM transfers ORDER BY id DESC LIMIT 1)`;

/** The events about no transfer (`e`) that some endpoint has not been delivered yet; few, found along webhook_events_transfer. */
const UNDELIVERED_EVENTS_OF_NO_TRANSFER = `(SELECT * FROM webhook_events
  WHERE transfer_id IS NULL AND EXISTS (SELECT 1 FROM webhook_deliveries d2 WHERE d2.event_seq = webhook_events.seq AND d2.state <> 'delivered')) AS e`;

/** Client options that read BIGINT columns (ids, nonces, ms timestamps: all below 2^53) as numbers. */
export function postgresOptions(connectionString: string): pg.ClientConfig {
  return {
    connectionString,
    keepAlive: true,
    types: { getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser },
  };
}

/** Applies the migrations not applied yet, under a lock, so that replicas starting together migrate once. */
export async function migrateDatabase(client: pg.ClientBase): Promise<number[]> {
  const applied: number[] = [];
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await client.query("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
    const done = new Set((await client.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map((row) => row.version));
    for (const migration of POSTGRES_MIGRATIONS) {
      if (done.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [migration.version]);
      applied.push(migration.version);
    }
    await client.query("COMMIT");
    return applied;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** Records the owner in a new database; refuses a database of another token or chain; marks one of several networks (see SEVERAL_NETWORKS_MARK). */
export async function checkDatabaseOwner(client: pg.ClientBase, owner: JournalOwner): Promise<void> {
  const chain = owner.chainId.toString();
  const expected = { chain_id: owner.severalNetworks ? `${chain}${SEVERAL_NETWORKS_MARK}` : chain, wallet_address: owner.walletAddress, token_address: owner.tokenAddress };
  await client.query("INSERT INTO journal_owner (id, chain_id, wallet_address, token_address) VALUES (1, $1, $2, $3) ON CONFLICT (id) DO NOTHING", [
    expected.chain_id,
    expected.wallet_address,
    expected.token_address,
  ]);
  const stored = (await client.query<typeof expected>("SELECT chain_id, wallet_address, token_address FROM journal_owner WHERE id = 1")).rows[0];
  if (ownersChainOf(stored.chain_id) !== chain || stored.token_address !== expected.token_address) {
    throw new JournalOwnerMismatchError(`DATABASE_URL: this database belongs to token ${stored.token_address} on chain ${ownersChainOf(stored.chain_id)}; use another database`);
  }
  // Once marked, for good: a database that held another network's transfers keeps them.
  if (owner.severalNetworks && stored.chain_id === chain) await client.query("UPDATE journal_owner SET chain_id = $1 WHERE id = 1", [expected.chain_id]);
}

/** The leader's side: reads what a new leader holds, and takes the commits of its working copy. */
export class PostgresJournalStore implements JournalReplica {
  constructor(
    private readonly session: pg.ClientBase,
    /** A new connection to the same database, to look facts up once the session failed. */
    private readonly connectAgain?: () => pg.Client,
  ) {}

  // The session's statements, one after another: a shipment too large for one statement is a transaction
  // of several, and retention's statements must not land inside it (a failing one would abort it).
  #lastOnSession: Promise<unknown> = Promise.resolve();

  #onSession<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#lastOnSession.then(work, work);
    this.#lastOnSession = run.catch(() => undefined);
    return run;
  }

  readonly retention = new PostgresRetention((text, values) => this.#onSession(() => this.session.query(text, values())));

  async holds(hash: string, transferId: number): Promise<boolean | undefined> {
    if (!this.connectAgain) return undefined;
    // Set by node-postgres once connected; not in its type declarations.
    const failedBackend = (this.session as unknown as { processID?: number }).processID;
    const client = this.connectAgain();
    client.on("error", () => undefined);
    try {
      await client.connect();
      // The failed session must commit nothing more before the answer is read: its backend is ended, and
      // the answer waits until it is gone.
      if (failedBackend) await client.query("SELECT pg_terminate_backend($1)", [failedBackend]);
      for (let waited = 0; failedBackend; waited++) {
        if ((await client.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [failedBackend])).rowCount === 0) break;
        if (waited >= BACKEND_GONE_CHECKS) return undefined;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return (await client.query("SELECT 1 FROM attempts WHERE hash = $1 AND transfer_id = $2", [hash, transferId])).rowCount === 1;
    } catch {
      return undefined;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** What a new leader holds: the transfers of HOT_TRANSFERS with all their rows, and each table's highest key. */
  async readHot(now: number): Promise<JournalSeed> {
    const ids = (await this.session.query<{ id: number }>(`SELECT id FROM (${HOT_TRANSFERS}) AS hot ORDER BY id`, [now - HELD_WINDOW_MS])).rows.map((row) => row.id);
    const read = async (sql: string) => (await this.session.query<JournalRow>(sql, [ids])).rows;
    const highest = (
      await this.session.query<Record<JournalTable, number | null>>(
        `SELECT GREATEST((SELECT MAX(id) FROM transfers), (SELECT MAX(id) FROM transfers_archive)) AS transfers, (SELECT MAX(id) FROM attempts) AS attempts,
           (SELECT MAX(seq) FROM webhook_events) AS webhook_events, (SELECT MAX(id) FROM webhook_deliveries) AS webhook_deliveries,
           (SELECT MAX(id) FROM payout_items) AS payout_items, (SELECT MAX(id) FROM signing_pauses) AS signing_pauses,
           (SELECT MAX(id) FROM wallet_outflows) AS wallet_outflows, NULL AS outflow_watch_starts, (SELECT MAX(seq) FROM audit_log) AS audit_log,
           (SELECT MAX(id) FROM address_book) AS address_book`,
      )
    ).rows[0];
    // Joined to the list of ids, each looked up in its index (see BY_IDS).
    return {
      rows: {
        transfers: await read(`SELECT t.* FROM ${BY_IDS} JOIN transfers t ON t.id = held.id`),
        attempts: await read(`SELECT a.* FROM ${BY_IDS} JOIN attempts a ON a.transfer_id = held.id`),
        // With the events of no transfer (wallet.unexpected_outflow) not yet delivered everywhere.
        webhook_events: await read(`SELECT e.* FROM ${BY_IDS} JOIN webhook_events e ON e.transfer_id = held.id UNION ALL SELECT e.* FROM ${UNDELIVERED_EVENTS_OF_NO_TRANSFER}`),
        webhook_deliveries: await read(
          `SELECT d.* FROM ${BY_IDS} JOIN webhook_events e ON e.transfer_id = held.id JOIN webhook_deliveries d ON d.event_seq = e.seq
           UNION ALL SELECT d.* FROM ${UNDELIVERED_EVENTS_OF_NO_TRANSFER} JOIN webhook_deliveries d ON d.event_seq = e.seq`,
        ),
        // The ids of the batches it holds; the others are asked for on a miss (payoutItemsHeld).
        payout_items: await read(`SELECT p.* FROM ${BY_IDS} JOIN payout_items p ON p.transfer_id = held.id`),
        // A pause no admin has ended (one at most).
        signing_pauses: (await this.session.query<JournalRow>("SELECT * FROM signing_pauses WHERE resumed_at IS NULL")).rows,
        // Every outflow reported (a few rows, each one a spend nobody asked for): none is reported twice.
        wallet_outflows: (await this.session.query<JournalRow>("SELECT * FROM wallet_outflows")).rows,
        outflow_watch_starts: (await this.session.query<JournalRow>("SELECT * FROM outflow_watch_starts")).rows,
        // The audit log's last entry: the copy's entries chain on from its hash (the rest is read here on demand).
        audit_log: (await this.session.query<JournalRow>("SELECT * FROM audit_log ORDER BY seq DESC LIMIT 1")).rows,
        // The whole address book (ADDRESS_BOOK_MAX entries at most): the request path reads it from memory.
        address_book: (await this.session.query<JournalRow>("SELECT * FROM address_book ORDER BY id")).rows,
      },
      highestKeys: highest,
    };
  }

  /**
   * One statement, so one round trip and one implicit transaction: each table's deleted rows and its
   * upserted ones as data-modifying CTEs. The unique constraints are deferred to the end of it, since a
   * key or a hash may move from one row to another within a batch. A batch too large for one statement's
   * parameters goes as several statements in one transaction.
   */
  ship(changes: ChangedRow[]): Promise<void> {
    return this.#onSession(() => this.#ship(changes));
  }

  async #ship(changes: ChangedRow[]): Promise<void> {
    const parts: { sql: string; values: unknown[] }[] = [];
    for (const table of TABLES) {
      const deleted = changes.filter((change) => change.table === table && change.row === null).map((change) => change.key);
      if (deleted.length > 0) parts.push({ sql: `DELETE FROM ${table} WHERE ${JOURNAL_TABLES[table]} = ANY($1)`, values: [deleted] });
      const rows = changes.filter((change) => change.table === table && change.row !== null).map((change) => change.row as JournalRow);
      if (table === "attempts" && rows.length > 0) parts.push(hashesMovedFrom(rows));
      for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) parts.push(upsertOf(table, rows.slice(start, start + ROWS_PER_STATEMENT)));
    }
    if (parts.length === 0) return;
    if (parts.reduce((sum, part) => sum + part.values.length, 0) <= MAX_PARAMETERS) {
      await this.session.query(combined(parts));
      return;
    }
    await this.session.query("BEGIN");
    try {
      for (const part of parts) await this.session.query(part.sql, part.values);
      await this.session.query("COMMIT");
    } catch (error) {
      await this.session.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  }
}

/**
 * The same signed bytes belong to their newest transfer (see insertAttempt in the SQLite journal): where the
 * working copy held the older transfer's attempt it moved that row, but an attempt of a transfer it does not
 * hold (a rejected one, settled for good before the takeover) is another row with the same hash here.
 */
function hashesMovedFrom(attempts: JournalRow[]): { sql: string; values: unknown[] } {
  return {
    sql: "DELETE FROM attempts WHERE hash = ANY($1::text[]) AND NOT (id = ANY($2::bigint[]))",
    values: [attempts.map((row) => row.hash), attempts.map((row) => row.id)],
  };
}

function upsertOf(table: JournalTable, rows: JournalRow[]): { sql: string; values: unknown[] } {
  const columns = Object.keys(rows[0]);
  const values: unknown[] = [];
  const tuples = rows.map((row) => `(${columns.map((column) => `$${values.push(row[column])}`).join(", ")})`);
  const key = JOURNAL_TABLES[table];
  const updates = columns.filter((column) => column !== key).map((column) => `${column} = EXCLUDED.${column}`);
  return { sql: `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")} ON CONFLICT (${key}) DO UPDATE SET ${updates.join(", ")}`, values };
}

// The parts as CTEs of one statement, their parameters renumbered into one list.
function combined(parts: { sql: string; values: unknown[] }[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const ctes = parts.map((part, index) => {
    const offset = values.length;
    values.push(...part.values);
    return `p${index} AS (${part.sql.replace(/\$(\d+)/g, (_match, number: string) => `$${Number(number) + offset}`)})`;
  });
  return { text: `WITH ${ctes.join(", ")} SELECT 1`, values };
}

/**
 * The leader's journal: a working copy in memory (SQLite), seeded with what the database holds that is not
 * settled for good, shipping every commit back to it on `session`, the session that holds the leader's
 * lock; `reads` reads the rest on demand.
 */
export async function openPostgresJournal(
  session: pg.ClientBase,
  owner: JournalOwner,
  options: { reads: JournalElsewhere; notify?: boolean; connectAgain?: () => pg.Client; auditKey?: AuditKey },
): Promise<TransferJournal> {
  await checkDatabaseOwner(session, owner);
  // Rows an older leader wrote after migration 3 have no lane: that version served one wallet, the owner's.
  await session.query("UPDATE transfers SET lane = (SELECT wallet_address FROM journal_owner WHERE id = 1) WHERE lane IS NULL");
  await analyzeOnce(session);
  const store = new PostgresJournalStore(session, options.connectAgain);
  return openSqliteJournal(":memory:", owner, { notify: options.notify, seed: await store.readHot(steadyWallClockNow()), replica: store, elsewhere: options.reads, auditKey: options.auditKey });
}

/**
 * Gives statistics to journal tables that never had any (filled in bulk, or restored from a dump, before
 * autovacuum got to them): without them the planner takes a lookup of a hundred transfers' attempts to
 * match half the table and reads all of it (a second at a million attempts). Once; autovacuum keeps them.
 */
async function analyzeOnce(session: pg.ClientBase): Promise<void> {
  const { rows } = await session.query<{ relname: string }>("SELECT relname FROM pg_class WHERE oid = ANY($1::regclass[]) AND reltuples < 0", [TABLES]);
  if (rows.length > 0) await session.query(`ANALYZE ${rows.map((row) => row.relname).join(", ")}`);
}
