/**
 * The chain's finalized block number: the node's `finalized` block where the chain has one, otherwise
 * FINALITY_BLOCKS below the head. How finality is known is first a property of the chain (FINALITY_BY_CHAIN):
 * on the chains we name, the tag, always; a node of theirs that does not answer it leaves nothing final (a
 * rollup finalizes hundreds of blocks behind its head, far deeper than any depth we would guess). Elsewhere
 * the tag is asked first, and depth is used only once the node said, in its own words and repeatedly, that
 * it has no such tag: never on a fault (a time-out, a rate limit, an HTTP error), and never on ethers'
 * formatted message, which quotes the request ("finalized") whatever the node said. Once the node answered
 * the tag, a null or a refusal later (a restarted node, another endpoint of several) is "not known now".
 */
import { nodeWordsOf } from "./node-answers.js";

/** The node calls it makes. */
export interface FinalizedBlockNode {
  send(method: string, params: unknown[]): Promise<unknown>;
}

/** How a chain's finality is known: its nodes' `finalized` tag, or a depth below the head. */
export type FinalityRule = { kind: "tag"; chain: string } | { kind: "depth"; blocks: number; chain: string };

/**
 * The chains whose finality we name in the docs (docs/networks.md): each finalizes by its `finalized` tag.
 * Ethereum's is two epochs (about 13 min); an OP Stack chain's (Base, OP) and Arbitrum's follow their
 * batches' finality on Ethereum (15-30 min, thousands of blocks); Polygon PoS's are its milestones; BNB's
 * its fast finality votes.
 */
const FINALITY_BY_CHAIN = new Map<bigint, FinalityRule>([
  [1n, { kind: "tag", chain: "Ethereum" }],
  [11155111n, { kind: "tag", chain: "Sepolia" }],
  [17000n, { kind: "tag", chain: "Holesky" }],
  [560048n, { kind: "tag", chain: "Hoodi" }],
  [8453n, { kind: "tag", chain: "Base" }],
  [84532n, { kind: "tag", chain: "Base Sepolia" }],
  [10n, { kind: "tag", chain: "OP Mainnet" }],
  [11155420n, { kind: "tag", chain: "OP Sepolia" }],
  [42161n, { kind: "tag", chain: "Arbitrum One" }],
  [42170n, { kind: "tag", chain: "Arbitrum Nova" }],
  [421614n, { kind: "tag", chain: "Arbitrum Sepolia" }],
  [137n, { kind: "tag", chain: "Polygon PoS" }],
  [80002n, { kind: "tag", chain: "Polygon Amoy" }],
  [56n, { kind: "tag", chain: "BNB Smart Chain" }],
  [97n, { kind: "tag", chain: "BNB Smart Chain testnet" }],
]);

/**
 * The depth used on a chain we do not name whose node has no `finalized` tag (FINALITY_BLOCKS overrides
 * it): deep enough for a proof-of-work or proof-of-authority chain's reorganisations; an L2 without the tag
 * should set FINALITY_BLOCKS to its own finality.
 */
export const DEFAULT_FINALITY_BLOCKS = 64;

/** How finality is known on `chainId`: the table's rule, or for another chain, the tag with `depth` where the node has none. */
export function finalityRuleOf(chainId: bigint, depth: number = DEFAULT_FINALITY_BLOCKS): FinalityRule {
  return FINALITY_BY_CHAIN.get(chainId) ?? { kind: "depth", blocks: depth, chain: `chain ${chainId}` };
}

/** Answers in the node's own words that it has no `finalized` tag, in a row, before depth is used (chains not named). */
export const NO_TAG_ANSWERS_BEFORE_DEPTH = 3;

// A node's own words for a block tag it does not know: geth before the merge "finalized block not found",
// older nodes "unknown block" / "invalid block tag" / "invalid argument 0: hex string without 0x prefix".
const NO_TAG_WORDS = /finali[sz]ed|block tag|unknown block|not supported|invalid argument|hex string/i;

export class FinalizedBlockReader {
  // Whether the node answers the `finalized` block tag: unknown until it answered it or said, repeatedly, that it cannot.
  #tag: "unknown" | "answered" | "absent" = "unknown";
  // How many answers in a row said there is no such tag (a null, or the node's own words).
  #noTagAnswers = 0;
  // The highest finalized block seen: an endpoint (of several, or a backend of a fleet) that shows a lower
  // one lags, and finality never goes back.
  #highest: number | null = null;
  readonly #rule: FinalityRule;

  constructor(
    private readonly node: FinalizedBlockNode,
    /** How deep a block must be to count as final where the node has no `finalized` block (chains the table does not name). */
    readonly finalityBlocks: number,
    /** The chain's id: how its finality is known (a chain not given is one the table does not name). */
    chainId?: bigint,
  ) {
    this.#rule = chainId === undefined ? { kind: "depth", blocks: finalityBlocks, chain: "the chain" } : finalityRuleOf(chainId, finalityBlocks);
  }

  /** How finality is known here now: the tag, or depth (only on a chain not named, once its node said it has no tag). */
  get mode(): "tag" | "depth" | "unknown" {
    return this.#tag === "absent" ? "depth" : this.#tag === "answered" ? "tag" : "unknown";
  }

  /** The finalized block's number as of head `head`; null when no block is known final. Throws on node faults. */
  async number(head: number): Promise<number | null> {
    const read = await this.#read(head);
    if (read !== null && (this.#highest === null || read > this.#highest)) this.#highest = read;
    return this.#highest;
  }

  async #read(head: number): Promise<number | null> {
    if (this.#tag !== "absent") {
      let finalized: { number: string } | null;
      try {
        finalized = (await this.node.send("eth_getBlockByNumber", ["finalized", false])) as { number: string } | null;
      } catch (error) {
        // Only the node's own words that it knows no such tag count; anything else is a fault of the moment.
        const words = nodeWordsOf(error);
        if (!words || !(words.code === -32602 || NO_TAG_WORDS.test(words.message))) throw error;
        finalized = null;
      }
      if (finalized) {
        this.#tag = "answered";
        this.#noTagAnswers = 0;
        return Number(finalized.number);
      }
      // A node that answered the tag before, or a chain whose finality is its tag: nothing is known final now.
      if (this.#tag === "answered" || this.#rule.kind === "tag") return null;
      if (++this.#noTagAnswers < NO_TAG_ANSWERS_BEFORE_DEPTH) return null;
      this.#tag = "absent";
    }
    const byDepth = head - this.finalityBlocks;
    return byDepth >= 0 ? byDepth : null;
  }
}
