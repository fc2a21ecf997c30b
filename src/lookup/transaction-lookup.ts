/**
 * Looks transactions up on the node, with a bounded cache of mined ones (their content does not change,
 * unless a reorg moves them, which the cache watches for) and one node request per hash at a time.
 */
import { type JsonRpcProvider, toQuantity } from "ethers";
import type { ChainHead, ChainHeadTracker } from "./chain-head.js";
import { asNodeUnavailable } from "../node/ethers-errors.js";

/** A transaction as the node's `eth_getTransactionByHash` returns it: hex quantities, untouched. */
export type RpcTransaction = Record<string, unknown> & { blockNumber?: string | null; blockHash?: string | null };

/** A receipt as `eth_getTransactionReceipt` returns it. */
export type RpcReceipt = Record<string, unknown> & { status?: string; gasUsed?: string; effectiveGasPrice?: string };

/** A transaction and the head its confirmations are counted from. */
export interface FoundTransaction {
  transaction: RpcTransaction;
  latestBlockNumber: number;
}

/**
 * Confirmations as ethers v5 counted them: 0 while pending, else the blocks from the transaction's block
 * to the head, both included (a head read just before the block arrived still means 1).
 */
export function countConfirmations(transaction: RpcTransaction, latestBlockNumber: number): number {
  return transaction.blockNumber == null ? 0 : Math.max(1, latestBlockNumber - Number(transaction.blockNumber) + 1);
}

interface MinedEntry {
  transaction: RpcTransaction;
  blockNumber: number;
  blockHash: string;
  receipt?: RpcReceipt;
}

/** Cached transactions in blocks older than this many blocks below the head are taken as final. */
const REORG_WINDOW_BLOCKS = 256;

export class TransactionLookup {
  readonly #mined = new Map<string, MinedEntry>();
  readonly #fetching = new Map<string, Promise<RpcTransaction | null>>();
  // Bumped by every reorg: a fetch that began before it must not fill the cache with what it saw.
  #generation = 0;

  constructor(
    private readonly provider: JsonRpcProvider,
    private readonly head: ChainHeadTracker,
    private readonly capacity = 10_000,
  ) {
    head.onNewHead((previous, next) => this.#evictReorganised(previous, next));
  }

  /** How many mined transactions are cached. */
  get cachedCount(): number {
    return this.#mined.size;
  }

  /**
   * Finds a transaction by (lowercase) hash; null when the node does not know it. Mined ones come from
   * the cache; pending and unknown ones are asked of the node every time. Node faults: NODE_UNAVAILABLE.
   */
  async find(hash: string): Promise<FoundTransaction | null> {
    return this.#asLookupError(async () => {
      const cached = this.#mined.get(hash);
      if (cached) {
        const head = await this.head.current();
        // The head update may have evicted it (a reorg): then ask the node.
        if (this.#mined.has(hash)) return { transaction: cached.transaction, latestBlockNumber: head.number };
      }
      const [head, transaction] = await Promise.all([this.head.current(), this.#fetchSharedOrOwn(hash)]);
      return transaction && { transaction, latestBlockNumber: head.number };
    });
  }

  /** The receipt of a mined transaction (cached with it); null while pending or unknown. */
  async receipt(hash: string): Promise<RpcReceipt | null> {
    return this.#asLookupError(async () => {
      const cached = this.#mined.get(hash);
      if (cached?.receipt) return cached.receipt;
      const receipt = (await this.provider.send("eth_getTransactionReceipt", [hash])) as RpcReceipt | null;
      const entry = this.#mined.get(hash);
      if (receipt && entry && receipt.blockHash === entry.blockHash) entry.receipt = receipt;
      return receipt;
    });
  }

  // Joins a fetch of the same hash under way; if that one fails (it may have begun while the node was
  // down), fetches once more on its own, so a node that is back answers at once.
  async #fetchSharedOrOwn(hash: string): Promise<RpcTransaction | null> {
    const joined = this.#fetching.has(hash);
    try {
      return await this.#fetchOnce(hash);
    } catch (error) {
      if (!joined) throw error;
      return this.#fetchOnce(hash);
    }
  }

  #fetchOnce(hash: string): Promise<RpcTransaction | null> {
    let fetching = this.#fetching.get(hash);
    if (!fetching) {
      const generation = this.#generation;
      fetching = (this.provider.send("eth_getTransactionByHash", [hash]) as Promise<RpcTransaction | null>)
        .then(async (transaction) => {
          if (!transaction?.blockNumber || !transaction.blockHash) return transaction;
          // A node's index can outlive a reorganisation and name a block that left the chain
          // (go-ethereum#28885): mined only where the chain's block at that height is that block.
          if (!(await this.#onChain(Number(transaction.blockNumber), String(transaction.blockHash)))) return { ...transaction, blockNumber: null, blockHash: null, transactionIndex: null };
          if (generation === this.#generation) this.#remember(hash, transaction);
          return transaction;
        })
        .finally(() => this.#fetching.delete(hash));
      this.#fetching.set(hash, fetching);
    }
    return fetching;
  }

  #remember(hash: string, transaction: RpcTransaction): void {
    this.#mined.set(hash, { transaction, blockNumber: Number(transaction.blockNumber), blockHash: String(transaction.blockHash) });
    if (this.#mined.size > this.capacity) {
      const oldest = this.#mined.keys().next().value as string;
      this.#mined.delete(oldest);
    }
  }

  /**
   * Runs before a new head is handed out. Blocks at or below the previous head are unchanged when the
   * new head builds on it (checked with its parent hash, or one block read); otherwise, and for blocks
   * cached since, each cached block is compared with the chain's block at its height.
   */
  async #evictReorganised(previous: ChainHead | undefined, next: ChainHead): Promise<void> {
    if (!previous || this.#mined.size === 0) return;
    const extendsPrevious =
      (next.number === previous.number + 1 && next.parentHash === previous.hash) ||
      (next.number > previous.number && (await this.#canonicalHashAt(previous.number)) === previous.hash);
    const lowestToCheck = extendsPrevious ? previous.number + 1 : next.number - REORG_WINDOW_BLOCKS;
    const heights = new Set<number>();
    for (const entry of this.#mined.values()) if (entry.blockNumber >= lowestToCheck) heights.add(entry.blockNumber);
    if (heights.size === 0) return;
    const canonical = new Map<number, string | null>();
    for (const height of heights) canonical.set(height, height > next.number ? null : await this.#canonicalHashAt(height));
    let evicted = false;
    for (const [hash, entry] of this.#mined) {
      if (heights.has(entry.blockNumber) && canonical.get(entry.blockNumber) !== entry.blockHash) {
        this.#mined.delete(hash);
        evicted = true;
      }
    }
    if (evicted) this.#generation++;
  }

  // Whether the chain's block at `height` is `blockHash`: the head and its parent are known, others are read.
  async #onChain(height: number, blockHash: string): Promise<boolean> {
    const head = await this.head.current();
    if (height === head.number) return head.hash === blockHash;
    if (height === head.number - 1) return head.parentHash === blockHash;
    return (await this.#canonicalHashAt(height)) === blockHash;
  }

  async #canonicalHashAt(height: number): Promise<string | null> {
    const block = (await this.provider.send("eth_getBlockByNumber", [toQuantity(height), false])) as { hash: string } | null;
    return block?.hash ?? null;
  }

  async #asLookupError<T>(lookUp: () => Promise<T>): Promise<T> {
    try {
      return await lookUp();
    } catch (error) {
      throw asNodeUnavailable(error);
    }
  }
}
