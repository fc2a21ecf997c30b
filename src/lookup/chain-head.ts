/** The chain head, tracked once for the whole process and never older than a bound when used. */
import type { JsonRpcProvider } from "ethers";
import { monotonicNow } from "../clock.js";

export interface ChainHead {
  number: number;
  hash: string;
  parentHash: string;
  /** When it was read (monotonic ms). */
  readAt: number;
}

/** Called with the previous and the new head before anyone is given the new one. */
export type HeadListener = (previous: ChainHead | undefined, next: ChainHead) => Promise<void>;

/** Reads the latest block's number and hashes. */
export async function readLatestBlock(provider: JsonRpcProvider): Promise<Omit<ChainHead, "readAt">> {
  const block = (await provider.send("eth_getBlockByNumber", ["latest", false])) as { number: string; hash: string; parentHash: string };
  return { number: Number(block.number), hash: block.hash, parentHash: block.parentHash };
}

/**
 * Hands out a head at most `maxAgeMs` old: a cached one when fresh enough, else one read now, with
 * concurrent callers sharing the read. Listeners (reorg checks) run before a new head is handed out.
 */
export class ChainHeadTracker {
  #head: ChainHead | undefined;
  #reading: Promise<ChainHead> | undefined;
  readonly #listeners: HeadListener[] = [];

  constructor(
    private readonly readBlock: () => Promise<Omit<ChainHead, "readAt">>,
    private readonly maxAgeMs: number,
    private readonly now: () => number = monotonicNow,
  ) {}

  onNewHead(listener: HeadListener): void {
    this.#listeners.push(listener);
  }

  /** A head no older than the bound. Throws what the node read throws. */
  async current(): Promise<ChainHead> {
    const head = this.#head;
    if (head && this.now() - head.readAt <= this.maxAgeMs) return head;
    // A read that began before this call may have begun while the node was down: if it fails, one read
    // of our own, so that a node that is back answers at once.
    const joinedEarlierRead = this.#reading !== undefined;
    try {
      return await this.refresh();
    } catch (error) {
      if (!joinedEarlierRead) throw error;
      return this.refresh();
    }
  }

  /** Reads the head now (or joins a read under way). */
  refresh(): Promise<ChainHead> {
    this.#reading ??= (async () => {
      try {
        const block = await this.readBlock();
        return await this.#adopt({ ...block, readAt: this.now() });
      } finally {
        this.#reading = undefined;
      }
    })();
    return this.#reading;
  }

  async #adopt(next: ChainHead): Promise<ChainHead> {
    const previous = this.#head;
    // A load-balanced endpoint answers from backends a block or two apart: a lower head is lag, not a
    // reorganisation, and the chain never goes back for us (a reorg shows as another hash at a height).
    if (previous && next.number < previous.number) {
      this.#head = { ...previous, readAt: next.readAt };
      return this.#head;
    }
    if (!previous || previous.hash !== next.hash) {
      for (const listener of this.#listeners) await listener(previous, next);
    }
    this.#head = next;
    return next;
  }
}
