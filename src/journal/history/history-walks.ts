/**
 * How a history read (GET /transfers and its CSV export) walks the journal in bounded steps, whichever
 * database holds it (SQLite, or PostgreSQL for a leader's settled history): the plan of the walks a filter
 * asks for, and the merge of their results into one page.
 *
 * Each journal state is read on its own, newest first, along an index that starts with the filter's
 * driving column (recipient, API key or lane), then the state, then the id: every such walk is in id order
 * and stops at the page's size. The walks are merged by id. A read that names neither a driving column nor
 * a state walks the ids themselves, once: the same rows, since every row's state is one of ALL_STATES
 * (JournalState; the file's 'settled' of old is renamed at open). Times become ids: the journal keeps its
 * timestamps rising with its ids (see HISTORY_TIMES_RISE), so `since` and `until` are found once in the
 * time index and bound the walks. A second equality filter (a recipient and an API key) is checked on each
 * row walked; such a walk stops after SCAN_BUDGET rows, and the page then says where the next read goes on
 * (a short page with a cursor is not the end; a null cursor is).
 */
import type { EntryRow } from "../journal-rows.js";
import type { HistoryFilter, JournalState } from "../transfer-journal.js";

/** Every state a journal row can be in: a read without a state filter walks each. */
const ALL_STATES: readonly JournalState[] = ["awaiting-approval", "claimed", "refused", "signed", "accepted", "nonce-used", "replaced", "rejected", "cancelled"];

/** Rows one read may walk beyond its page when a second filter is checked row by row, shared by its states. */
const SCAN_BUDGET = 4_000;

/** The columns a walk can be driven by, each with the index (column, state, id) both databases keep. */
export const DRIVERS = [
  { column: "recipient", field: "recipient", index: "transfers_history_recipient" },
  { column: "api_key_id", field: "apiKeyId", index: "transfers_history_key" },
  { column: "lane", field: "lane", index: "transfers_history_lane" },
  // Last: a token, and more so a network, holds much of the history, so another filter drives the walk where one is given.
  { column: "token", field: "token", index: "transfers_history_token" },
  { column: "chain_id", field: "chainId", index: "transfers_history_chain" },
] as const;
export type Driver = (typeof DRIVERS)[number];

/** The index a walk without a driving column follows: (state, id). */
export const STATE_INDEX = "transfers_history_state";

/** The range of ids a read covers: from `low`, below `below`. */
export interface IdBounds {
  low: number;
  below: number;
}

/**
 * The walks one read makes, each at most `scan` rows: one per state along the driver's index; or, when
 * neither a driver nor a state is asked for, one walk of every state along the ids.
 */
export interface WalkPlan {
  driver: Driver | undefined;
  /** Filters checked on each row walked (not served by the index). */
  checked: readonly Driver[];
  /** The states walked one by one, each once; undefined: one walk along the ids, whatever the state. */
  states: readonly JournalState[] | undefined;
  scan: number;
  /** The filter's values by field (recipient, apiKeyId, lane, token, chainId), for the statement's parameters. */
  values: Partial<Record<Driver["field"], string>>;
}

/** The ids one walk found matching, and how far down it looked. */
export interface Walk {
  /** The ids that match every filter, newest first. */
  hits: number[];
  /** Whether it walked every row of its state in range; if not, rows below `lowest` are not looked at yet. */
  done: boolean;
  lowest: number;
}

/** A page of ids, newest first, and where the next page starts: ids below `nextBefore`; undefined at the end. */
export interface IdPage {
  ids: number[];
  nextBefore: number | undefined;
}

/** The walks a read of `filter` makes for a page of `limit`. */
export function planWalks(filter: HistoryFilter, limit: number): WalkPlan {
  const driver = DRIVERS.find((candidate) => filter[candidate.field] !== undefined);
  const checked = DRIVERS.filter((candidate) => candidate !== driver && filter[candidate.field] !== undefined);
  // A state named twice is walked once: its rows are on the page once, and the statement stays as small.
  const states = filter.states ? [...new Set(filter.states)] : driver ? ALL_STATES : undefined;
  // Rows are checked one by one only on walks along a driver's index, one per state.
  const scan = states && checked.length > 0 ? Math.max(limit + 1, Math.ceil(SCAN_BUDGET / states.length)) : limit + 1;
  const values: WalkPlan["values"] = {};
  for (const { field } of DRIVERS) if (filter[field] !== undefined) values[field] = filter[field];
  return { driver, checked, states, scan, values };
}

/** One walk's rows (id, and 1 when it passes the checked filters), as its statement returned them. */
export function walkOf(rows: readonly (readonly [number, number])[], scan: number): Walk {
  return { hits: rows.filter(([, hit]) => hit === 1).map(([id]) => id), done: rows.length < scan, lowest: rows.length > 0 ? rows[rows.length - 1][0] : 0 };
}

/**
 * The page the walks make together. Every walk looked at each id from its start down to `lowest`: the
 * merge is complete above the highest `lowest` of the walks that stopped early.
 */
export function mergeWalks(walks: readonly Walk[], limit: number): IdPage {
  const boundary = Math.max(0, ...walks.filter((walk) => !walk.done).map((walk) => walk.lowest));
  const ids = walks
    .flatMap((walk) => walk.hits)
    .filter((id) => id >= boundary)
    .sort((a, b) => b - a);
  const page = ids.slice(0, limit);
  return { ids: page, nextBefore: ids.length > limit ? page[page.length - 1] : boundary > 0 ? boundary : undefined };
}

/**
 * The range below `beforeId` and `until`'s first id, from `since`'s first id; none when nothing was made
 * since `since`. `firstIds` holds the first id made at or after each time the filter names (looked up in
 * the time index by the caller; undefined when none was).
 */
export function idBoundsOf(filter: HistoryFilter, beforeId: number | undefined, firstIds: { since?: number; until?: number }): IdBounds | undefined {
  let below = beforeId ?? Number.MAX_SAFE_INTEGER;
  if (filter.until !== undefined) below = Math.min(below, firstIds.until ?? below);
  if (filter.since === undefined) return { low: 0, below };
  return firstIds.since === undefined ? undefined : { low: firstIds.since, below };
}

/**
 * The page of a read by Idempotency-Keys or by a payout item id: at most one row per API key, whatever else
 * is asked, so those rows are read whole and the other filters checked on each. `rows` newest first.
 */
export function pageOfKeyed(rows: readonly EntryRow[], filter: HistoryFilter, bounds: IdBounds, limit: number): { rows: EntryRow[]; nextBefore: number | undefined } {
  const matching = rows.filter(
    (row) =>
      row.id >= bounds.low &&
      row.id < bounds.below &&
      (filter.states === undefined || filter.states.includes(row.state)) &&
      (filter.recipient === undefined || row.recipient === filter.recipient) &&
      (filter.apiKeyId === undefined || row.api_key_id === filter.apiKeyId) &&
      (filter.lane === undefined || row.lane === filter.lane) &&
      (filter.token === undefined || row.token === filter.token) &&
      (filter.chainId === undefined || row.chain_id === filter.chainId),
  );
  const page = matching.slice(0, limit);
  return { rows: page, nextBefore: matching.length > limit ? page[page.length - 1].id : undefined };
}
