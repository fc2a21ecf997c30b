/**
 * New transfers waiting for room in a wallet (or a pool) that holds MAX_IN_FLIGHT_PER_LANE unmined
 * transactions: first come, first served, each for at most a bounded time (TRANSFER_SLOT_WAIT_MS).
 *
 * Room is taken synchronously by the `take` function each waiter brings, which checks and counts in one
 * step: when several slots free at once (a block mined many), the waiters at the front take them one by
 * one, each seeing the ones before it, so the cap is never overrun by waiters resuming later.
 */

/** Waiting transfers at most; past this a new one is refused at once (it would wait behind too many anyway). */
export const MAX_WAITING = 1_024;

interface Waiter {
  take: () => boolean;
  resolve: (took: boolean) => void;
  timer: NodeJS.Timeout;
}

export class SlotQueue {
  readonly #waiting: Waiter[] = [];
  readonly #onWaiting: (() => void)[] = [];

  /** Calls `listener` whenever a transfer starts waiting (the lanes then look for room freed sooner). */
  onWaiting(listener: () => void): void {
    this.#onWaiting.push(listener);
  }

  /**
   * Resolves true once `take` succeeded (it counted the transfer in), false when `maxWaitMs` passed first
   * or too many are waiting. Takes at once when nobody waits ahead and there is room.
   */
  take(take: () => boolean, maxWaitMs: number): Promise<boolean> {
    if (this.#waiting.length === 0 && take()) return Promise.resolve(true);
    if (maxWaitMs <= 0 || this.#waiting.length >= MAX_WAITING) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        take,
        resolve,
        timer: setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
          resolve(false);
        }, maxWaitMs),
      };
      this.#waiting.push(waiter);
      for (const listener of this.#onWaiting) listener();
    });
  }

  /** Room may have freed (a transaction mined, a transfer refused): the waiters at the front take it. */
  wake(): void {
    while (this.#waiting.length > 0 && this.#waiting[0].take()) {
      const waiter = this.#waiting.shift() as Waiter;
      clearTimeout(waiter.timer);
      waiter.resolve(true);
    }
  }

  /** Transfers waiting now. */
  get size(): number {
    return this.#waiting.length;
  }
}
