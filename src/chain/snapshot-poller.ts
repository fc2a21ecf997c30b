/**
 * Keeps the wallet snapshot fresh without spending node calls on nothing: the latest block is read every
 * `busyIntervalMs` while transfers are in flight (their settlement needs the mined nonce count), every
 * `idleIntervalMs` otherwise, and the rest of the snapshot is read only when a new block arrived and
 * something needs it. A request that needs a fresh snapshot asks for one (ensureFresh).
 */
import { monotonicNow } from "../clock.js";
import type { FeeBlock, WalletSnapshot } from "./wallet-snapshot.js";

export interface SnapshotPollerOptions {
  initial: WalletSnapshot;
  readBlock: () => Promise<FeeBlock>;
  readSnapshot: (block?: FeeBlock) => Promise<WalletSnapshot>;
  onSnapshot: (snapshot: WalletSnapshot) => void;
  onError: (error: unknown) => void;
  /** True while something needs the snapshot to follow every block (transfers in flight). */
  isBusy: () => boolean;
  busyIntervalMs: number;
  idleIntervalMs: number;
}

export class SnapshotPoller {
  readonly #options: SnapshotPollerOptions;
  #latest: WalletSnapshot;
  #timer: NodeJS.Timeout | undefined;
  #timerIsIdle = false;
  #stopped = true;
  #refreshing: Promise<void> | undefined;
  #ticking: Promise<void> | undefined;

  constructor(options: SnapshotPollerOptions) {
    this.#options = options;
    this.#latest = options.initial;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule();
  }

  /** Makes sure the snapshot is at most `maxAgeMs` old, reading one now if it is not. */
  async ensureFresh(maxAgeMs: number): Promise<void> {
    this.wake();
    if (monotonicNow() - this.#latest.readAt <= maxAgeMs) return;
    await this.#refresh();
  }

  /** Work arrived: poll at the busy interval from now on, not at the end of an idle wait. */
  wake(): void {
    if (this.#stopped || !this.#timerIsIdle) return;
    clearTimeout(this.#timer);
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all([this.#ticking, this.#refreshing]);
  }

  #schedule(): void {
    if (this.#stopped) return;
    const busy = this.#options.isBusy();
    this.#timerIsIdle = !busy;
    this.#timer = setTimeout(() => {
      this.#ticking = this.#tick().finally(() => {
        this.#ticking = undefined;
        this.#schedule();
      });
    }, busy ? this.#options.busyIntervalMs : this.#options.idleIntervalMs).unref();
  }

  async #tick(): Promise<void> {
    try {
      const block = await this.#options.readBlock();
      if (block.number > this.#latest.blockNumber && this.#options.isBusy()) await this.#refresh(block);
    } catch (error) {
      this.#options.onError(error);
    }
  }

  // Concurrent refreshes share one read.
  #refresh(block?: FeeBlock): Promise<void> {
    this.#refreshing ??= this.#options
      .readSnapshot(block)
      .then((snapshot) => {
        if (snapshot.blockNumber >= this.#latest.blockNumber) this.#latest = snapshot;
        this.#options.onSnapshot(snapshot);
      }, this.#options.onError)
      .finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }
}
