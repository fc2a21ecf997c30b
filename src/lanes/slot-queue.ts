/**
 * Transfers waiting for room: new ones in a full wallet (or pool), signed ones for room at the node. First
 * come, first served. A waiter gives up when no room freed for TRANSFER_SLOT_WAIT_MS (the wallet is stuck,
 * retrying later is better), but not while the queue moves: a burst larger than the wallet holds, on a chain
 * whose blocks take seconds, drains at the pace of its blocks instead of being mostly refused. Nobody waits
 * longer than MOVING_WAIT_LIMIT times TRANSFER_SLOT_WAIT_MS all told (one that no room fits, behind others).
 *
 * Room is taken synchronously by the `take` function each waiter brings, which checks and counts in one
 * step: when several slots free at once (a block mined many), the waiters take them in the order they
 * came, each seeing the ones before it, so the cap is never overrun by waiters resuming later. A waiter
 * that cannot use the room (a pool's transfer only one full lane can pay) does not hold up the ones behind.
 */

import { monotonicNow } from "../clock.js";

/** Waiting transfers at most; past this a new one is refused at once (it would wait behind too many anyway). */
export const MAX_WAITING = 1_024;

/** The longest wait all told, in multiples of the wait allowed without room freeing. */
export const MOVING_WAIT_LIMIT = 6;

interface Waiter {
  take: () => boolean;
  resolve: (took: boolean) => void;
  timer: NodeJS.Timeout;
}

export class SlotQueue {
  readonly #waiting: Waiter[] = [];
  readonly #onWaiting: (() => void)[] = [];
  // When a waiter last took room (monotonic ms): the queue moved.
  #movedAt = Number.NEGATIVE_INFINITY;

  /**
   * `movingWaitLimit`: the longest wait all told, in multiples of the wait allowed without room freeing; 1
   * where a waiter has somewhere else to go once that wait is over (a signed transfer is answered 200 and
   * sent in the background).
   */
  constructor(private readonly movingWaitLimit = MOVING_WAIT_LIMIT) {}

  /** Calls `listener` whenever a transfer starts waiting (the lanes then look for room freed sooner). */
  onWaiting(listener: () => void): void {
    this.#onWaiting.push(listener);
  }

  /**
   * Resolves true once `take` succeeded (it counted the transfer in), false when `maxWaitMs` passed with no
   * waiter taking room (or the wait reached its limit), or too many are waiting. Takes at once when nobody
   * waits ahead and there is room.
   */
  take(take: () => boolean, maxWaitMs: number): Promise<boolean> {
    if (this.#waiting.length === 0 && take()) return Promise.resolve(true);
    if (maxWaitMs <= 0 || this.#waiting.length >= MAX_WAITING) return Promise.resolve(false);
    const since = monotonicNow();
    const waiting = new Promise<boolean>((resolve) => {
      const giveUpUnlessMoving = () => {
        const now = monotonicNow();
        const quietUntil = Math.max(since, this.#movedAt) + maxWaitMs;
        const limit = since + this.movingWaitLimit * maxWaitMs;
        if (now < quietUntil && now < limit) {
          waiter.timer = setTimeout(giveUpUnlessMoving, Math.min(quietUntil, limit) - now);
          return;
        }
        const index = this.#waiting.indexOf(waiter);
        if (index >= 0) this.#waiting.splice(index, 1);
        resolve(false);
      };
      const waiter: Waiter = { take, resolve, timer: setTimeout(giveUpUnlessMoving, maxWaitMs) };
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
      this.#movedAt = monotonicNow();
      waiter.resolve(true);
    }
  }

  /** Transfers waiting now. */
  get size(): number {
    return this.#waiting.length;
  }
}
