/**
 * Requests per client in fixed windows, in bounded memory and constant time: the per-key rate limit and the
 * count of requests without a valid key per address both run it on every request, where a scan of every
 * client would let many clients (an IPv6 range, forged X-Forwarded-For) hold the event loop.
 */

/** Clients counted at once per counter; past this, the client whose window started longest ago goes. */
export const TRACKED_CLIENTS = 10_000;

/** Where a client stands after a request was counted. */
export interface WindowCount {
  /** Requests left in the window; negative once over the limit. */
  left: number;
  /** Milliseconds until the window ends and the count starts again. */
  resetInMs: number;
}

/**
 * Counts requests per client in fixed windows, each starting at the client's first request after the last
 * one ended. Synchronous and in memory: it runs on every request, which a promise per request would slow.
 */
interface Window {
  client: string;
  count: number;
  endsAt: number;
}

export class FixedWindowCounter {
  readonly #windows = new Map<string, Window>();
  // Every window in the order it started; `#first` is where the live ones begin. A window ends before every
  // window started after it, so the ended ones are always at the front: each is dropped once, by the
  // newcomer that finds it there. (A Map's own order will not do: V8 skips the holes that deleting from its
  // front leaves, which makes taking its first entry slower the more were taken.)
  #order: Window[] = [];
  #first = 0;

  constructor(
    readonly max: number,
    readonly windowMs: number,
  ) {}

  /** Counts one request of `client` at `now`. */
  count(client: string, now: number): WindowCount {
    let window = this.#windows.get(client);
    if (window !== undefined && window.endsAt <= now) {
      this.#windows.delete(client);
      window = undefined;
    }
    if (window === undefined) {
      this.#makeRoom(now);
      window = { client, count: 0, endsAt: now + this.windowMs };
      this.#windows.set(client, window);
      this.#order.push(window);
    }
    window.count++;
    return { left: this.max - window.count, resetInMs: window.endsAt - now };
  }

  /** Clients counted now. */
  get size(): number {
    return this.#windows.size;
  }

  #makeRoom(now: number): void {
    // Ended windows, and those a client's later window replaced, leave from the front.
    while (this.#first < this.#order.length) {
      const oldest = this.#order[this.#first];
      const live = this.#windows.get(oldest.client) === oldest;
      if (live && oldest.endsAt > now) break;
      if (live) this.#windows.delete(oldest.client);
      this.#first++;
    }
    // Still full: the client whose window started longest ago goes (its count starts again if it comes back).
    if (this.#windows.size >= TRACKED_CLIENTS) {
      this.#windows.delete(this.#order[this.#first].client);
      this.#first++;
    }
    if (this.#first > 1024 && this.#first * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#first);
      this.#first = 0;
    }
  }
}
