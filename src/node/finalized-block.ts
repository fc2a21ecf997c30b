/**
 * The chain's finalized block number: the node's `finalized` block where it has one, otherwise
 * FINALITY_BLOCKS below the head. Whether the node knows the tag is asked once and remembered; once it
 * has answered the tag, a null or a refusal of it later (a restarted node, another endpoint of several) is
 * "not known now", never a reason to fall back to depth, which on an L2 is far shallower than finality.
 */

/** The node calls it makes. */
export interface FinalizedBlockNode {
  send(method: string, params: unknown[]): Promise<unknown>;
}

export class FinalizedBlockReader {
  // Whether the node answers the `finalized` block tag: unknown until asked.
  #tag: "unknown" | "answered" | "absent" = "unknown";
  // The highest finalized block seen: an endpoint (of several, or a backend of a fleet) that shows a lower
  // one lags, and finality never goes back.
  #highest: number | null = null;

  constructor(
    private readonly node: FinalizedBlockNode,
    /** How deep a block must be to count as final where the node has no `finalized` block. */
    readonly finalityBlocks: number,
  ) {}

  /** The finalized block's number as of head `head`; null when no block is final yet. Throws on node faults. */
  async number(head: number): Promise<number | null> {
    const read = await this.#read(head);
    if (read !== null && (this.#highest === null || read > this.#highest)) this.#highest = read;
    return this.#highest;
  }

  async #read(head: number): Promise<number | null> {
    if (this.#tag !== "absent") {
      try {
        const finalized = (await this.node.send("eth_getBlockByNumber", ["finalized", false])) as { number: string } | null;
        if (finalized) {
          this.#tag = "answered";
          return Number(finalized.number);
        }
      } catch (error) {
        // A node that does not know the tag says so (invalid params); a fault of the moment is asked again.
        if (!/finalized|invalid|unknown block|not supported|-32602/i.test(String((error as Error).message))) throw error;
      }
      if (this.#tag === "answered") return null;
      this.#tag = "absent";
    }
    const byDepth = head - this.finalityBlocks;
    return byDepth >= 0 ? byDepth : null;
  }
}

/**
 * FINALITY_BLOCKS by chain id, where the node has no `finalized` block: Ethereum and its test networks
 * finalize in two epochs (64 blocks); Polygon PoS checkpoints take about 256; elsewhere 64 is the default.
 */
export function defaultFinalityBlocks(chainId: bigint): number {
  switch (chainId) {
    case 137n:
    case 80002n:
      return 256;
    case 56n:
      return 15;
    default:
      return 64;
  }
}
