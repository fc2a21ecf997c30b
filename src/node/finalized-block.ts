/**
 * The chain's finalized block number: the node's `finalized` block where the chain has one, otherwise
 * FINALITY_BLOCKS below the head. How finality is known is first a property of the chain (FINALITY_BY_CHAIN):
 * on the chains we name, the tag, always; a node of theirs that does not answer it leaves nothing final (a
 * rollup finalizes hundreds of blocks behind its head, far deeper than any depth we would guess). Elsewhere
 * the tag is asked first, and depth is used only once the node said, in its own words, repeatedly and over
 * NO_TAG_FOR_MS, that it does not know such a tag: never on a fault (a time-out, a rate limit, an HTTP
 * error), never on ethers' formatted message, which quotes the request ("finalized") whatever the node said,
 * and never on "finalized block not found" (geth and op-geth after a restart, until their consensus side
 * tells them finality: a node that has the tag and knows no finalized block yet). Once the node answered
 * the tag, a null or a refusal later (a restarted node, another endpoint of several) is "not known now".
 */
import { monotonicNow } from "../clock.js";
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

/** Answers in the node's own words that it knows no `finalized` tag, in a row, before depth is used (chains not named)... */
export const NO_TAG_ANSWERS_BEFORE_DEPTH = 3;
/** ...and over at least this long, from the first of them to the last. */
export const NO_TAG_FOR_MS = 60_000;

// A node's own words for a block tag it does not know: geth before the merge "'finalized' tag not supported
// on pre-merge network", older nodes "invalid block tag" / "unknown block tag" / "invalid argument 0: hex
// string without 0x prefix" (-32602). Not "finalized block not found": see the top of this file.
const NO_TAG_WORDS = /not supported|block tag|hex string without 0x prefix|invalid argument 0/i;

export class FinalizedBlockReader {
  // Whether the node answers the `finalized` block tag: unknown until it answered it or said, repeatedly, that it cannot.
  #tag: "unknown" | "answered" | "absent" = "unknown";
  // How many answers in a row said there is no such tag (the node's own words), and when the first of them came.
  #noTagAnswers = 0;
  #noTagSince = 0;
  #toldNoTag = false;
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
    /**
     * Told once when the node said, as above, that it knows no `finalized` tag: on a chain not named, depth
     * is used from then on; on a chain named, nothing is final while its node does not answer the tag.
     */
    private readonly onNoTag: (rule: FinalityRule) => void = () => undefined,
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
      let saidNoTag = false;
      try {
        finalized = (await this.node.send("eth_getBlockByNumber", ["finalized", false])) as { number: string } | null;
      } catch (error) {
        // Only the node's own words that it knows no such tag count; anything else is a fault of the moment.
        const words = nodeWordsOf(error);
        if (!words || !(words.code === -32602 || NO_TAG_WORDS.test(words.message))) throw error;
        finalized = null;
        saidNoTag = true;
      }
      if (finalized) {
        this.#tag = "answered";
        this.#noTagAnswers = 0;
        return Number(finalized.number);
      }
      // A node that answered the tag before: nothing is known final now. A null is no refusal of the tag.
      if (this.#tag === "answered" || !saidNoTag) return null;
      if (this.#noTagAnswers++ === 0) this.#noTagSince = monotonicNow();
      if (this.#noTagAnswers < NO_TAG_ANSWERS_BEFORE_DEPTH || monotonicNow() - this.#noTagSince < NO_TAG_FOR_MS) return null;
      if (!this.#toldNoTag) this.onNoTag(this.#rule);
      this.#toldNoTag = true;
      // A chain whose finality is its tag: nothing is known final while its node does not answer it.
      if (this.#rule.kind === "tag") return null;
      this.#tag = "absent";
    }
    const byDepth = head - this.finalityBlocks;
    return byDepth >= 0 ? byDepth : null;
  }
}
