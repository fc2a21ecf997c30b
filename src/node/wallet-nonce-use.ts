/**
 * Which transaction used one of the wallet's nonces, found in the chain itself rather than in an index: the
 * block at which the wallet's nonce count, read by block number, passed the nonce, and in that block's body
 * the wallet's transaction at that nonce. Receipts, logs and lookups come from indexes that lag the head on
 * a load-balanced fleet, so their absence proves nothing; a count read at a block number is that block's
 * state, and a backend that lacks the block answers with an error or nothing, never with another count.
 */
import { toQuantity } from "ethers";

/** A block, by number and hash. */
export interface BlockRef {
  number: number;
  hash: string;
}

/**
 * unused: the wallet's count at the block asked about has not passed the nonce. used: `by` (a lowercase
 * transaction hash) is the wallet's transaction at the nonce, mined in `block`.
 */
export type NonceUse = { kind: "unused" } | { kind: "used"; by: string; block: BlockRef };

/** The node calls it makes. */
export interface NonceUseNode {
  send(method: string, params: unknown[]): Promise<unknown>;
}

/** How many steps back from `below` the search may look for a block where the nonce was not yet used. */
const MAX_STEPS_BACK = 40;

/**
 * What used `nonce` of `wallet` as of block `head`; undefined when the node's answers do not settle it (a
 * block it does not return, a block whose body lacks the transaction the counts say is there: backends that
 * disagree). `below`: a block at which the nonce is believed unused (where the search starts looking back).
 * Costs a count read per halving of the range, and one full block read. Throws on node faults.
 */
export async function findNonceUse(node: NonceUseNode, wallet: string, nonce: number, head: number, below: number): Promise<NonceUse | undefined> {
  // A count that is no number (a backend answering nothing) settles nothing: NaN fails every comparison.
  const countAt = async (block: number) => {
    const count = await node.send("eth_getTransactionCount", [wallet, toQuantity(block)]);
    return typeof count === "string" && /^0x[0-9a-f]+$/i.test(count) ? Number(count) : Number.NaN;
  };
  const atHead = await countAt(head);
  if (Number.isNaN(atHead)) return undefined;
  if (atHead <= nonce) return { kind: "unused" };
  // Invariant from here: the count at `high` has passed the nonce, the count at `low` has not.
  let high = head;
  let low = Math.min(Math.max(below, 0), head - 1);
  for (let step = 1, steps = 0; ; step *= 2, steps++) {
    const count = await countAt(low);
    if (Number.isNaN(count)) return undefined;
    if (count <= nonce) break;
    if (low <= 0 || steps >= MAX_STEPS_BACK) return undefined;
    high = low;
    low = Math.max(0, low - step);
  }
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const count = await countAt(middle);
    if (Number.isNaN(count)) return undefined;
    if (count > nonce) high = middle;
    else low = middle;
  }
  const block = (await node.send("eth_getBlockByNumber", [toQuantity(high), true])) as {
    hash: string;
    transactions: { hash: string; from: string; nonce: string }[];
  } | null;
  if (!block) return undefined;
  const owner = wallet.toLowerCase();
  const used = block.transactions.find((transaction) => typeof transaction === "object" && transaction.from.toLowerCase() === owner && Number(transaction.nonce) === nonce);
  return used ? { kind: "used", by: used.hash.toLowerCase(), block: { number: high, hash: block.hash } } : undefined;
}
