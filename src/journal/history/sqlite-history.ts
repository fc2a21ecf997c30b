/**
 * The transfer history read from a SQLite journal in bounded steps (the walks of history-walks.ts):
 * whatever the filters and however long the history, one read walks at most a page and a fixed budget of
 * index entries, so that no request holds the event loop that also allocates nonces.
 */
import type Database from "better-sqlite3";
import { type Driver, type IdPage, STATE_INDEX, idBoundsOf, mergeWalks, pageOfKeyed, planWalks, walkOf } from "./history-walks.js";
import type { EntryRow } from "../journal-rows.js";
import type { HistoryFilter } from "../transfer-journal.js";

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
 * The network and token filters' indexes, made apart from the others (a journal that has them keeps them:
 * remaking them all would read the table four times at startup).
 */
export const NETWORK_HISTORY_INDEXES = `
  CREATE INDEX IF NOT EXISTS transfers_history_chain ON transfers (chain_id, state, id);
  CREATE INDEX IF NOT EXISTS transfers_history_token ON transfers (token, state, id);
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

export class SqliteHistoryReader {
  readonly #db: Database.Database;
  // One statement per shape of walk asked for (a handful in practice), prepared once.
  readonly #statements = new Map<string, Database.Statement>();
  readonly #firstIdAtOrAfter: Database.Statement;
  readonly #rowsOf: Database.Statement;
  readonly #byKeys: Database.Statement;
  readonly #byPayoutItem: Database.Statement;
  readonly #everyStateWalk: Database.Statement;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#firstIdAtOrAfter = db.prepare("SELECT id FROM transfers INDEXED BY transfers_created WHERE created_at >= ? ORDER BY created_at, id LIMIT 1").pluck();
    // Along the ids (the table's rowid), newest first.
    this.#everyStateWalk = db.prepare("SELECT id, 1 FROM transfers NOT INDEXED WHERE id < @below AND id >= @low ORDER BY id DESC LIMIT @scan").raw();
    this.#rowsOf = db.prepare("SELECT * FROM transfers WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id DESC");
    this.#byKeys = db.prepare("SELECT * FROM transfers WHERE idempotency_key IN (SELECT value FROM json_each(?)) ORDER BY id DESC");
    // Along payout_items' unique (api_key, item_id) index: one probe per API key.
    this.#byPayoutItem = db.prepare(
      "SELECT t.* FROM payout_items p JOIN transfers t ON t.id = p.transfer_id WHERE p.api_key IN (SELECT value FROM json_each(?)) AND p.item_id = ? ORDER BY t.id DESC",
    );
  }

  /** The first transfer made at or after `time` (ms): times rise with ids, so every later id is later too. */
  firstIdAtOrAfter(time: number): number | undefined {
    return this.#firstIdAtOrAfter.get(time) as number | undefined;
  }

  /** At most `limit` rows matching `filter` below `beforeId`, newest first (see history-walks.ts). */
  read(filter: HistoryFilter, beforeId: number | undefined, limit: number): HistoryRows {
    const firstIdAtOrAfter = (time: number | undefined) => (time === undefined ? undefined : this.firstIdAtOrAfter(time));
    const bounds = idBoundsOf(filter, beforeId, { since: firstIdAtOrAfter(filter.since), until: firstIdAtOrAfter(filter.until) });
    if (!bounds || filter.states?.length === 0) return { rows: [], nextBefore: undefined };
    if (filter.idempotencyKeys) return pageOfKeyed(this.#byKeys.all(JSON.stringify(filter.idempotencyKeys)) as EntryRow[], filter, bounds, limit);
    if (filter.payoutItem) {
      const { itemId, apiKeyIds } = filter.payoutItem;
      return pageOfKeyed(this.#byPayoutItem.all(JSON.stringify(apiKeyIds), itemId) as EntryRow[], filter, bounds, limit);
    }
    const plan = planWalks(filter, limit);
    const values = { ...plan.values, below: bounds.below, low: bounds.low, scan: plan.scan };
    const walk = this.#walk(plan.driver, plan.checked);
    const walks = plan.states ? plan.states.map((state) => walk.all({ ...values, state })) : [this.#everyStateWalk.all(values)];
    const page: IdPage = mergeWalks(
      walks.map((rows) => walkOf(rows as [number, number][], plan.scan)),
      limit,
    );
    return { rows: page.ids.length === 0 ? [] : (this.#rowsOf.all(JSON.stringify(page.ids)) as EntryRow[]), nextBefore: page.nextBefore };
  }

  // A walk of one state along the driver's index, with whether each row passes the checked filters.
  #walk(driver: Driver | undefined, checked: readonly Driver[]): Database.Statement {
    const index = driver?.index ?? STATE_INDEX;
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
      this.#statements.set(key, statement);
    }
    return statement;
  }
}
