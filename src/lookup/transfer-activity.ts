/**
 * The last hours of transfers and gas, hour by hour, for the console's charts (GET /transfers/activity).
 *
 * Counts come from the journal: each hour's transfers (by when they were asked for) by what became of
 * them. They are tallied in the background, once a minute, in slices of SLICE_ROWS with other work
 * between slices, so a request only reads the last tally: however busy the day, nothing on the request
 * path walks it. An hour is counted again only while it can still change: the current and the last one,
 * and any with transfers in flight at its last count; the others keep their count. Between two tallies,
 * every RECENT_INTERVAL_MS, the transfers made since the last one (past the highest id it counted, no more)
 * are counted on top, so the charts show a transfer within seconds, not at the next minute. Gas is what the wallets' ETH balances went down by (see start-lane's gasSpentWei),
 * sampled at each tally into the hour it was seen in; hours before this process started have none.
 */
import { steadyWallClockNow } from "../clock.js";
import type { JournalState, TransferJournal } from "../journal/transfer-journal.js";

const HOUR_MS = 3_600_000;
/** The hours shown: the current one and those before it. */
export const ACTIVITY_HOURS = 24;
/** How often the tally is made again. */
const TALLY_INTERVAL_MS = 60_000;
/** How often the transfers made since the last tally are counted on top of it. */
const RECENT_INTERVAL_MS = 2_000;
/** Transfers read from the journal between two turns of the event loop. */
const SLICE_ROWS = 2_000;

/** One hour of activity. */
export interface ActivityHour {
  /** When the hour began (ms since the epoch). */
  start: number;
  /** Transfers asked for in the hour that were signed and sent (whatever became of them since). */
  sent: number;
  /** Of those, mined. */
  mined: number;
  /** Transfers asked for in the hour that failed: refused (417), rejected at their first broadcast, or replaced by another transaction. */
  failed: number;
  /** Wei the wallets' ETH balances went down by in the hour (gas, and ETH sent to other lanes); null before this process ran. */
  gasSpentWei: bigint | null;
}

const SENT: ReadonlySet<JournalState> = new Set(["signed", "accepted", "nonce-used", "replaced", "cancelled"]);
const FAILED: ReadonlySet<JournalState> = new Set(["refused", "rejected", "replaced"]);

/** An hour's counts, and how many of its transfers were in flight when they were made. */
interface HourCount {
  sent: number;
  mined: number;
  failed: number;
  inFlight: number;
}

const IN_FLIGHT: ReadonlySet<JournalState> = new Set(["claimed", "signed", "accepted"]);

export interface TransferActivityOptions {
  /** A tally failed (the journal could not be read); the last one stays, and the next is made on time. */
  onError: (error: unknown) => void;
  now?: () => number;
}

export class TransferActivity {
  readonly #journal: Pick<TransferJournal, "madeSince">;
  readonly #gasSpentWei: () => bigint;
  readonly #now: () => number;
  readonly #onError: (error: unknown) => void;
  readonly #counts = new Map<number, HourCount>();
  // Gas seen spent, by the hour it was seen in; and the running total at the last sample.
  readonly #gasByHour = new Map<number, bigint>();
  readonly #startedHour: number;
  #lastGasSample: bigint;
  #hours: ActivityHour[] = [];
  // The highest id the last tally counted, and what was made after it, by hour (counted since).
  #countedThrough: number | undefined;
  #sinceTally = new Map<number, HourCount>();
  #tallying: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #recentTimer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(journal: Pick<TransferJournal, "madeSince">, gasSpentWei: () => bigint, { onError, now = steadyWallClockNow }: TransferActivityOptions) {
    this.#journal = journal;
    this.#gasSpentWei = gasSpentWei;
    this.#now = now;
    this.#onError = onError;
    this.#startedHour = hourOf(now());
    this.#lastGasSample = gasSpentWei();
  }

  /** Tallies now and then every minute. */
  start(): void {
    const tally = () => void this.tally().catch(this.#onError);
    tally();
    this.#timer = setInterval(tally, TALLY_INTERVAL_MS);
    this.#timer.unref();
    this.#recentTimer = setInterval(() => void this.countRecent().catch(this.#onError), RECENT_INTERVAL_MS);
    this.#recentTimer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearInterval(this.#recentTimer);
    await this.#tallying;
  }

  /** The last tally, oldest hour first (waits for the first one). */
  async hours(): Promise<ActivityHour[]> {
    if (this.#hours.length === 0) await this.tally();
    return this.#hours;
  }

  /** Tallies the hours again (one tally at a time: a call during one waits for it). */
  tally(): Promise<void> {
    this.#tallying ??= this.#tally().finally(() => (this.#tallying = undefined));
    return this.#tallying;
  }

  /** Counts what was made since the last tally on top of it (nothing while a tally or a count is under way, or before the first tally). */
  countRecent(): Promise<void> {
    if (this.#tallying || this.#hours.length === 0) return this.#tallying ?? Promise.resolve();
    this.#tallying = this.#countRecent().finally(() => (this.#tallying = undefined));
    return this.#tallying;
  }

  async #countRecent(): Promise<void> {
    const current = hourOf(this.#now());
    this.#sampleGas(current);
    const since = new Map<number, HourCount>();
    let afterId = this.#countedThrough;
    for (;;) {
      // With nothing counted yet, what the current hour holds is all new.
      const slice = this.#journal.madeSince(current, afterId, SLICE_ROWS);
      for (const made of slice) {
        const hour = hourOf(made.createdAt);
        const count = since.get(hour) ?? { sent: 0, mined: 0, failed: 0, inFlight: 0 };
        add(count, made.state);
        since.set(hour, count);
      }
      if (slice.length < SLICE_ROWS || this.#stopped) break;
      afterId = slice[slice.length - 1].id;
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.#sinceTally = since;
    this.#build(current);
  }

  async #tally(): Promise<void> {
    const current = hourOf(this.#now());
    this.#sampleGas(current);
    const first = current - (ACTIVITY_HOURS - 1) * HOUR_MS;
    for (const start of this.#counts.keys()) if (start < first) this.#counts.delete(start);
    for (let start = first; start <= current && !this.#stopped; start += HOUR_MS) {
      const kept = this.#counts.get(start);
      if (kept && start < current - HOUR_MS && kept.inFlight === 0) continue;
      this.#counts.set(start, await this.#count(start, start + HOUR_MS));
    }
    for (const start of this.#gasByHour.keys()) if (start < first) this.#gasByHour.delete(start);
    // What was made after the highest id counted is the next count's.
    this.#sinceTally = new Map();
    this.#build(current);
  }

  // The hours shown: each one's tally, and what was made since on top.
  #build(current: number): void {
    const hours: ActivityHour[] = [];
    for (let start = current - (ACTIVITY_HOURS - 1) * HOUR_MS; start <= current; start += HOUR_MS) {
      const counted = this.#counts.get(start);
      const since = this.#sinceTally.get(start);
      const sum = (field: "sent" | "mined" | "failed") => (counted?.[field] ?? 0) + (since?.[field] ?? 0);
      hours.push({ start, sent: sum("sent"), mined: sum("mined"), failed: sum("failed"), gasSpentWei: start < this.#startedHour ? null : (this.#gasByHour.get(start) ?? 0n) });
    }
    this.#hours = hours;
  }

  // The transfers made from `start` to before `end`, in slices (times rise with ids: the walk stops at the
  // first one made at or after `end`).
  async #count(start: number, end: number): Promise<HourCount> {
    const count: HourCount = { sent: 0, mined: 0, failed: 0, inFlight: 0 };
    let afterId: number | undefined;
    for (;;) {
      const slice = this.#journal.madeSince(start, afterId, SLICE_ROWS);
      for (const made of slice) {
        if (made.createdAt >= end) return count;
        add(count, made.state);
        this.#countedThrough = Math.max(this.#countedThrough ?? made.id, made.id);
      }
      if (slice.length < SLICE_ROWS) return count;
      afterId = slice[slice.length - 1].id;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  // What the wallets spent since the last sample goes to the hour it is seen in.
  #sampleGas(hour: number): void {
    const total = this.#gasSpentWei();
    if (total > this.#lastGasSample) this.#gasByHour.set(hour, (this.#gasByHour.get(hour) ?? 0n) + (total - this.#lastGasSample));
    this.#lastGasSample = total;
  }
}

function add(count: HourCount, state: JournalState): void {
  if (SENT.has(state)) count.sent++;
  if (state === "nonce-used") count.mined++;
  if (FAILED.has(state)) count.failed++;
  if (IN_FLIGHT.has(state)) count.inFlight++;
}

function hourOf(time: number): number {
  return Math.floor(time / HOUR_MS) * HOUR_MS;
}
