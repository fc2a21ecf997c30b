/**
 * At most `limit` calls to the node at once; the rest wait their turn, first come first served. A node
 * flooded with hundreds of concurrent calls answers each of them slowly, and past the request time-out
 * they fail although the node was only busy: queued here, a call's time-out starts when it is sent.
 */
export class CallGate {
  #inFlight = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  /** Calls waiting for a turn right now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Calls sent or waiting for a turn, not answered yet. */
  get underWay(): number {
    return this.#inFlight + this.#waiting.length;
  }

  /** Runs `call` once fewer than `limit` calls are under way. */
  async run<T>(call: () => Promise<T>): Promise<T> {
    if (this.#inFlight >= this.limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#inFlight++;
    try {
      return await call();
    } finally {
      // The turn passes straight to the next waiting call, so none can jump the queue meanwhile.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#inFlight--;
    }
  }
}
