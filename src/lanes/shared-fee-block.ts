/**
 * The latest block as every lane's poller reads it: a block one lane read recently enough serves the
 * others, so the idle cost of a pool is one block read per interval, not one per lane (four idle lanes
 * read four blocks every 5 s). Each poller asks for a block no older than its own pace: it learns of new
 * blocks no later than it would reading alone.
 */
import { monotonicNow } from "../clock.js";
import type { FeeBlock } from "../send-path/wallet-snapshot.js";

/** A block and when it was read (monotonic ms). */
export interface ReadBlock {
  block: FeeBlock;
  readAt: number;
}

export class SharedFeeBlock {
  #latest: ReadBlock | undefined;
  #reading: Promise<ReadBlock> | undefined;

  constructor(private readonly read: () => Promise<FeeBlock>) {}

  /** The latest block read at most `maxAgeMs` ago, reading it now when there is none; concurrent reads are one. */
  latest(maxAgeMs: number): Promise<ReadBlock> {
    const latest = this.#latest;
    if (latest && monotonicNow() - latest.readAt <= maxAgeMs) return Promise.resolve(latest);
    this.#reading ??= this.read()
      .then((block) => (this.#latest = { block, readAt: monotonicNow() }))
      .finally(() => (this.#reading = undefined));
    return this.#reading;
  }
}
