/**
 * Keeps the wallet snapshot fresh without spending node calls on nothing: the latest block is read every
 * `busyIntervalMs` while transfers are in flight (their settlement needs the mined nonce count), every
 * `idleIntervalMs` otherwise, and its base fee is passed on each time; the rest of the snapshot is read
 * only when a new block arrived and something needs it, or when the block reads show a reorganisation
 * (mined transfers may be off the chain again, whatever is in flight). A request asks for fees or a whole
 * snapshot no older than it needs (ensureFeesFresh, ensureFresh).
 */
import { monotonicNow } from "../clock.js";
import type { ReadBlock } from "./shared-fee-block.js";
import { type FeeBlock, type WalletSnapshot, sameChain } from "../send-path/wallet-snapshot.js";

export interface SnapshotPollerOptions {
  initial: WalletSnapshot;
  /** The latest block, read at most `maxAgeMs` ago (another lane's read may serve). */
  readBlock: (maxAgeMs: number) => Promise<ReadBlock>;
  readSnapshot: (block?: FeeBlock) => Promise<WalletSnapshot>;
  onSnapshot: (snapshot: WalletSnapshot) => void;
  /** Told the base fee of every block read. */
  onBlock: (block: FeeBlock) => void;
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
  #refreshStartedAt = 0;
  #ticking: Promise<void> | undefined;
  #wokenWhileTicking = false;
  #blockReadAt: number;
  #readingBlock: Promise<FeeBlock> | undefined;
  #lastBlock: FeeBlock | undefined;

  constructor(options: SnapshotPollerOptions) {
    this.#options = options;
    this.#latest = options.initial;
    this.#blockReadAt = options.initial.readAt;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule();
  }

  /** Makes sure the snapshot is at most `maxAgeMs` old, reading one now if it is not. */
  async ensureFresh(maxAgeMs: number): Promise<void> {
    this.wake();
    await this.ensureFreshQuietly(maxAgeMs);
  }

  /**
   * The same without waking the poller: a look at a wallet that may get no work (a pool's other lanes).
   * Past half of `maxAgeMs` the snapshot is read again in the background, so that asks coming steadily find
   * it renewed before it is too old, and none waits for the read: a pool's routing asked for balances no
   * older than the busy poll interval, and at a provider's distance every transfer routed in the two round
   * trips of each interval's read waited for them (a tenth of all transfers, 160-190 ms each, at 50 ms a call).
   */
  async ensureFreshQuietly(maxAgeMs: number): Promise<void> {
    const age = monotonicNow() - this.#latest.readAt;
    if (age > maxAgeMs) await this.#refreshStartedWithin(maxAgeMs);
    // Nobody awaits it: a failure it meets (the node's is told to onError; the journal's, writing what the
    // snapshot shows) is the next read's to meet again, not an unhandled rejection that ends the process.
    else if (age > maxAgeMs / 2 && !this.#stopped) this.#refresh().catch(() => undefined);
  }

  /** Makes sure the fees come from a block read at most `maxAgeMs` ago, reading the latest one if not. */
  async ensureFeesFresh(maxAgeMs: number): Promise<void> {
    this.wake();
    if (monotonicNow() - this.#blockReadAt <= maxAgeMs) return;
    try {
      await this.#readBlock(maxAgeMs);
    } catch (error) {
      this.#options.onError(error);
    }
  }

  /**
   * Work arrived: the next read comes at the busy pace, not at the end of an idle wait (the work may not
   * count as busy yet: a transfer is woken for before it holds anything in the ledger).
   */
  wake(): void {
    if (this.#stopped) return;
    // Work that arrives during a read is counted at its end whatever pace the read came at: that read
    // may free the wallet of its last transfers (idle by then), while the work woken has not reserved yet.
    if (this.#ticking) {
      this.#wokenWhileTicking = true;
      return;
    }
    if (!this.#timerIsIdle) return;
    clearTimeout(this.#timer);
    this.#schedule(true);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all([this.#ticking, this.#refreshing]);
  }

  #schedule(woken = false): void {
    if (this.#stopped) return;
    const busy = woken || this.#options.isBusy();
    this.#timerIsIdle = !busy;
    this.#timer = setTimeout(() => {
      this.#ticking = this.#tick().finally(() => {
        this.#ticking = undefined;
        const woken = this.#wokenWhileTicking;
        this.#wokenWhileTicking = false;
        this.#schedule(woken);
      });
    }, busy ? this.#options.busyIntervalMs : this.#options.idleIntervalMs).unref();
  }

  async #tick(): Promise<void> {
    try {
      const previous = this.#lastBlock;
      // A block read by another lane since this poller's last tick serves.
      const block = await this.#readBlock(this.#timerIsIdle ? this.#options.idleIntervalMs : this.#options.busyIntervalMs);
      // After a reorganisation, a read under way may be of the chain before: its own read starts now.
      if (previous && sameChain(previous, block) === false) await this.#refreshStartedWithin(0, block);
      else if (block.number > this.#latest.blockNumber && this.#options.isBusy()) await this.#refresh(block);
    } catch (error) {
      this.#options.onError(error);
    }
  }

  // Concurrent readers share one read. A block this poller was given before is not passed on again.
  #readBlock(maxAgeMs: number): Promise<FeeBlock> {
    this.#readingBlock ??= this.#options
      .readBlock(maxAgeMs)
      .then(({ block, readAt }) => {
        this.#blockReadAt = Math.max(this.#blockReadAt, readAt);
        if (block !== this.#lastBlock) {
          this.#lastBlock = block;
          this.#options.onBlock(block);
        }
        return block;
      })
      .finally(() => (this.#readingBlock = undefined));
    return this.#readingBlock;
  }

  /**
   * A read that started at most `maxAgeMs` ago: one under way since longer (a background read begun before
   * a reorganisation, when 0 asks for one from now) is waited for, and then a read starts.
   */
  async #refreshStartedWithin(maxAgeMs: number, block?: FeeBlock): Promise<void> {
    if (this.#refreshing && monotonicNow() - this.#refreshStartedAt > maxAgeMs) await this.#refreshing.catch(() => undefined);
    await this.#refresh(block);
  }

  // Concurrent refreshes share one read.
  #refresh(block?: FeeBlock): Promise<void> {
    if (!this.#refreshing) this.#refreshStartedAt = monotonicNow();
    this.#refreshing ??= this.#options
      .readSnapshot(block)
      .then((snapshot) => {
        if (snapshot.blockNumber >= this.#latest.blockNumber) this.#latest = snapshot;
        this.#blockReadAt = Math.max(this.#blockReadAt, snapshot.readAt);
        this.#options.onSnapshot(snapshot);
      }, this.#options.onError)
      .finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }
}
