/**
 * While new transfers wait for room in a lane, reads the wallet's mined nonce count on its own (one call,
 * instead of a whole snapshot at the next poll): room a block freed is taken as soon as it is seen, so the
 * in-flight limit bounds what the node's pool holds, not how fast a fast chain goes. On an automining node
 * every transfer is a block of its own, and a lane that learnt of them once a second carried at most
 * MAX_IN_FLIGHT_PER_LANE a second.
 *
 * Paced by what it finds: after a read that showed transactions mined, or when the lane sent more since
 * the last read, the next comes FAST_MS later; otherwise twice as late as the last, up to `slowestMs` (the
 * lane's busy poll interval): a slow chain is asked about once per interval, an automining one as fast as
 * it mines. Idle (nobody waiting) it reads nothing.
 *
 * A lane with transfers waiting whose count has not moved for many times the gap this chain has shown
 * between two counts (STALL_GAPS; at least STALLED_AFTER_MS, at most `slowestMs`) is told once per count
 * (`onStalled`): on an automining node a quarter second of nothing is a lost transaction, where a chain of
 * slow blocks is given the lane's poll interval. The node may have lost the transaction at that nonce (a
 * node that takes a transaction and drops it leaves every later nonce of the wallet waiting, and one that
 * holds it without counting it as pending never mines it), so the lane does at once what its background
 * does after REBROADCAST_AFTER_MS: the journaled bytes again, or a replacement at the same nonce. One
 * nonce: nothing can be paid twice.
 */
import { monotonicNow } from "../clock.js";

/** The soonest read after one that showed progress: at most 100 reads a second while transfers wait. */
export const FAST_MS = 10;

/** The shortest the count may stand still, transfers waiting, before the lane is told (`onStalled`). */
export const STALLED_AFTER_MS = 250;

/** How many of the chain's usual gaps between two counts make a stall. */
const STALL_GAPS = 20;

export interface MinedNonceWatchOptions {
  readMinedNonceCount: () => Promise<number>;
  /** The highest nonce the lane has sent: more sent since the last read may be mined already. */
  highestNonceSent: () => number;
  onCount: (count: number) => void;
  /** Whether transfers wait for room in this lane now. */
  isWanted: () => boolean;
  onError: (error: unknown) => void;
  /**
   * The count has not moved for a stall's time (see the module's comment) while transfers wait: once per
   * count. Resolves true when the lane sent something that should be mined soon (the count is then read
   * again FAST_MS later).
   */
  onStalled: (count: number) => Promise<boolean>;
  /** The longest pause between reads while wanted (CHAIN_REFRESH_INTERVAL_MS). */
  slowestMs: number;
}

export class MinedNonceWatch {
  readonly #options: MinedNonceWatchOptions;
  #running: Promise<void> | undefined;
  readonly #stopping = new AbortController();
  #lastCount = -1;
  #lastSent = -1;
  #stalledAt = -1;
  #progressAt = 0;
  // When the count last rose, and the usual time between two rises (a moving average from the slowest pace).
  #countRoseAt: number | undefined;
  #usualGapMs: number | undefined;

  constructor(options: MinedNonceWatchOptions) {
    this.#options = options;
  }

  /** Transfers started waiting: reads begin, unless they run already. */
  wake(): void {
    if (this.#stopping.signal.aborted || this.#running) return;
    this.#running = this.#watch().finally(() => (this.#running = undefined));
  }

  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.#running;
  }

  async #watch(): Promise<void> {
    let pauseMs = FAST_MS;
    this.#progressAt = monotonicNow();
    // The chain's pace is learnt while transfers wait: a rise across a pause with nobody waiting (a second
    // between bursts) is no gap of the chain's, and would hold the stall check near the slowest pace.
    this.#countRoseAt = undefined;
    const { signal } = this.#stopping;
    while (!signal.aborted && this.#options.isWanted()) {
      try {
        const sent = this.#options.highestNonceSent();
        const count = await this.#options.readMinedNonceCount();
        const progressed = count > this.#lastCount || sent > this.#lastSent;
        if (count > this.#lastCount) this.#noteCountRose();
        this.#lastCount = Math.max(this.#lastCount, count);
        this.#lastSent = Math.max(this.#lastSent, sent);
        this.#options.onCount(count);
        let helped = false;
        if (progressed) this.#progressAt = monotonicNow();
        else if (monotonicNow() - this.#progressAt >= this.#stallAfterMs() && this.#stalledAt !== count) {
          this.#stalledAt = count;
          helped = await this.#options.onStalled(count);
        }
        pauseMs = progressed || helped ? FAST_MS : Math.min(pauseMs * 2, this.#options.slowestMs, this.#untilStall(count));
      } catch (error) {
        this.#options.onError(error);
        pauseMs = this.#options.slowestMs;
      }
      await pause(pauseMs, signal);
    }
  }

  #noteCountRose(): void {
    const now = monotonicNow();
    if (this.#countRoseAt !== undefined) {
      // From the slowest pace down, a fifth of the way a rise: one quick rise (a lagging backend, then one
      // ahead) does not make a slow chain look fast; about twenty in a row do.
      const gap = now - this.#countRoseAt;
      this.#usualGapMs = 0.8 * (this.#usualGapMs ?? this.#options.slowestMs) + 0.2 * gap;
    }
    this.#countRoseAt = now;
  }

  // Backing off, the read after the one that finds nothing is not put past the moment this count would
  // be a stall: a stall is told then, not up to twice as late (reads 10, 30, 70 ... 1,270 ms after progress).
  #untilStall(count: number): number {
    if (this.#stalledAt === count) return Number.POSITIVE_INFINITY;
    return Math.max(FAST_MS, Math.ceil(this.#stallAfterMs() - (monotonicNow() - this.#progressAt)));
  }

  #stallAfterMs(): number {
    const { slowestMs } = this.#options;
    const usual = this.#usualGapMs === undefined ? slowestMs : Math.min(slowestMs, STALL_GAPS * this.#usualGapMs);
    return Math.max(STALLED_AFTER_MS, usual);
  }
}

// A pause that stopping cuts short, and that does not keep the process alive.
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms).unref();
    signal.addEventListener("abort", done);
  });
}
