/**
 * Ships a SQLite journal's commits to a shared database. The leader of several replicas keeps its journal
 * as a working copy in SQLite (every query the service asks stays synchronous and local) and writes
 * through to PostgreSQL: triggers note each changed row in the same transaction as the change, and after
 * each commit the rows noted are read and shipped, in commit order, before flushed() resolves. Nothing is
 * broadcast before its record is in the shared database.
 */
import type Database from "better-sqlite3";
import type { DatabaseRetention } from "./retention/retention-records.js";

/** The tables a journal keeps, with their primary keys. journal_owner is checked by each store itself. */
export const JOURNAL_TABLES = { transfers: "id", attempts: "id", webhook_events: "seq", webhook_deliveries: "id", payout_items: "id", signing_pauses: "id", wallet_outflows: "id", outflow_watch_starts: "chain_id", audit_log: "seq", address_book: "id" } as const;
export type JournalTable = keyof typeof JOURNAL_TABLES;

export type JournalRow = Record<string, string | number | null>;

/** Every row of every journal table. */
export type JournalRows = Record<JournalTable, JournalRow[]>;

/**
 * What a working copy starts from: some rows of each table, and each table's highest key in the shared
 * database (held or not), so that a new row never takes the key of a row the copy does not hold.
 */
export interface JournalSeed {
  rows: JournalRows;
  highestKeys: Record<JournalTable, number | null>;
}

/** One row changed by a commit: its new values, or null when it was deleted. */
export interface ChangedRow {
  table: JournalTable;
  key: number;
  row: JournalRow | null;
}

/** Where commits are shipped. Throws when it cannot take them: the journal then takes no more writes. */
export interface JournalReplica {
  ship(changes: ChangedRow[]): Promise<void>;
  /**
   * After a shipment failed: whether the database holds the attempt `hash` of transfer `transferId` all the
   * same (the shipment committed and only its acknowledgement was lost), decided once the failed session can
   * commit nothing more; undefined when that cannot be told. Of that transfer: the same bytes may be an
   * older transfer's attempt there.
   */
  holds(hash: string, transferId: number): Promise<boolean | undefined>;
  /** Retention in the shared database: its archive tables, and what the working copy does not hold. */
  readonly retention: DatabaseRetention;
}

const TABLE_NAMES = Object.keys(JOURNAL_TABLES) as JournalTable[];

/** Fills a new journal's tables with a seed's rows, in one transaction; its keys continue from the seed's highest. */
export function seedTables(db: Database.Database, seed: JournalSeed): void {
  db.exec("BEGIN");
  for (const table of TABLE_NAMES) {
    const rows = seed.rows[table];
    if (rows.length > 0) {
      const columns = Object.keys(rows[0]);
      const insert = db.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((column) => `@${column}`).join(", ")})`);
      for (const row of rows) insert.run(row);
    }
    const highest = seed.highestKeys[table];
    // AUTOINCREMENT takes the next key from sqlite_sequence: above every row of the shared database.
    if (highest !== null) {
      db.exec(`DELETE FROM sqlite_sequence WHERE name = '${table}'; INSERT INTO sqlite_sequence (name, seq) VALUES ('${table}', ${Math.trunc(highest)})`);
    }
  }
  // Rows of the current version: attempts exist already (see ATTEMPTS_OF_EARLIER_VERSIONS).
  db.exec("PRAGMA user_version = 1; COMMIT");
}

export class SqliteChangeLog {
  readonly #statements;
  readonly #replica: JournalReplica;
  // Changes read from commits made while a shipment was under way: they go together in the next one,
  // so that many small commits cost one transaction (and one fsync) of the shared database, not one each.
  #waiting: ChangedRow[] = [];
  #nextShipment: Promise<void> | undefined;
  /** Resolves once every commit so far is shipped; rejects once one could not be. */
  lastShipment: Promise<void> | undefined;

  /** See JournalReplica.holds. */
  holds(hash: string, transferId: number): Promise<boolean | undefined> {
    return this.#replica.holds(hash, transferId);
  }

  constructor(db: Database.Database, replica: JournalReplica) {
    this.#replica = replica;
    db.exec("CREATE TABLE IF NOT EXISTS changed_rows (seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, row_key INTEGER NOT NULL)");
    for (const [table, key] of Object.entries(JOURNAL_TABLES)) {
      for (const [event, row] of [["INSERT", "NEW"], ["UPDATE", "NEW"], ["DELETE", "OLD"]]) {
        db.exec(
          `CREATE TRIGGER IF NOT EXISTS ${table}_${event.toLowerCase()}_noted AFTER ${event} ON ${table}
           BEGIN INSERT INTO changed_rows (tbl, row_key) VALUES ('${table}', ${row}.${key}); END`,
        );
      }
    }
    this.#statements = {
      noted: db.prepare("SELECT DISTINCT tbl, row_key FROM changed_rows WHERE seq <= ?"),
      lastSeq: db.prepare("SELECT MAX(seq) FROM changed_rows").pluck(),
      forget: db.prepare("DELETE FROM changed_rows WHERE seq <= ?"),
      forgetAll: db.prepare("DELETE FROM changed_rows"),
      rows: Object.fromEntries(TABLE_NAMES.map((table) => [table, db.prepare(`SELECT * FROM ${table} WHERE ${JOURNAL_TABLES[table]} = ?`)])) as Record<JournalTable, Database.Statement>,
    };
  }

  /**
   * Runs `change` (inside the open transaction) so that the shared database is not told of it: the working
   * copy forgets rows the database keeps. Only while nothing else of the transaction waits to be shipped (a
   * row changed earlier in it and deleted by `change` would be shipped as deleted): undefined, and nothing
   * run, otherwise.
   */
  unshipped<T>(change: () => T): T | undefined {
    if (this.#statements.lastSeq.get() !== null) return undefined;
    const result = change();
    this.#statements.forgetAll.run();
    return result;
  }

  /**
   * Reads what the last commit changed, at once (call it right after COMMIT, before any later write), and
   * ships it after every earlier shipment, with whatever else was committed meanwhile. Resolves once it is
   * shipped.
   */
  shipCommitted(): Promise<void> {
    const last = this.#statements.lastSeq.get() as number | null;
    if (last === null) return this.lastShipment ?? Promise.resolve();
    for (const { tbl, row_key } of this.#statements.noted.all(last) as { tbl: JournalTable; row_key: number }[]) {
      this.#waiting.push({ table: tbl, key: row_key, row: (this.#statements.rows[tbl].get(row_key) as JournalRow | undefined) ?? null });
    }
    // Its own commit: these notes are read; a later change of the same row is noted again.
    this.#statements.forget.run(last);
    if (!this.#nextShipment) {
      const next = (this.lastShipment ?? Promise.resolve()).then(() => {
        this.#nextShipment = undefined;
        const batch = latestOfEachRow(this.#waiting);
        this.#waiting = [];
        return this.#replica.ship(batch);
      });
      next.catch(() => undefined);
      this.#nextShipment = next;
      this.lastShipment = next;
    }
    return this.#nextShipment;
  }
}

// A row changed by several commits of one batch is shipped once, as the last of them left it.
function latestOfEachRow(changes: ChangedRow[]): ChangedRow[] {
  const latest = new Map<string, ChangedRow>();
  for (const change of changes) {
    const id = `${change.table}:${change.key}`;
    latest.delete(id);
    latest.set(id, change);
  }
  return [...latest.values()];
}
