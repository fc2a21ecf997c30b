import { monotonicNow } from "../clock.js";

/**
 * After this long without a fresh count of the wallet's transactions (its own read, a wallet snapshot's or the
 * outflow watch's: noteChainCount), the pending count is read again before the next nonce: another sender of
 * the key may have used nonces meanwhile, and a transfer signed at a used nonce is held until that use is
 * found on the chain and final (minutes on a rollup). Busy, the lane's snapshots keep the count fresh: no read
 * of its own; idle, one read when work resumes, shared by the transfers that wait for it.
 */
export const COUNT_STALE_AFTER_MS = 2_000;

/**
 * Hands out the hot wallet's nonces in the process: every nonce to exactly one transaction, and none
 * skipped but those the chain shows another sender of the key used. Taking a nonce is synchronous, so
 * transfers can be broadcast concurrently while their nonces stay unique; a nonce the node surely refused is
 * given back and reused first, so no gap remains.
 */
export class NonceAllocator {
  #next: number | undefined;
  #released: number[] = [];
  // When each given-back nonce was given back (monotonic ms).
  readonly #releasedAt = new Map<number, number>();
  #reading: Promise<void> | undefined;
  // When a fresh count of the chain's was last known (monotonic ms): its own read, or one noted.
  #countKnownAt = 0;

  /**
   * `readPendingNonce`: the chain's count of the wallet's transactions, mined or pending; `readMinedNonce`:
   * mined only (where the two are the same, one reader serves for both).
   */
  constructor(
    private readonly readPendingNonce: () => Promise<number>,
    private readonly readMinedNonce: () => Promise<number> = readPendingNonce,
  ) {}

  /**
   * Reads the sequence from the chain the first time, and the chain's pending count again when no fresh
   * count was known for `maxAgeMs`; concurrent callers share the read.
   */
  async ready(maxAgeMs = COUNT_STALE_AFTER_MS): Promise<void> {
    if (this.#next !== undefined && monotonicNow() - this.#countKnownAt <= maxAgeMs) return;
    // One read: new nonces start past the chain's pending count (given-back ones stay: see
    // catchUpWithChain). A read that fails changes nothing; the next nonce is taken as before.
    const askedAt = monotonicNow();
    this.#reading ??= this.readPendingNonce()
      .then(
        (pending) => {
          this.#next = Math.max(this.#next ?? pending, pending);
          this.#countKnownAt = Math.max(this.#countKnownAt, askedAt);
        },
        (error: unknown) => {
          if (this.#next === undefined) throw error;
        },
      )
      .finally(() => (this.#reading = undefined));
    await this.#reading;
  }

  /**
   * The wallet's mined count at a block (a fact, from the wallet snapshot): new nonces start at it or
   * above, and given-back nonces below it are dropped (something else was mined there).
   */
  passMined(minedCount: number): void {
    if (this.#next === undefined) return;
    this.#next = Math.max(this.#next, minedCount);
    // Sorted: most calls find nothing below the count, and change nothing.
    if ((this.#released[0] ?? Infinity) >= minedCount) return;
    this.#released = this.#released.filter((nonce) => nonce >= minedCount);
    for (const nonce of this.#releasedAt.keys()) if (nonce < minedCount) this.#releasedAt.delete(nonce);
  }

  /**
   * The wallet's mined count as just read from the chain (a snapshot's, the outflow watch's): passMined, and
   * the count is known fresh, so that no read of its own is due before the next nonce.
   */
  noteChainCount(minedCount: number, readAt = monotonicNow()): void {
    this.passMined(minedCount);
    this.#countKnownAt = Math.max(this.#countKnownAt, readAt);
  }

  /** The lowest given-back nonce, else the next new one. Call after ready(). */
  take(): number {
    if (this.#next === undefined) throw new Error("NonceAllocator.take() before ready()");
    const released = this.#released.shift();
    if (released === undefined) return this.#next++;
    this.#releasedAt.delete(released);
    return released;
  }

  /**
   * The lowest given-back nonce if no transfer took it since before `before` (monotonic ms), taken: the
   * wallet's later transactions wait behind it, so something else must fill it.
   */
  takeGivenBackBefore(before: number): number | undefined {
    const lowest = this.#released[0];
    if (lowest === undefined || (this.#releasedAt.get(lowest) ?? Infinity) >= before) return undefined;
    this.#released.shift();
    this.#releasedAt.delete(lowest);
    return lowest;
  }

  /** Whether `nonce` was given back and waits for a transfer (or the gap filler) to take it. */
  isGivenBack(nonce: number): boolean {
    return this.#released.includes(nonce);
  }

  /** The nonce the next transfer would take; undefined until the chain was read. */
  peek(): number | undefined {
    return this.#released[0] ?? this.#next;
  }

  /** Gives back a nonce the node surely refused: nothing holds it, and the next transfer fills it. */
  release(nonce: number): void {
    if (this.#next === undefined || nonce >= this.#next || this.#released.includes(nonce)) return;
    this.#released.push(nonce);
    this.#released.sort((a, b) => a - b);
    this.#releasedAt.set(nonce, monotonicNow());
  }

  /**
   * A node called a nonce used (its transaction stays held at it: the chain decides its fate). New nonces
   * start past every nonce the chain counts (mined or pending). Given-back nonces are dropped only below the
   * mined count, which is a fact: some nodes count transactions queued behind a gap as pending, and dropping
   * the gap there would jam the wallet for good (a given-back nonce some pool does hold costs one refusal, or
   * the gap filler finds it used). When the counts cannot be read, nothing changes.
   */
  async catchUpWithChain(): Promise<void> {
    let pending: number;
    let mined: number;
    try {
      [pending, mined] = await Promise.all([this.readPendingNonce(), this.readMinedNonce()]);
    } catch {
      return;
    }
    this.#countKnownAt = monotonicNow();
    this.#next = Math.max(this.#next ?? pending, pending);
    this.#released = this.#released.filter((nonce) => nonce >= mined);
    for (const nonce of this.#releasedAt.keys()) if (nonce < mined) this.#releasedAt.delete(nonce);
  }
}
