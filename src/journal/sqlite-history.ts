/**
 * The transfer history read from a SQLite journal in bounded steps (GET /transfers and its CSV export):
 * whatever the filters and however long the history, one read walks at most a page and a fixed budget of
 * index entries, so that no request holds the event loop that also allocates nonces.
 *
 * Each journal state is read on its own, newest first, along an index that starts with the filter's
 * driving column (recipient, API key or lane), then the state, then the id: every such walk is in id order
 * and stops at the page's size. The walks are merged by id. Times become ids: the journal keeps its
 * timestamps rising with its ids (see HISTORY_TIMES_RISE), so `since` and `until` are found once in the
 * time index and bound the walks. A second equality filter (a recipient and an API key) is checked on each
 * row walked; such a walk stops after SCAN_BUDGET rows, and the page then says where the next read goes on
 * (a short page with a cursor is not the end; a null cursor is).
 */
import type Database from "better-sqlite3";
import type { EntryRow } from "./journal-rows.js";
import { keepForever } from "./sqlite-keep-alive.js";
import type { HistoryFilter, JournalState } from "./transfer-journal.js";

/** Every state a journal row can be in: a read without a state filter walks each. */
const ALL_STATES: readonly JournalState[] = ["claimed", "refused", "signed", "accepted", "nonce-used", "replaced", "rejected", "cancelled"];

/** Rows one read may walk beyond its page when a second filter is checked row by row, shared by its states. */
const SCAN_BUDGET = 4_000;

/** The indexes the walks follow, by their driving column (see HISTORY_INDEXES). */
const DRIVERS = [
  { column: "recipient", field: "recipient", index: "transfers_history_recipient" },
  { column: "api_key_id", field: "apiKeyId", index: "transfers_history_key" },
  { column: "lane", field: "lane", index: "transfers_history_lane" },
] as const;

/** The indexes of the history's walks: made by the journal's migration (see INDEXES_VERSION there). */
export const HISTORY_INDEXES = `
  DROP INDEX IF EXISTS transfers_history_state;
  CREATE INDEX transfers_history_state ON transfers (state, id);
  DROP INDEX IF EXISTS transfers_history_recipient;
  CREATE INDEX transfers_history_recipient ON transfers (recipient, state, id);
  DROP INDEX IF EXISTS transfers_history_key;
  CREATE INDEX transfers_history_key ON transfers (api_key_id, state, id);
  DROP INDEX IF EXISTS transfers_history_lane;
  CREATE INDEX transfers_history_lane ON transfers (lane, state, id);
`;

/**
 * A new row's timestamp: never below the newest row's, so that times rise with ids even when the clock
 * stepped back between two processes (a restart, another replica). The time index finds the newest.
 */
export const HISTORY_TIMES_RISE = "MAX(@now, IFNULL((SELECT MAX(created_at) FROM transfers), 0))";

/** A page of rows, newest first, and where the next page starts: ids below `nextBefore`; undefined at the end. */
export interface HistoryRows {
  rows: EntryRow[];
  nextBefore: number | undefined;
}

interface Walk {
  /** The ids that match every filter, newest first. */
  hits: number[];
  /** Whether it walked every row of its state in range; if not, rows below `lowest` are not looked at yet. */
  done: boolean;
  lowest: number;
}

export class SqliteHistoryReader {
  readonly #db: Database.Database;
  // One statement per shape of walk asked for (a handful in practice), prepared once.
  readonly #statements = new Map<string, Database.Statement>();
  readonly #firstIdAtOrAfter: Database.Statement;
  readonly #rowsOf: Database.Statement;
  readonly #byKeys: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#firstIdAtOrAfter = db.prepare("SELECT id FROM transfers INDEXED BY transfers_created WHERE created_at >= ? ORDER BY created_at, id LIMIT 1").pluck();
    this.#rowsOf = db.prepare("SELECT * FROM transfers WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id DESC");
    this.#byKeys = db.prepare("SELECT * FROM transfers WHERE idempotency_key IN (SELECT value FROM json_each(?)) ORDER BY id DESC");
    keepForever([this.#firstIdAtOrAfter, this.#rowsOf, this.#byKeys]);
  }

  /** At most `limit` rows matching `filter` below `beforeId`, newest first (see the module's comment). */
  read(filter: HistoryFilter, beforeId: number | undefined, limit: number): HistoryRows {
    const bounds = this.#idBounds(filter, beforeId);
    if (!bounds || filter.states?.length === 0) return { rows: [], nextBefore: undefined };
    // An Idempotency-Key is unique: at most one row per key asked for, whatever else is asked.
    if (filter.idempotencyKeys) {
      const rows = this.#byIdempotencyKeys(filter, bounds);
      const page = rows.slice(0, limit);
      return { rows: page, nextBefore: rows.length > limit ? page[page.length - 1].id : undefined };
    }
    const driver = DRIVERS.find((candidate) => filter[candidate.field] !== undefined);
    const checked = DRIVERS.filter((candidate) => candidate !== driver && filter[candidate.field] !== undefined);
    const states = filter.states ?? ALL_STATES;
    const scan = checked.length > 0 ? Math.max(limit + 1, Math.ceil(SCAN_BUDGET / states.length)) : limit + 1;
    const statement = this.#walk(driver, checked);
    const values: Record<string, unknown> = { below: bounds.below, low: bounds.low, scan };
    for (const { field } of DRIVERS) if (filter[field] !== undefined) values[field] = filter[field];
    const walks = states.map((state) => walkOf(statement.all({ ...values, state }) as [number, number][], scan));
    // Every walk looked at each id from its start down to `lowest`: the merge is complete above the
    // highest `lowest` of the walks that stopped early.
    const boundary = Math.max(0, ...walks.filter((walk) => !walk.done).map((walk) => walk.lowest));
    const ids = walks
      .flatMap((walk) => walk.hits)
      .filter((id) => id >= boundary)
      .sort((a, b) => b - a);
    const page = ids.slice(0, limit);
    const nextBefore = ids.length > limit ? page[page.length - 1] : boundary > 0 ? boundary : undefined;
    return { rows: page.length === 0 ? [] : (this.#rowsOf.all(JSON.stringify(page)) as EntryRow[]), nextBefore };
  }

  // The range of ids a read covers: below `beforeId` and `until`'s first id, from `since`'s first id; none
  // when nothing was made since `since`.
  #idBounds(filter: HistoryFilter, beforeId: number | undefined): { low: number; below: number } | undefined {
    let below = beforeId ?? Number.MAX_SAFE_INTEGER;
    if (filter.until !== undefined) below = Math.min(below, (this.#firstIdAtOrAfter.get(filter.until) as number | undefined) ?? below);
    if (filter.since === undefined) return { low: 0, below };
    const low = this.#firstIdAtOrAfter.get(filter.since) as number | undefined;
    return low === undefined ? undefined : { low, below };
  }

  #byIdempotencyKeys(filter: HistoryFilter, bounds: { low: number; below: number }): EntryRow[] {
    const rows = this.#byKeys.all(JSON.stringify(filter.idempotencyKeys)) as EntryRow[];
    return rows.filter(
        (row) =>
          row.id >= bounds.low &&
          row.id < bounds.below &&
          (filter.states === undefined || filter.states.includes(row.state)) &&
          (filter.recipient === undefined || row.recipient === filter.recipient) &&
          (filter.apiKeyId === undefined || row.api_key_id === filter.apiKeyId) &&
          (filter.lane === undefined || row.lane === filter.lane),
    );
  }

  // A walk of one state along the driver's index, with whether each row passes the checked filters.
  #walk(driver: (typeof DRIVERS)[number] | undefined, checked: readonly (typeof DRIVERS)[number][]): Database.Statement {
    const index = driver?.index ?? "transfers_history_state";
    const key = `${index}:${checked.map((filter) => filter.field).join(",")}`;
    let statement = this.#statements.get(key);
    if (!statement) {
      const hit = checked.length === 0 ? "1" : checked.map((filter) => `${filter.column} = @${filter.field}`).join(" AND ");
      statement = this.#db
        .prepare(
          `SELECT id, ${hit} FROM transfers INDEXED BY ${index}
           WHERE ${driver ? `${driver.column} = @${driver.field} AND ` : ""}state = @state AND id < @below AND id >= @low ORDER BY id DESC LIMIT @scan`,
        )
        .raw();
      keepForever(statement);
      this.#statements.set(key, statement);
    }
    return statement;
  }
}

function walkOf(rows: readonly [number, number][], scan: number): Walk {
  return { hits: rows.filter(([, hit]) => hit === 1).map(([id]) => id), done: rows.length < scan, lowest: rows.length > 0 ? rows[rows.length - 1][0] : 0 };
}
