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

  constructor(private readonly chain: Pick<ChainConnection, "provider" | "tokenAddress" | "wallet">) {}

  /**
   * The logs of the blocks from `from` (at most LOG_WINDOW_BLOCKS below `to`) to `to`, by lowercase
   * transaction hash; reads only the blocks it has not read.
   */
  async read(from: number, to: number): Promise<ReadonlyMap<string, LoggedTransfer>> {
    const lowest = Math.max(from, to - LOG_WINDOW_BLOCKS, 0);
    if (this.#from === undefined || this.#to === undefined || to < this.#from || lowest > this.#to + 1) {
      this.forget();
      await this.#fetch(lowest, to);
      this.#from = lowest;
      this.#to = to;
      return this.#byHash;
    }
    if (lowest < this.#from) {
      await this.#fetch(lowest, this.#from - 1);
      this.#from = lowest;
    }
    if (to > this.#to) {
      await this.#fetch(this.#to + 1, to);
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
    this.#byHash.clear();
    this.#from = this.#to = undefined;
  }

  async #fetch(fromBlock: number, toBlock: number): Promise<void> {
    const { provider, tokenAddress, wallet } = this.chain;
    const logs = (await provider.send("eth_getLogs", [
      { address: tokenAddress, topics: [TRANSFER_TOPIC, zeroPadValue(wallet.address, 32)], fromBlock: toBeHex(fromBlock), toBlock: toBeHex(toBlock) },
    ])) as { transactionHash: string; blockNumber: string; blockHash: string; removed?: boolean }[];
    for (const log of logs) {
      if (!log.removed) this.#byHash.set(log.transactionHash.toLowerCase(), { blockNumber: Number(log.blockNumber), blockHash: log.blockHash });
    }
  }
}
