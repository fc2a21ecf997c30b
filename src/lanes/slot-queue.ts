/**
 * Transfers waiting for room: new ones in a full wallet (or pool), signed ones for room at the node. First
 * come, first served, each for at most a bounded time (TRANSFER_SLOT_WAIT_MS).
 *
 * Room is taken synchronously by the `take` function each waiter brings, which checks and counts in one
 * step: when several slots free at once (a block mined many), the waiters take them in the order they
 * came, each seeing the ones before it, so the cap is never overrun by waiters resuming later. A waiter
 * that cannot use the room (a pool's transfer only one full lane can pay) does not hold up the ones behind.
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
    const waiting = new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        take,
        resolve,
        timer: setTimeout(() => {
          const index = this.#waiting.indexOf(waiter);
          if (index >= 0) this.#waiting.splice(index, 1);
          resolve(false);
        }, maxWaitMs),
      };
      this.#waiting.push(waiter);
      for (const listener of this.#onWaiting) listener();
    });
    // Behind the others, but the room they cannot use may be this one's.
    this.wake();
    return waiting;
  }

  /** Room may have freed (a transaction mined, a transfer refused): each waiter, in turn, takes what it can use. */
  wake(): void {
    // At most MAX_WAITING, each a few comparisons.
    for (let index = 0; index < this.#waiting.length; ) {
      const waiter = this.#waiting[index];
      if (!waiter.take()) {
        index++;
        continue;
      }
      this.#waiting.splice(index, 1);
      clearTimeout(waiter.timer);
      waiter.resolve(true);
    }
  }

  /** Transfers waiting now. */
  get size(): number {
    return this.#waiting.length;
  }
}
