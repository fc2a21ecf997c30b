/**
 * What used a wallet's nonce, on a node that keeps state for 128 blocks only (a full node, a rollup's
 * endpoint): a count read older than that is refused as geth refuses it, so the search reads state near the
 * head only and finds older uses in block bodies, a bounded number per call, resumed at the next; the lane's
 * own count reads narrow the bodies read; a range read whole without the user is unfindable, never waited
 * on silently; another account's transaction carrying the wallet's EIP-7702 authorization is found too.
 */
import { Wallet, makeError, toQuantity } from "ethers";
import { describe, expect, it } from "vitest";
import { BODIES_PER_CALL, NonceSearches, STATE_BLOCKS, findNonceUse } from "../../src/node/wallet-nonce-use.js";

const WALLET = new Wallet("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const OTHER = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
const hashOf = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

interface Authorization {
  chainId: string;
  address: string;
  nonce: string;
  yParity: string;
  r: string;
  s: string;
}

/** A chain whose state is pruned below `head - 128`; `uses` are the wallet's nonce uses, by block. */
class PrunedChain {
  head = 1_000;
  readonly uses: { block: number; nonce: number; hash: string; from?: string; authorization?: Authorization }[] = [];
  readonly stateReads: number[] = [];
  readonly bodyReads: number[] = [];

  countAt(block: number): number {
    return this.uses.filter((use) => use.block <= block).length;
  }

  async send(method: string, params: unknown[]): Promise<unknown> {
    const block = params[0] === "latest" ? this.head : Number(method === "eth_getTransactionCount" ? params[1] : params[0]);
    if (method === "eth_getTransactionCount") {
      this.stateReads.push(block);
      // geth's words for state it no longer keeps.
      if (block < this.head - 128) throw makeError("could not coalesce error", "UNKNOWN_ERROR", { error: { code: -32000, message: `missing trie node ${hashOf(block)} (path ) state ${hashOf(block)} is not available` } });
      return toQuantity(this.countAt(block));
    }
    if (method === "eth_getBlockByNumber") {
      this.bodyReads.push(block);
      const transactions = this.uses
        .filter((use) => use.block === block)
        .map((use) =>
          use.authorization
            ? { hash: use.hash, from: OTHER, nonce: "0x0", authorizationList: [use.authorization] }
            : { hash: use.hash, from: use.from ?? WALLET.address.toLowerCase(), nonce: toQuantity(use.nonce) },
        );
      return { hash: hashOf(50_000 + block), transactions };
    }
    throw new Error(`unexpected call ${method}`);
  }
}

/** Calls `search` (a search resumed call by call) until it settles something, at most 50 times. */
async function untilSettled<T>(search: () => Promise<T | undefined>): Promise<T | undefined> {
  for (let call = 0; call < 50; call++) {
    const found = await search();
    if (found !== undefined) return found;
  }
  return undefined;
}

describe("what used a nonce, on a node that keeps 128 blocks of state", () => {
  it("finds a use near the head by the counts, reading no state below STATE_BLOCKS of the head", async () => {
    const chain = new PrunedChain();
    chain.uses.push({ block: 980, nonce: 0, hash: hashOf(1) });
    const use = await findNonceUse(chain, WALLET.address, 0, chain.head, 500);
    expect(use).toEqual({ kind: "used", by: hashOf(1), block: { number: 980, hash: hashOf(50_980) } });
    expect(Math.min(...chain.stateReads)).toBeGreaterThanOrEqual(chain.head - STATE_BLOCKS);
    expect(chain.bodyReads).toEqual([980]);
  });

  it("finds a use older than the state kept (an outage of 300 blocks) in the bodies, a bounded number per call, resumed where it stopped", async () => {
    const chain = new PrunedChain();
    chain.uses.push({ block: 700, nonce: 0, hash: hashOf(2) });
    const searches = new NonceSearches();
    let use = await findNonceUse(chain, WALLET.address, 0, chain.head, 650, searches);
    let calls = 1;
    while (use === undefined && calls < 100) {
      use = await findNonceUse(chain, WALLET.address, 0, chain.head, 650, searches);
      calls++;
    }
    expect(use).toEqual({ kind: "used", by: hashOf(2), block: { number: 700, hash: hashOf(50_700) } });
    expect(Math.min(...chain.stateReads)).toBeGreaterThanOrEqual(chain.head - STATE_BLOCKS);
    // From the oldest block with state down to the use (read a few at once), each body once.
    expect(new Set(chain.bodyReads).size).toBe(chain.bodyReads.length);
    expect(chain.bodyReads.every((block) => block > 650 && block <= chain.head - STATE_BLOCKS)).toBe(true);
    expect(chain.bodyReads.length).toBeLessThan(chain.head - STATE_BLOCKS - 700 + 1 + 8);
    expect(calls).toBe(Math.ceil((chain.head - STATE_BLOCKS - 700 + 1) / BODIES_PER_CALL));
  });

  it("reads only the bodies between the counts the lane noted (below the nonce, then past it)", async () => {
    const chain = new PrunedChain();
    chain.uses.push({ block: 703, nonce: 0, hash: hashOf(3) });
    const searches = new NonceSearches();
    searches.noteCount(698, 0);
    searches.noteCount(705, 1);
    expect(await findNonceUse(chain, WALLET.address, 0, chain.head, 100, searches)).toEqual({ kind: "used", by: hashOf(3), block: { number: 703, hash: hashOf(50_703) } });
    expect(chain.bodyReads.slice(0, 3)).toEqual([705, 704, 703]);
    expect(chain.bodyReads.every((block) => block > 698 && block <= 705)).toBe(true);
  });

  it("calls a range read whole without the nonce's user unfindable only once the wider range (STATE_BLOCKS below the hints' to the head) is read too, and does not read it again", async () => {
    const chain = new PrunedChain();
    // Counted used (an authorization the body does not show as the wallet's), in no body as the wallet's.
    chain.uses.push({ block: 903, nonce: 0, hash: hashOf(4), from: OTHER });
    const searches = new NonceSearches();
    searches.noteCount(900, 0);
    searches.noteCount(910, 1);
    expect(await untilSettled(() => findNonceUse(chain, WALLET.address, 0, chain.head, 100, searches))).toEqual({ kind: "unfindable", searched: { from: 837, to: 1_000 } });
    expect(chain.bodyReads.slice(0, 10)).toEqual([910, 909, 908, 907, 906, 905, 904, 903, 902, 901]);
    const read = chain.bodyReads.length;
    expect(await findNonceUse(chain, WALLET.address, 0, chain.head, 100, searches)).toEqual({ kind: "unfindable", searched: { from: 837, to: 1_000 } });
    expect(chain.bodyReads.length).toBe(read);
  });

  it("finds a use a reorganisation moved past the blocks its hints name, though no count contradicted them (searched again wider, without them)", async () => {
    const chain = new PrunedChain();
    // Noted on the old branch: the outside sender's transaction at nonce 0 in block 841; the branch was
    // replaced and that transaction mined again in block 845. No count read since says otherwise.
    const searches = new NonceSearches();
    searches.noteCount(840, 0);
    searches.noteCount(841, 1);
    chain.uses.push({ block: 845, nonce: 0, hash: hashOf(8) });
    expect(await untilSettled(() => findNonceUse(chain, WALLET.address, 0, chain.head, 800, searches))).toEqual({ kind: "used", by: hashOf(8), block: { number: 845, hash: hashOf(50_845) } });
  });

  it("forgets its hints, searches and verdicts when a count contradicts them (a reorganisation moved the use): found where it is now", async () => {
    const chain = new PrunedChain();
    chain.uses.push({ block: 903, nonce: 0, hash: hashOf(6), from: OTHER });
    const searches = new NonceSearches();
    searches.noteCount(900, 0);
    searches.noteCount(910, 1);
    expect((await untilSettled(() => findNonceUse(chain, WALLET.address, 0, chain.head, 100, searches)))?.kind).toBe("unfindable");
    // A reorganisation: the wallet's own transaction at nonce 0 is in block 912 now, and the count read at 910 says 0.
    chain.uses.splice(0, 1, { block: 912, nonce: 0, hash: hashOf(7) });
    searches.noteCount(910, 0);
    searches.noteCount(915, 1);
    expect(await findNonceUse(chain, WALLET.address, 0, chain.head, 100, searches)).toEqual({ kind: "used", by: hashOf(7), block: { number: 912, hash: hashOf(50_912) } });
  });

  it("finds another account's transaction carrying the wallet's EIP-7702 authorization at the nonce", async () => {
    const chain = new PrunedChain();
    const signed = WALLET.authorizeSync({ address: OTHER, nonce: 0n, chainId: 31337n });
    const authorization = {
      chainId: toQuantity(signed.chainId),
      address: signed.address,
      nonce: toQuantity(signed.nonce),
      yParity: toQuantity(signed.signature.yParity),
      r: signed.signature.r,
      s: signed.signature.s,
    };
    chain.uses.push({ block: 990, nonce: 0, hash: hashOf(5), authorization });
    expect(await findNonceUse(chain, WALLET.address, 0, chain.head, 950)).toEqual({ kind: "used", by: hashOf(5), via: "authorization", block: { number: 990, hash: hashOf(50_990) } });
  });

  it("says unused while the head's count has not passed the nonce", async () => {
    const chain = new PrunedChain();
    expect(await findNonceUse(chain, WALLET.address, 0, chain.head, 0)).toEqual({ kind: "unused" });
  });
});
