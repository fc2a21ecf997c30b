/**
 * The token's Transfer logs from the hot wallet, read once per block however many parts ask: checking
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

/** How far back one read looks at most: older transfers are looked up by their receipts. */
export const LOG_WINDOW_BLOCKS = 128;

export class WalletTransferLogs {
  #from: number | undefined;
  #to: number | undefined;
  readonly #byHash = new Map<string, LoggedTransfer>();
  // Counts forget() calls: a read under way when the logs were forgotten keeps nothing of what it read.
  #generation = 0;

  constructor(private readonly chain: Pick<ChainConnection, "provider" | "tokenAddress" | "wallet">) {}

  /**
   * The logs of the blocks from `from` (at most LOG_WINDOW_BLOCKS below `to`) to `to`, by lowercase
   * transaction hash; reads only the blocks it has not read. Empty when the logs were forgotten while it
   * read (a transfer without a log is then checked by its receipts, which are read afresh).
   */
  async read(from: number, to: number): Promise<ReadonlyMap<string, LoggedTransfer>> {
    const lowest = Math.max(from, to - LOG_WINDOW_BLOCKS, 0);
    if (this.#from === undefined || this.#to === undefined || to < this.#from || lowest > this.#to + 1) {
      this.forget();
      const generation = this.#generation;
      const logs = await this.#fetch(lowest, to);
      // Forgotten meanwhile (a reorganisation): what was read may be of the old chain; nothing is vouched for.
      if (generation !== this.#generation) return new Map();
      this.#keep(logs);
      this.#from = lowest;
      this.#to = to;
      return this.#byHash;
    }
    const generation = this.#generation;
    const older = lowest < this.#from ? await this.#fetch(lowest, this.#from - 1) : undefined;
    const newer = to > this.#to ? await this.#fetch(this.#to + 1, to) : undefined;
    if (generation !== this.#generation) return new Map();
    if (older) {
      this.#keep(older);
      this.#from = lowest;
    }
    if (newer) {
      this.#keep(newer);
      this.#to = to;
    }
    // Kept no further back than a window: what is older is found by receipts.
    if (this.#from < to - 2 * LOG_WINDOW_BLOCKS) {
      this.#from = to - LOG_WINDOW_BLOCKS;
      for (const [hash, logged] of this.#byHash) if (logged.blockNumber < this.#from) this.#byHash.delete(hash);
    }
    return this.#byHash;
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

  async #fetch(fromBlock: number, toBlock: number): Promise<Map<string, LoggedTransfer>> {
    const { provider, tokenAddress, wallet } = this.chain;
    const logs = (await provider.send("eth_getLogs", [
      { address: tokenAddress, topics: [TRANSFER_TOPIC, zeroPadValue(wallet.address, 32)], fromBlock: toBeHex(fromBlock), toBlock: toBeHex(toBlock) },
    ])) as { transactionHash: string; blockNumber: string; blockHash: string; removed?: boolean }[];
    const byHash = new Map<string, LoggedTransfer>();
    for (const log of logs) {
      if (!log.removed) byHash.set(log.transactionHash.toLowerCase(), { blockNumber: Number(log.blockNumber), blockHash: log.blockHash });
    }
    return byHash;
  }
}
