/**
 * The journal in PostgreSQL, for several replicas of one wallet. The leader reads it whole when it takes
 * over and ships every commit of its working copy here, on the database session that holds the leader's
 * lock: a replica that lost the lock has lost that session, so it cannot write. Followers read here.
 */
import pg from "pg";
import { type AttemptRow, type EntryRow, toAttempt, toEntry } from "./journal-rows.js";
import { POSTGRES_MIGRATIONS } from "./postgres-migrations.js";
import { type ChangedRow, JOURNAL_TABLES, type JournalReplica, type JournalRow, type JournalRows, type JournalTable } from "./sqlite-change-log.js";
import { type JournalOwner, openSqliteJournal } from "./sqlite-transfer-journal.js";
import { type ArchivedTransfer, type JournalEntry, JournalOwnerMismatchError, type TransferJournal } from "./transfer-journal.js";

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

/** Records the owner in a new database; refuses a database of another token or chain. */
export async function checkDatabaseOwner(client: pg.ClientBase, owner: JournalOwner): Promise<void> {
  const expected = { chain_id: owner.chainId.toString(), wallet_address: owner.walletAddress, token_address: owner.tokenAddress };
  await client.query("INSERT INTO journal_owner (id, chain_id, wallet_address, token_address) VALUES (1, $1, $2, $3) ON CONFLICT (id) DO NOTHING", [
    expected.chain_id,
    expected.wallet_address,
    expected.token_address,
  ]);
  const stored = (await client.query<typeof expected>("SELECT chain_id, wallet_address, token_address FROM journal_owner WHERE id = 1")).rows[0];
  if (stored.chain_id !== expected.chain_id || stored.token_address !== expected.token_address) {
    throw new JournalOwnerMismatchError(`DATABASE_URL: this database belongs to token ${stored.token_address} on chain ${stored.chain_id}; use another database`);
  }
}

/** The leader's side: reads the whole journal, and takes the commits of its working copy. */
export class PostgresJournalStore implements JournalReplica {
  constructor(
    private readonly session: pg.ClientBase,
    /** A new connection to the same database, to look facts up once the session failed. */
    private readonly connectAgain?: () => pg.Client,
  ) {}

  async holds(hash: string): Promise<boolean | undefined> {
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
      return (await client.query("SELECT 1 FROM attempts WHERE hash = $1", [hash])).rowCount === 1;
    } catch {
      return undefined;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async archive(records: readonly ArchivedTransfer[]): Promise<void> {
    const now = Date.now();
    await this.session.query(
      "INSERT INTO transfers_archive (id, archived_at, record) SELECT id, $2, record FROM unnest($1::bigint[], $3::jsonb[]) AS archived (id, record) ON CONFLICT (id) DO NOTHING",
      [records.map((record) => record.transfer.id), now, records.map((record) => JSON.stringify(record))],
    );
  }

  async readAll(): Promise<JournalRows> {
    const rows = {} as JournalRows;
    for (const table of TABLES) rows[table] = (await this.session.query<JournalRow>(`SELECT * FROM ${table} ORDER BY ${JOURNAL_TABLES[table]}`)).rows;
    return rows;
  }

  /**
   * One statement, so one round trip and one implicit transaction: each table's deleted rows and its
   * upserted ones as data-modifying CTEs. The unique constraints are deferred to the end of it, since a
   * key or a hash may move from one row to another within a batch. A batch too large for one statement's
   * parameters goes as several statements in one transaction.
   */
  async ship(changes: ChangedRow[]): Promise<void> {
    const parts: { sql: string; values: unknown[] }[] = [];
    for (const table of TABLES) {
      const deleted = changes.filter((change) => change.table === table && change.row === null).map((change) => change.key);
      if (deleted.length > 0) parts.push({ sql: `DELETE FROM ${table} WHERE ${JOURNAL_TABLES[table]} = ANY($1)`, values: [deleted] });
      const rows = changes.filter((change) => change.table === table && change.row !== null).map((change) => change.row as JournalRow);
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

/** A follower's side: what lookups ask of the journal, read from the database. */
export class PostgresJournalReader {
  constructor(private readonly pool: pg.Pool) {}

  /** The transfer that has `hash` among two or more attempts (a re-priced or cancelled one). */
  async findWithSeveralAttempts(hash: string): Promise<JournalEntry | undefined> {
    const { rows } = await this.pool.query<AttemptRow>(
      "SELECT * FROM attempts WHERE transfer_id = (SELECT transfer_id FROM attempts WHERE hash = $1) ORDER BY id",
      [hash.toLowerCase()],
    );
    if (rows.length < 2) return undefined;
    const entry = (await this.pool.query<EntryRow>("SELECT * FROM transfers WHERE id = $1", [rows[0].transfer_id])).rows[0];
    return entry && toEntry(entry, rows.map(toAttempt));
  }
}

/**
 * The leader's journal: a working copy in memory (SQLite), seeded with everything the database holds and
 * shipping every commit back to it on `session`, the session that holds the leader's lock.
 */
export async function openPostgresJournal(
  session: pg.ClientBase,
  owner: JournalOwner,
  options: { notify?: boolean; connectAgain?: () => pg.Client } = {},
): Promise<TransferJournal> {
  await checkDatabaseOwner(session, owner);
  // Rows an older leader wrote after migration 3 have no lane: that version served one wallet, the owner's.
  await session.query("UPDATE transfers SET lane = (SELECT wallet_address FROM journal_owner WHERE id = 1) WHERE lane IS NULL");
  const store = new PostgresJournalStore(session, options.connectAgain);
  return openSqliteJournal(":memory:", owner, { ...options, seed: await store.readAll(), replica: store });
}
