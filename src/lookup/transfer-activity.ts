/**
 * The last hours of transfers and gas, hour by hour, for the console's charts (GET /transfers/activity).
 *
 * Counts come from the journal: each hour's transfers (by when they were asked for) by what became of
 * them. They are tallied in the background, once a minute, in slices of SLICE_ROWS with other work
 * between slices, so a request only reads the last tally: however busy the day, nothing on the request
 * path walks it. Gas is what the wallets' ETH balances went down by (see start-lane's gasSpentWei),
 * sampled at each tally into the hour it was seen in; hours before this process started have none.
 */
import { steadyWallClockNow } from "../clock.js";
import type { JournalState, TransferJournal } from "../journal/transfer-journal.js";

const HOUR_MS = 3_600_000;
/** The hours shown: the current one and those before it. */
export const ACTIVITY_HOURS = 24;
/** How often the tally is made again. */
const TALLY_INTERVAL_MS = 60_000;
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

export class TransferActivity {
  readonly #journal: Pick<TransferJournal, "madeSince">;
  readonly #gasSpentWei: () => bigint;
  readonly #now: () => number;
  // Gas seen spent, by the hour it was seen in; and the running total at the last sample.
  readonly #gasByHour = new Map<number, bigint>();
  readonly #startedHour: number;
  #lastGasSample: bigint;
  #hours: ActivityHour[] = [];
  #tallying: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(journal: Pick<TransferJournal, "madeSince">, gasSpentWei: () => bigint, now: () => number = steadyWallClockNow) {
    this.#journal = journal;
    this.#gasSpentWei = gasSpentWei;
    this.#now = now;
    this.#startedHour = hourOf(now());
    this.#lastGasSample = gasSpentWei();
  }

  /** Tallies now and then every minute. */
  start(): void {
    void this.tally();
    this.#timer = setInterval(() => void this.tally(), TALLY_INTERVAL_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
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

  async #tally(): Promise<void> {
    const now = this.#now();
    const current = hourOf(now);
    this.#sampleGas(current);
    const first = current - (ACTIVITY_HOURS - 1) * HOUR_MS;
    const hours = new Map<number, ActivityHour>();
    for (let start = first; start <= current; start += HOUR_MS) {
      hours.set(start, { start, sent: 0, mined: 0, failed: 0, gasSpentWei: start < this.#startedHour ? null : (this.#gasByHour.get(start) ?? 0n) });
    }
    let afterId: number | undefined;
    for (;;) {
      const slice = this.#journal.madeSince(first, afterId, SLICE_ROWS);
      for (const made of slice) {
        const hour = hours.get(hourOf(made.createdAt));
        if (!hour) continue;
        if (SENT.has(made.state)) hour.sent++;
        if (made.state === "nonce-used") hour.mined++;
        if (FAILED.has(made.state)) hour.failed++;
      }
      if (slice.length < SLICE_ROWS || this.#stopped) break;
      afterId = slice[slice.length - 1].id;
      await new Promise((resolve) => setImmediate(resolve));
    }
    for (const start of this.#gasByHour.keys()) if (start < first) this.#gasByHour.delete(start);
    this.#hours = [...hours.values()];
  }

  // What the wallets spent since the last sample goes to the hour it is seen in.
  #sampleGas(hour: number): void {
    const total = this.#gasSpentWei();
    if (total > this.#lastGasSample) this.#gasByHour.set(hour, (this.#gasByHour.get(hour) ?? 0n) + (total - this.#lastGasSample));
    this.#lastGasSample = total;
  }
}

function hourOf(time: number): number {
  return Math.floor(time / HOUR_MS) * HOUR_MS;
}
