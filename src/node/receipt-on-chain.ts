/**
 * Receipts believed only where the chain agrees. A node's transaction index can outlive a reorganisation
 * and keep naming a block that left the chain (go-ethereum#28885, nethermind#3052), and a fleet's backends
 * index at their own pace: a receipt counts only when the chain's block at its height is the block it names.
 * Otherwise it is no fact, and the chain's blocks decide, as for a missing receipt.
 */
import { toQuantity } from "ethers";
import type { BlockRef } from "./wallet-nonce-use.js";

export interface ReceiptNode {
  send(method: string, params: unknown[]): Promise<unknown>;
}

/** One look's receipts: each height's block is read once, none for the blocks the caller already read. */
export class ReceiptsOnChain {
  readonly #node: ReceiptNode;
  readonly #hashAt = new Map<number, string | undefined>();

  /** `known`: blocks the caller read as the chain's (its head, the head's parent). */
  constructor(node: ReceiptNode, known: readonly BlockRef[] = []) {
    this.#node = node;
    for (const block of known) this.#hashAt.set(block.number, block.hash);
  }

  /** The block a receipt of `hash` names, if it is the chain's at that height; undefined if not, or if there is no receipt. */
  async minedIn(hash: string): Promise<BlockRef | undefined> {
    const receipt = (await this.#node.send("eth_getTransactionReceipt", [hash])) as { blockNumber: string; blockHash: string } | null;
    if (!receipt) return undefined;
    const number = Number(receipt.blockNumber);
    if (!this.#hashAt.has(number)) {
      const block = (await this.#node.send("eth_getBlockByNumber", [toQuantity(number), false])) as { hash: string } | null;
      this.#hashAt.set(number, block?.hash);
    }
    return this.#hashAt.get(number) === receipt.blockHash ? { number, hash: receipt.blockHash } : undefined;
  }
}
