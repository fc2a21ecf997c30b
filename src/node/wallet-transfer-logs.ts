/**
 * The tokens' Transfer logs from the hot wallet, read once per block however many parts ask: checking
 * what a burst of transfers did costs one log read per new block, not one receipt per transfer. Blocks
 * already read are not read again; a reorganisation makes it forget what it read.
 */
import { toBeHex, zeroPadValue } from "ethers";
import type { ChainConnection } from "./connect-chain.js";
import { TRANSFER_TOPIC } from "./erc20.js";

/** Where a logged transfer was mined. */
export interface LoggedTransfer {
  blockNumber: number;
  blockHash: string;
}

/** The blocks one eth_getLogs call covers at most (providers bound a call's range, some to a few thousand). */
export const LOG_WINDOW_BLOCKS = 128;
/**
 * How many windows one read may fetch: older transfers are looked up by their receipts. A fast chain (an
 * automining node, a chain of many blocks a second) makes more blocks between two reads than one window.
 */
const MAX_WINDOWS_PER_READ = 64;

export class WalletTransferLogs {
  #from: number | undefined;
  #to: number | undefined;
  readonly #byHash = new Map<string, LoggedTransfer>();
  // Counts forget() calls: a read under way when the logs were forgotten keeps nothing of what it read.
  #generation = 0;

  // Every ERC-20 token of the network: one call reads the Transfer logs of them all.
  readonly #address: string | string[];

  constructor(private readonly chain: Pick<ChainConnection, "provider" | "tokenAddress" | "tokens" | "wallet">) {
    const tokens = (chain.tokens ?? []).filter((token) => !token.native).map((token) => token.address);
    this.#address = tokens.length > 1 ? tokens : chain.tokenAddress;
  }

  /**
   * The logs of the blocks from `from` to `to`, by lowercase transaction hash; reads only the blocks it
   * has not read, one window (LOG_WINDOW_BLOCKS) a call, and keeps no more than the range of its last
   * read. `spares` is how many receipt lookups the read spares the caller (the transfers it looks for):
   * one call is worth two receipts, so a read goes back at most half that many windows (at least one, at
   * most MAX_WINDOWS_PER_READ); what is older is the receipts'. Empty when the logs were forgotten while
   * it read (a transfer without a log is then checked by its receipts, which are read afresh).
   */
  async read(from: number, to: number, spares = 2): Promise<ReadonlyMap<string, LoggedTransfer>> {
    const lowest = lowestWorthReading(from, to, spares);
    const generation = this.#generation;
    if (this.#from === undefined || this.#to === undefined || to < this.#from || lowest > this.#to + 1) {
      this.forget();
      const current = this.#generation;
      const logs = await this.#fetch(lowest, to, () => current === this.#generation);
      // Forgotten meanwhile (a reorganisation): what was read may be of the old chain; nothing is vouched for.
      if (!logs || current !== this.#generation) return new Map();
      this.#keep(logs);
      this.#from = lowest;
      this.#to = to;
      return this.#byHash;
    }
    // What lies below this read's range is not needed any more: kept no further back than this read goes.
    if (this.#from < lowest) {
      for (const [hash, logged] of this.#byHash) if (logged.blockNumber < lowest) this.#byHash.delete(hash);
      this.#from = lowest;
    }
    const unchanged = () => generation === this.#generation;
    const older = lowest < this.#from ? await this.#fetch(lowest, this.#from - 1, unchanged) : undefined;
    const newer = to > this.#to ? await this.#fetch(this.#to + 1, to, unchanged) : undefined;
    if (generation !== this.#generation || older === null || newer === null) return new Map();
    if (older) {
      this.#keep(older);
      this.#from = lowest;
    }
    if (newer) {
      this.#keep(newer);
      this.#to = to;
    }
    // The kept map itself, never a copy: a forget() while the caller works through it (a reorganisation)
    // empties it under the caller, so that nothing read from the old chain is vouched for after.
    return this.#byHash;
  }

  /**
   * The same logs read afresh, neither taken from what was read before nor kept (a check of what a
   * reorganisation may have moved), and not undone by a forget() meanwhile: the caller compares what it
   * reads with the chain itself.
   */
  async readAfresh(from: number, to: number, spares = 2): Promise<ReadonlyMap<string, LoggedTransfer>> {
    return (await this.#fetch(lowestWorthReading(from, to, spares), to, () => true)) as Map<string, LoggedTransfer>;
  }

  /** Forgets every log read: after a reorganisation they may be of blocks no longer on the chain. */
  forget(): void {
    this.#generation++;
    this.#byHash.clear();
    this.#from = this.#to = undefined;
  }

  #keep(logs: ReadonlyMap<string, LoggedTransfer>): void {
    for (const [hash, logged] of logs) this.#byHash.set(hash, logged);
  }

  // The logs of the range, a window a call, oldest first; null once `current` says they were forgotten meanwhile.
  async #fetch(fromBlock: number, toBlock: number, current: () => boolean): Promise<Map<string, LoggedTransfer> | null> {
    const byHash = new Map<string, LoggedTransfer>();
    for (let start = fromBlock; start <= toBlock; start += LOG_WINDOW_BLOCKS + 1) {
      for (const [hash, logged] of await this.#fetchWindow(start, Math.min(toBlock, start + LOG_WINDOW_BLOCKS))) byHash.set(hash, logged);
      if (!current()) return null;
    }
    return byHash;
  }

  async #fetchWindow(fromBlock: number, toBlock: number): Promise<Map<string, LoggedTransfer>> {
    const { provider, wallet } = this.chain;
    const logs = (await provider.send("eth_getLogs", [
      { address: this.#address, topics: [TRANSFER_TOPIC, zeroPadValue(wallet.address, 32)], fromBlock: toBeHex(fromBlock), toBlock: toBeHex(toBlock) },
    ])) as { transactionHash: string; blockNumber: string; blockHash: string; removed?: boolean }[];
    const byHash = new Map<string, LoggedTransfer>();
    for (const log of logs) {
      if (!log.removed) byHash.set(log.transactionHash.toLowerCase(), { blockNumber: Number(log.blockNumber), blockHash: log.blockHash });
    }
    return byHash;
  }
}

// The lowest block a read for `spares` receipts goes back to: one call is worth two receipts.
function lowestWorthReading(from: number, to: number, spares: number): number {
  const windows = Math.max(1, Math.min(MAX_WINDOWS_PER_READ, Math.floor(spares / 2)));
  return Math.max(from, to - windows * LOG_WINDOW_BLOCKS, 0);
}
