/**
 * Which transaction used one of the wallet's nonces, found in the chain itself rather than in an index: the
 * block at which the wallet's nonce count passed the nonce, and in that block's body the wallet's
 * transaction at that nonce (or another account's transaction carrying the wallet's EIP-7702 authorization
 * at it). Receipts, logs and lookups come from indexes that lag the head on a load-balanced fleet, so their
 * absence proves nothing; a count read at a block number is that block's state, and a backend that lacks the
 * block answers with an error or nothing, never with another count.
 *
 * State is pruned: a full node keeps it for about 128 blocks (32 s on Arbitrum), so counts are read only
 * within STATE_BLOCKS of the head. Older than that, the use is found from block bodies, which every node
 * keeps: those of the blocks between the last block the count was seen below the nonce and the first it was
 * seen past it (the lane's own count reads, noted in NonceSearches), or else between the block the transfer
 * was signed at and the oldest block with state. A long range is read a bounded number of bodies per call
 * and resumed at the next (NonceSearches keeps where each search is). The counts the lane noted are hints:
 * a reorganisation can move the use to a later block without any count contradicting them, so a range they
 * narrowed, read whole without the nonce's user, is searched again wider (from STATE_BLOCKS below it to the
 * head) without them; only a range read whole without the user then is "unfindable", reported by
 * the callers, never waited on silently.
 */
import { toQuantity, verifyAuthorization } from "ethers";

/** A block, by number and hash. */
export interface BlockRef {
  number: number;
  hash: string;
}

/**
 * unused: the wallet's count at the block asked about has not passed the nonce. used: `by` (a lowercase
 * transaction hash) is the wallet's transaction at the nonce, or another account's transaction that carried
 * the wallet's EIP-7702 authorization at it (`via`), mined in `block`. unfindable: the count passed the
 * nonce, and no block body of the range it could be in (`searched`) holds its user.
 */
export type NonceUse =
  | { kind: "unused" }
  | { kind: "used"; by: string; block: BlockRef; via?: "authorization" }
  | { kind: "unfindable"; searched: { from: number; to: number } };

/** The node calls it makes. */
export interface NonceUseNode {
  send(method: string, params: unknown[]): Promise<unknown>;
}

/** How far below the head the wallet's count (state) is read: well within the 128 blocks a full node keeps. */
export const STATE_BLOCKS = 64;
/** Block bodies read by one search call; a longer range is resumed at the next call. */
export const BODIES_PER_CALL = 32;
/** Block bodies read at once within a call. */
const BODIES_AT_ONCE = 8;
/** The longest range of bodies a search reads before it calls the nonce's user unfindable. */
export const MAX_SEARCHED_BLOCKS = 20_000;
/** How many steps back from `below` a search within the state window may look for a block where the nonce was not yet used. */
const MAX_STEPS_BACK = 40;
/** Count reads remembered as hints, and searches kept under way, per wallet: the oldest are forgotten first. */
const REMEMBERED_COUNTS = 1_024;
const REMEMBERED_SEARCHES = 256;

/**
 * A body search under way: the range (from, to] of blocks, read downwards; `next` is the next block to read.
 * `wider`: the range searched next when this one, narrowed by hints, holds no user.
 */
interface BodySearch {
  from: number;
  to: number;
  next: number;
  wider?: { from: number; to: number };
}

/**
 * What one wallet's searches remember between calls: the wallet's counts as the lane read them (at which
 * block the count was what), and each body search under way or ended unfindable. Bounded.
 */
export class NonceSearches {
  // Block number -> the wallet's count there, as read (a hint: a body confirms it).
  readonly #counts = new Map<number, number>();
  readonly #searches = new Map<number, BodySearch>();
  readonly #unfindable = new Map<number, { from: number; to: number }>();

  /**
   * The wallet's count read at block `block` (a snapshot's, or a check's at the head). A count that
   * contradicts one noted before (lower at a later block, or another at the same block) is a reorganisation
   * (or a backend on another fork): everything remembered is forgotten, searches and verdicts included.
   */
  noteCount(block: number, count: number): void {
    if (!Number.isInteger(block) || !Number.isInteger(count) || block < 0) return;
    for (const [noted, countThere] of this.#counts) {
      if ((noted <= block && countThere > count) || (noted >= block && countThere < count)) {
        this.forget();
        break;
      }
    }
    this.#counts.delete(block);
    this.#counts.set(block, count);
    if (this.#counts.size > REMEMBERED_COUNTS) this.#counts.delete(this.#counts.keys().next().value as number);
  }

  /** The narrowest range (below, above] the counts noted put the nonce's use in, within (below, head]. */
  rangeOf(nonce: number, below: number, head: number): { below: number; above: number } {
    let low = below;
    let high = head;
    for (const [block, count] of this.#counts) {
      if (count <= nonce && block > low && block < high) low = block;
      if (count > nonce && block < high && block > low) high = block;
    }
    return { below: low, above: high };
  }

  /** Forgets every count, search and verdict: the chain reorganised. */
  forget(): void {
    this.#counts.clear();
    this.#searches.clear();
    this.#unfindable.clear();
  }

  searchOf(nonce: number): BodySearch | undefined {
    return this.#searches.get(nonce);
  }

  startSearch(nonce: number, search: BodySearch): void {
    this.#searches.set(nonce, search);
    if (this.#searches.size > REMEMBERED_SEARCHES) this.#searches.delete(this.#searches.keys().next().value as number);
  }

  endSearch(nonce: number, unfindable?: { from: number; to: number }): void {
    this.#searches.delete(nonce);
    if (!unfindable) {
      this.#unfindable.delete(nonce);
      return;
    }
    this.#unfindable.set(nonce, unfindable);
    if (this.#unfindable.size > REMEMBERED_SEARCHES) this.#unfindable.delete(this.#unfindable.keys().next().value as number);
  }

  unfindable(nonce: number): { from: number; to: number } | undefined {
    return this.#unfindable.get(nonce);
  }
}

interface RpcBlockBody {
  hash: string;
  transactions: (string | RpcTransaction)[];
}

interface RpcTransaction {
  hash: string;
  from: string;
  nonce: string;
  authorizationList?: { chainId: string; address: string; nonce: string; yParity: string; r: string; s: string }[];
}

/**
 * What used `nonce` of `wallet` as of block `head`; undefined when the node's answers do not settle it yet
 * (a block it does not return, a block whose body lacks the transaction the counts say is there: backends
 * that disagree; or a body search under way, resumed at the next call with the same `searches`). `below`: a
 * block at which the nonce is believed unused. Reads state only within STATE_BLOCKS of `head`. Costs a
 * count read per halving of the range and one full block read, or up to BODIES_PER_CALL block reads. Throws
 * on node faults.
 */
export async function findNonceUse(
  node: NonceUseNode,
  wallet: string,
  nonce: number,
  head: number,
  below: number,
  searches: NonceSearches = new NonceSearches(),
): Promise<NonceUse | undefined> {
  const owner = wallet.toLowerCase();
  // A count that is no number (a backend answering nothing) settles nothing: NaN fails every comparison.
  const countAt = async (block: number) => {
    const count = await node.send("eth_getTransactionCount", [wallet, toQuantity(block)]);
    return typeof count === "string" && /^0x[0-9a-f]+$/i.test(count) ? Number(count) : Number.NaN;
  };
  const atHead = await countAt(head);
  if (Number.isNaN(atHead)) return undefined;
  if (atHead <= nonce) {
    searches.endSearch(nonce);
    return { kind: "unused" };
  }
  searches.noteCount(head, atHead);
  const unfindable = searches.unfindable(nonce);
  if (unfindable) return { kind: "unfindable", searched: unfindable };
  const underWay = searches.searchOf(nonce);
  if (underWay) return searchBodies(node, owner, nonce, underWay, searches);
  const stateFloor = Math.max(0, head - STATE_BLOCKS);
  const believedUnused = Math.min(Math.max(below, 0), head - 1);
  const range = searches.rangeOf(nonce, believedUnused, head);
  // Whether the lane's noted counts narrowed the range: then a body search that finds nothing goes wider.
  const narrowed = range.below > believedUnused || range.above < head;
  // Invariant from here: the count at `high` has passed the nonce; the count at `low`, once read, has not.
  let high = range.above;
  let low = Math.max(range.below, stateFloor);
  // Whether `below` proved wrong (the count had passed the nonce there): the bodies below it are read too.
  let belowDisproved = false;
  if (high > stateFloor) {
    let unusedAtLow = false;
    for (let step = 1, steps = 0; ; step *= 2, steps++) {
      const count = await countAt(low);
      if (Number.isNaN(count)) return undefined;
      searches.noteCount(low, count);
      if (count <= nonce) {
        unusedAtLow = true;
        break;
      }
      high = low;
      if (low <= range.below) belowDisproved = true;
      // Used at or below the oldest block whose state may be read: the rest is the bodies'.
      if (low <= stateFloor || steps >= MAX_STEPS_BACK) break;
      low = Math.max(stateFloor, low - step);
    }
    if (unusedAtLow) {
      while (high - low > 1) {
        const middle = Math.floor((low + high) / 2);
        const count = await countAt(middle);
        if (Number.isNaN(count)) return undefined;
        searches.noteCount(middle, count);
        if (count > nonce) high = middle;
        else low = middle;
      }
      const found = userIn(await readBody(node, high), owner, nonce);
      return found && { kind: "used", by: found.by, ...(found.via && { via: found.via }), block: { number: high, hash: found.blockHash } };
    }
  }
  // Used at or below `high`, where no state may be read: the bodies between what was believed unused and it.
  const from = Math.max(0, belowDisproved ? 0 : Math.min(range.below, high - 1), high - MAX_SEARCHED_BLOCKS);
  const widerFrom = Math.max(0, from - STATE_BLOCKS, head - MAX_SEARCHED_BLOCKS);
  const search: BodySearch = { from, to: high, next: high, ...(narrowed && { wider: { from: widerFrom, to: head } }) };
  searches.startSearch(nonce, search);
  return searchBodies(node, owner, nonce, search, searches);
}

// Reads the next bodies of a search, downwards; the use when found, unfindable once the range is read whole.
async function searchBodies(node: NonceUseNode, owner: string, nonce: number, search: BodySearch, searches: NonceSearches): Promise<NonceUse | undefined> {
  const last = Math.max(search.from + 1, search.next - BODIES_PER_CALL + 1);
  for (let top = search.next; top >= last; top -= BODIES_AT_ONCE) {
    const numbers = Array.from({ length: Math.min(BODIES_AT_ONCE, top - last + 1) }, (_, index) => top - index);
    const bodies = await Promise.all(numbers.map((number) => readBody(node, number)));
    for (const [index, body] of bodies.entries()) {
      // A backend that does not return the block settles nothing: the search stays where it is.
      if (!body) return undefined;
      const found = userIn(body, owner, nonce);
      if (found) {
        searches.endSearch(nonce);
        return { kind: "used", by: found.by, ...(found.via && { via: found.via }), block: { number: numbers[index], hash: body.hash } };
      }
      search.next = numbers[index] - 1;
    }
  }
  if (search.next > search.from) return undefined;
  if (search.wider) {
    // The hints that narrowed it were wrong (a reorganisation): the wider range is read next, without them.
    // They stay noted, so that a count read later that contradicts them still makes everything forgotten.
    searches.startSearch(nonce, { ...search.wider, next: search.wider.to });
    return undefined;
  }
  const searched = { from: search.from + 1, to: search.to };
  searches.endSearch(nonce, searched);
  return { kind: "unfindable", searched };
}

async function readBody(node: NonceUseNode, number: number): Promise<RpcBlockBody | null> {
  return (await node.send("eth_getBlockByNumber", [toQuantity(number), true])) as RpcBlockBody | null;
}

// The wallet's transaction at the nonce in a block's body, or another's carrying the wallet's authorization at it.
function userIn(body: RpcBlockBody | null, owner: string, nonce: number): { by: string; blockHash: string; via?: "authorization" } | undefined {
  if (!body) return undefined;
  for (const transaction of body.transactions) {
    if (typeof transaction !== "object") continue;
    if (transaction.from.toLowerCase() === owner && Number(transaction.nonce) === nonce) return { by: transaction.hash.toLowerCase(), blockHash: body.hash };
    for (const authorization of transaction.authorizationList ?? []) {
      if (Number(authorization.nonce) !== nonce || authorityOf(authorization) !== owner) continue;
      return { by: transaction.hash.toLowerCase(), blockHash: body.hash, via: "authorization" };
    }
  }
  return undefined;
}

function authorityOf(authorization: NonNullable<RpcTransaction["authorizationList"]>[number]): string | undefined {
  try {
    const { chainId, address, nonce, yParity, r, s } = authorization;
    return verifyAuthorization({ chainId: BigInt(chainId), address, nonce: BigInt(nonce) }, { yParity: Number(yParity) as 0 | 1, r, s }).toLowerCase();
  } catch {
    return undefined;
  }
}
