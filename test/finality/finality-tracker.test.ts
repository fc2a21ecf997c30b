/** The finality tracker's bookkeeping of the chain it follows, with a fake node (and a fake or in-memory journal) at the boundary. */
import { toQuantity } from "ethers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FinalityTracker } from "../../src/finality/finality-tracker.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";
import type { FeeBlock } from "../../src/send-path/wallet-snapshot.js";

const block = (number: number, hash: string, parentHash: string): FeeBlock => ({ number, hash, parentHash, baseFeePerGas: 1n });
const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

/**
 * The wallet's nonces as the chain's blocks show them, read by number: `usedAt[nonce]` is the block where
 * the wallet's count passed it and the transaction in that block's body. Answers the calls it knows (a
 * count at a height, a full block), undefined for any other.
 */
function nonceFacts(usedAt: Record<number, { height: number; hash: string }>) {
  return (method: string, params: unknown[]): unknown => {
    if (method === "eth_getTransactionCount") {
      let count = 0;
      while (usedAt[count] && usedAt[count].height <= Number(params[1])) count++;
      return toQuantity(count);
    }
    if (method === "eth_getBlockByNumber" && params[1] === true) {
      const height = Number(params[0]);
      const transactions = Object.entries(usedAt)
        .filter(([, used]) => used.height === height)
        .map(([nonce, used]) => ({ hash: used.hash, from: WALLET.toLowerCase(), nonce: toQuantity(Number(nonce)) }));
      return { number: params[0], hash: `0xf${height}`, transactions };
    }
    return undefined;
  };
}

function openTestJournal(): TransferJournal {
  return openSqliteJournal(":memory:", {
    chainId: 31337n,
    walletAddress: WALLET,
    tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  });
}

/** Journals a transfer the service saw mined as `hash` and settled at `head`; returns its id. */
function settleTransfer(journal: TransferJournal, nonce: number, hash: string, head: number): number {
  const id = journal.recordSigned(undefined, { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1n }, { nonce, hash, rawTransaction: "0x02", signedAtBlock: head - 2 });
  journal.recordAccepted(id);
  journal.markNonceUsedBelow(nonce + 1);
  journal.recordMined(id, hash);
  journal.markSettledAt(head);
  return id;
}

describe("FinalityTracker with nothing settled to follow", () => {
  it("has what remembers blocks forget them when the chain moved on unchecked: a reorganisation, or reads that skipped blocks", async () => {
    const journal = { hasUnfinal: () => false } as unknown as TransferJournal;
    let jumps = 0;
    const tracker = new FinalityTracker({
      node: { send: async () => Promise.reject(new Error("no node call is expected")) },
      journal,
      finalityBlocks: 64,
      onReorg: async () => undefined,
      onUnfollowedJump: () => jumps++,
    });
    // The first read: nothing is known of what came before it.
    await tracker.follow(block(10, "0xa10", "0xa09"));
    expect(jumps).toBe(1);
    // Extends it: nothing to forget.
    await tracker.follow(block(11, "0xa11", "0xa10"));
    expect(jumps).toBe(1);
    // The same height with another hash, then a block whose parent is not the one read: two reorganisations.
    await tracker.follow(block(11, "0xb11", "0xb10"));
    expect(jumps).toBe(2);
    await tracker.follow(block(12, "0xc12", "0xc11"));
    expect(jumps).toBe(3);
    // Blocks skipped between two reads: whether they are one chain is not known without a node call.
    await tracker.follow(block(15, "0xc15", "0xc14"));
    expect(jumps).toBe(4);
    await tracker.follow(block(16, "0xc16", "0xc15"));
    expect(jumps).toBe(4);
  });
});

describe("FinalityTracker starting with settled transfers not final", () => {
  it("looks each up on the chain as it is now: one the chain no longer carries (a reorganisation while the service was down) is pending again", async () => {
    const journal = openTestJournal();
    // Three transfers the previous process saw mined and verified, settled at block 20, not final yet.
    const onChain = `0x${"aa".repeat(32)}`;
    const lagging = `0x${"cc".repeat(32)}`;
    const orphaned = `0x${"bb".repeat(32)}`;
    settleTransfer(journal, 0, onChain, 20);
    settleTransfer(journal, 1, lagging, 20);
    settleTransfer(journal, 2, orphaned, 20);
    // The chain now: nonces 0 and 1 used (1 by `lagging`, whose receipt this backend does not have yet), 2 unused.
    const facts = nonceFacts({ 0: { height: 19, hash: onChain }, 1: { height: 19, hash: lagging } });
    const receiptsAskedFor: string[] = [];
    const outcomes: unknown[] = [];
    const tracker = new FinalityTracker({
      node: {
        send: async (method: string, params: unknown[]) => {
          const fact = facts(method, params);
          if (fact !== undefined) return fact;
          if (method === "eth_getBlockByNumber") return { number: params[0], hash: `0xb${Number(params[0])}` };
          expect(method).toBe("eth_getTransactionReceipt");
          receiptsAskedFor.push(String(params[0]));
          return params[0] === onChain ? { blockNumber: toQuantity(19), blockHash: "0xb19" } : null;
        },
      },
      journal,
      finalityBlocks: 64,
      onReorg: async () => undefined,
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    await tracker.follow(block(30, "0xb30", "0xb29"));
    expect(receiptsAskedFor).toEqual([onChain, lagging, orphaned]);
    expect(journal.findByHash(onChain)).toMatchObject({ state: "nonce-used", minedHash: onChain, settledBlock: 20 });
    // A missing receipt is no proof: the block where the count passed its nonce holds it.
    expect(journal.findByHash(lagging)).toMatchObject({ state: "nonce-used", minedHash: lagging, settledBlock: 20 });
    expect(journal.findByHash(orphaned)).toMatchObject({ state: "accepted", minedHash: null, settledBlock: null });
    expect(outcomes).toEqual([{ reorganised: true, unmined: 1, finalized: 0, finalizedBlock: null }]);
    journal.close();
  });

  it("believes no receipt whose block is not the chain's at its height (an index that outlived a reorganisation): the chain's blocks decide", async () => {
    const journal = openTestJournal();
    const kept = `0x${"aa".repeat(32)}`;
    const displaced = `0x${"bb".repeat(32)}`;
    const outsider = `0x${"ee".repeat(32)}`;
    settleTransfer(journal, 0, kept, 20);
    settleTransfer(journal, 1, displaced, 20);
    // Both receipts name block 19 as it was (0xa19); the chain's block 19 is now 0xb19, and there another
    // transaction of the wallet used nonce 1: the node's count at the head says nothing is amiss.
    const facts = nonceFacts({ 0: { height: 18, hash: kept }, 1: { height: 19, hash: outsider } });
    const outcomes: unknown[] = [];
    const tracker = new FinalityTracker({
      node: {
        send: async (method: string, params: unknown[]) => {
          const fact = facts(method, params);
          if (fact !== undefined) return fact;
          if (method === "eth_getBlockByNumber") return { number: params[0], hash: `0xb${Number(params[0])}` };
          if (params[0] === kept) return { blockNumber: toQuantity(18), blockHash: "0xb18" };
          return { blockNumber: toQuantity(19), blockHash: "0xa19" };
        },
      },
      journal,
      finalityBlocks: 64,
      onReorg: async () => undefined,
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    await tracker.follow(block(30, "0xb30", "0xb29"));
    expect(journal.findByHash(kept)).toMatchObject({ state: "nonce-used", minedHash: kept, settledBlock: 20 });
    expect(journal.findByHash(displaced)).toMatchObject({ state: "accepted", minedHash: null, settledBlock: null });
    expect(outcomes).toEqual([{ reorganised: true, unmined: 1, finalized: 0, finalizedBlock: null }]);
    journal.close();
  });

  it("leaves a transfer as it is while neither receipts nor the chain's blocks settle it (backends that disagree), looks again at each read, and makes nothing final meanwhile", async () => {
    const journal = openTestJournal();
    const settled = `0x${"aa".repeat(32)}`;
    settleTransfer(journal, 0, settled, 20);
    const outcomes: unknown[] = [];
    const receipts: string[] = [];
    // The count says nonce 0 is used from block 19, but that block's body lacks the transaction, until the
    // backends agree.
    let bodyShowsIt = false;
    const tracker = new FinalityTracker({
      node: {
        send: async (method: string, params: unknown[]) => {
          if (method === "eth_getTransactionCount") return Number(params[1]) >= 19 ? "0x1" : "0x0";
          if (method === "eth_getBlockByNumber" && params[0] === "finalized") return { number: "0x1e", hash: "0xb30" };
          if (method === "eth_getBlockByNumber") {
            const transactions = bodyShowsIt && Number(params[0]) === 19 ? [{ hash: settled, from: WALLET.toLowerCase(), nonce: "0x0" }] : [];
            return { number: params[0], hash: `0xb${Number(params[0])}`, transactions };
          }
          receipts.push(String(params[0]));
          return null;
        },
      },
      journal,
      finalityBlocks: 1,
      onReorg: async () => undefined,
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    await tracker.follow(block(30, "0xb30", "0xb29"));
    expect(journal.findByHash(settled)).toMatchObject({ state: "nonce-used", minedHash: settled, settledBlock: 20 });
    expect(outcomes).toEqual([]);
    // The next read extends it: still undecided, looked at again, and not made final although deep enough.
    await tracker.follow(block(31, "0xb31", "0xb30"));
    expect(receipts).toEqual([settled, settled]);
    expect(journal.findByHash(settled)).toMatchObject({ state: "nonce-used", finalBlock: null });
    bodyShowsIt = true;
    await tracker.follow(block(32, "0xb32", "0xb31"));
    expect(journal.findByHash(settled)).toMatchObject({ state: "nonce-used", minedHash: settled, finalBlock: 30 });
    journal.close();
  });

  it("takes a nonce unused at a block below the one a transfer was seen settled at for a backend behind the others: still settled", async () => {
    const journal = openTestJournal();
    const settled = `0x${"aa".repeat(32)}`;
    // The previous process saw it settled at block 40; this process's first read comes from a backend at 30.
    settleTransfer(journal, 0, settled, 40);
    const outcomes: unknown[] = [];
    const facts = nonceFacts({ 0: { height: 38, hash: settled } });
    const tracker = new FinalityTracker({
      node: { send: async (method: string, params: unknown[]) => facts(method, params) ?? null },
      journal,
      finalityBlocks: 64,
      onReorg: async () => undefined,
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    await tracker.follow(block(30, "0xb30", "0xb29"));
    expect(journal.findByHash(settled)).toMatchObject({ state: "nonce-used", minedHash: settled, settledBlock: 40 });
    expect(outcomes).toEqual([]);
    journal.close();
  });
});

describe("FinalityTracker following reads that skipped blocks", () => {
  afterEach(() => vi.useRealTimers());

  it("looks again for what was settled at or above the block it checked: a reorganisation there replaced blocks no read saw", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const journal = openTestJournal();
    const settle = (nonce: number, hash: string, head: number) => settleTransfer(journal, nonce, hash, head);
    const below = `0x${"aa".repeat(32)}`;
    const orphaned = `0x${"bb".repeat(32)}`;
    const lagging = `0x${"cc".repeat(32)}`;
    settle(0, below, 18);
    const receipts: string[] = [];
    const hashes: Record<number, string> = { 17: "0xa17", 20: "0xa20", 26: "0xc26" };
    // The new chain: nonce 0 at block 17, nonce 1 (`lagging`) at block 23; nonce 2 unused (`orphaned`'s block was replaced).
    const facts = nonceFacts({ 0: { height: 17, hash: below }, 1: { height: 23, hash: lagging } });
    let jumps = 0;
    const tracker = new FinalityTracker({
      node: {
        send: async (method: string, params: unknown[]) => {
          const fact = facts(method, params);
          if (fact !== undefined) return fact;
          if (method === "eth_getBlockByNumber") return { number: params[0], hash: hashes[Number(params[0])] };
          receipts.push(String(params[0]));
          // One backend lags: it has no receipt of `lagging`; the chain no longer has `orphaned`.
          return params[0] === below ? { blockNumber: toQuantity(17), blockHash: "0xa17" } : null;
        },
      },
      journal,
      finalityBlocks: 64,
      onReorg: async () => Promise.reject(new Error("the checked blocks are still on the chain: no reorganisation is seen there")),
      onUnfollowedJump: () => jumps++,
    });
    await tracker.follow(block(20, "0xa20", "0xa19"));
    // Seen mined in blocks 21 to 23 (a receipt, or a remembered log), settled at heads 20 and 24; then
    // blocks 22 to 24 were replaced, and the next read is block 26 of the new chain, which still carries 20.
    settle(1, lagging, 20);
    settle(2, orphaned, 24);
    receipts.length = 0;
    jumps = 0;
    await tracker.follow(block(26, "0xc26", "0xc25"));
    expect(receipts).toEqual([lagging, orphaned]);
    expect(jumps).toBe(1);
    // Without a receipt, the chain's blocks decide: `lagging` is in the block where the count passed its
    // nonce; `orphaned`'s nonce is unused on the new chain, so it is pending again, at the first look.
    expect(journal.findByHash(lagging)).toMatchObject({ state: "nonce-used", minedHash: lagging });
    expect(journal.findByHash(orphaned)).toMatchObject({ state: "accepted", minedHash: null, settledBlock: null });
    expect(journal.findByHash(below)).toMatchObject({ state: "nonce-used", minedHash: below, settledBlock: 18 });
    journal.close();
  });
});

describe("FinalityTracker looking again with the wallet's Transfer logs", () => {
  it("finds transfers the logs show without a receipt each, and looks up only the rest by receipt", async () => {
    const journal = openTestJournal();
    const [first, second, third, unlogged] = ["aa", "bb", "cc", "dd"].map((byte) => `0x${byte.repeat(32)}`);
    const calls: string[] = [];
    const logReads: unknown[] = [];
    const tracker = new FinalityTracker({
      node: {
        send: async (method: string, params: unknown[]) => {
          calls.push(`${method} ${String(params[0])}`);
          if (method === "eth_getBlockByNumber") return { number: params[0], hash: `0xa${Number(params[0])}` };
          // A transfer that reverted leaves no Transfer log; its receipt is the fact.
          return params[0] === unlogged ? { blockNumber: toQuantity(23), blockHash: "0xa23" } : null;
        },
      },
      journal,
      finalityBlocks: 64,
      onReorg: async () => Promise.reject(new Error("the checked block is still on the chain: no reorganisation is seen there")),
      transferLogs: {
        readAfresh: async (from, to) => {
          logReads.push([from, to]);
          return new Map([first, second, third].map((hash, index) => [hash, { blockNumber: 21 + index, blockHash: `0xa${21 + index}` }]));
        },
      },
    });
    await tracker.follow(block(20, "0xa20", "0xa19"));
    // Signed at heads 18 to 21 (settleTransfer signs two below the head it settles at), settled at 20 to 23.
    [first, second, third, unlogged].forEach((hash, nonce) => settleTransfer(journal, nonce, hash, 20 + nonce));
    calls.length = 0;
    await tracker.follow(block(26, "0xa26", "0xa25"));
    // The check of the skipped reads, one log read from the earliest signing to this read, then one receipt
    // and the chain's block at its height.
    expect(calls).toEqual(["eth_getBlockByNumber 0x14", `eth_getTransactionReceipt ${unlogged}`, "eth_getBlockByNumber 0x17"]);
    // Read afresh (readAfresh): logs remembered from before may be of blocks that left the chain.
    expect(logReads).toEqual([[18, 26]]);
    for (const hash of [first, second, third, unlogged]) expect(journal.findByHash(hash)).toMatchObject({ state: "nonce-used", minedHash: hash });
    journal.close();
  });

  it("looks one transfer up by its receipt and the chain's block at its height, not by a log read", async () => {
    const journal = openTestJournal();
    const only = `0x${"aa".repeat(32)}`;
    const calls: string[] = [];
    const tracker = new FinalityTracker({
      node: {
        send: async (method: string, params: unknown[]) => {
          calls.push(`${method} ${String(params[0])}`);
          return method === "eth_getBlockByNumber" ? { number: params[0], hash: `0xa${Number(params[0])}` } : { blockNumber: toQuantity(21), blockHash: "0xa21" };
        },
      },
      journal,
      finalityBlocks: 64,
      onReorg: async () => Promise.reject(new Error("no reorganisation is seen here")),
      transferLogs: {
        readAfresh: async () => Promise.reject(new Error("no log read is expected for one transfer")),
      },
    });
    await tracker.follow(block(20, "0xa20", "0xa19"));
    settleTransfer(journal, 0, only, 22);
    calls.length = 0;
    await tracker.follow(block(26, "0xa26", "0xa25"));
    expect(calls).toEqual(["eth_getBlockByNumber 0x14", `eth_getTransactionReceipt ${only}`, "eth_getBlockByNumber 0x15"]);
    expect(journal.findByHash(only)).toMatchObject({ state: "nonce-used", minedHash: only });
    journal.close();
  });
});

describe("FinalityTracker told where a transfer was seen mined", () => {
  it("sees that block leave the chain at the next read of its height or the one above (a reorganisation at the tip, between two reads)", async () => {
    const journal = openTestJournal();
    const settle = (nonce: number, hash: string) => settleTransfer(journal, nonce, hash, 20);
    const kept = `0x${"aa".repeat(32)}`;
    const orphanedAtTip = `0x${"bb".repeat(32)}`;
    const orphanedBelow = `0x${"cc".repeat(32)}`;
    const receipts: string[] = [];
    // No receipt is found (an index that lags); the chain's blocks show nonce 0 used by `kept`, 1 and 2 unused.
    const facts = nonceFacts({ 0: { height: 21, hash: kept } });
    const tracker = new FinalityTracker({
      node: {
        send: async (method: string, params: unknown[]) => {
          const fact = facts(method, params);
          if (fact !== undefined) return fact;
          if (method === "eth_getBlockByNumber") return { number: params[0], hash: "0xb21" };
          receipts.push(String(params[0]));
          return null;
        },
      },
      journal,
      finalityBlocks: 64,
      onReorg: async () => Promise.reject(new Error("every read extends the one before: no reorganisation is seen there")),
    });
    await tracker.follow(block(20, "0xa20", "0xa19"));
    // Receipts read from blocks newer than the last read: 21 as it was (0xa21), and 22 of that old branch.
    tracker.expectMinedIn(settle(0, kept), { number: 21, hash: "0xb21" });
    tracker.expectMinedIn(settle(1, orphanedAtTip), { number: 21, hash: "0xa21" });
    tracker.expectMinedIn(settle(2, orphanedBelow), { number: 22, hash: "0xa22" });
    receipts.length = 0;
    // The next read is block 21 of another branch: it extends 20, and it is not the block one receipt named.
    await tracker.follow(block(21, "0xb21", "0xa20"));
    expect(receipts).toEqual([orphanedAtTip]);
    expect(journal.findByHash(orphanedAtTip)).toMatchObject({ state: "accepted", minedHash: null });
    expect(journal.findByHash(kept)).toMatchObject({ state: "nonce-used", minedHash: kept });
    // Block 22 is skipped; block 23 names its parent: not the block the last receipt named.
    receipts.length = 0;
    await tracker.follow(block(23, "0xb23", "0xb22"));
    expect(receipts).toEqual([orphanedBelow]);
    expect(journal.findByHash(orphanedBelow)).toMatchObject({ state: "accepted", minedHash: null });
    expect(journal.findByHash(kept)).toMatchObject({ state: "nonce-used", minedHash: kept });
    journal.close();
  });
});

describe("FinalityTracker when a look fails part way (a node fault)", () => {
  afterEach(() => vi.useRealTimers());

  /**
   * A node whose receipts fail while `failing` is set, and otherwise show no receipt, and whose blocks show
   * the wallet's nonces unused: the transfers' blocks are gone.
   */
  function faultyNode(blockHashes: Record<number, string>) {
    const state = { failing: true, receipts: [] as string[] };
    const facts = nonceFacts({});
    const node = {
      send: async (method: string, params: unknown[]) => {
        if (method === "eth_getBlockByNumber" && params[1] !== true) return { number: params[0], hash: blockHashes[Number(params[0])] };
        if (state.failing) throw new Error("connection reset");
        const fact = facts(method, params);
        if (fact !== undefined) return fact;
        state.receipts.push(String(params[0]));
        return null;
      },
    };
    return { node, state };
  }

  it("checks the same anchor again at the next read, and looks again for what was settled since it", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const journal = openTestJournal();
    const orphaned = `0x${"bb".repeat(32)}`;
    const { node, state } = faultyNode({ 20: "0xa20", 27: "0xc27" });
    const tracker = new FinalityTracker({ node, journal, finalityBlocks: 64, onReorg: async () => Promise.reject(new Error("block 20 stays on the chain")) });
    await tracker.follow(block(20, "0xa20", "0xa19"));
    settleTransfer(journal, 0, orphaned, 24);
    // Reads skipped blocks 21 to 25: the receipt lookup fails.
    await expect(tracker.follow(block(26, "0xc26", "0xc25"))).rejects.toThrow("connection reset");
    state.failing = false;
    vi.advanceTimersByTime(4_000);
    // The next read names 26 as its parent; 26 was never checked, so 20 is, and what settled since is looked for.
    await tracker.follow(block(27, "0xc27", "0xc26"));
    expect(state.receipts).toEqual([orphaned]);
    // No receipt, and the chain's blocks show its nonce unused: pending again at this look.
    expect(journal.findByHash(orphaned)).toMatchObject({ state: "accepted", minedHash: null });
    journal.close();
  });

  it("decides again the block a transfer was seen mined in when the same block is read again", async () => {
    const journal = openTestJournal();
    const orphanedAtTip = `0x${"bb".repeat(32)}`;
    const { node, state } = faultyNode({});
    const tracker = new FinalityTracker({ node, journal, finalityBlocks: 64, onReorg: async () => Promise.reject(new Error("every read extends the one before")) });
    await tracker.follow(block(20, "0xa20", "0xa19"));
    tracker.expectMinedIn(settleTransfer(journal, 0, orphanedAtTip, 20), { number: 21, hash: "0xa21" });
    // Block 21 of another branch: the receipt lookup of the transfer seen in 0xa21 fails.
    await expect(tracker.follow(block(21, "0xb21", "0xa20"))).rejects.toThrow("connection reset");
    state.failing = false;
    // The poller reads the same head again (no new block yet).
    await tracker.follow(block(21, "0xb21", "0xa20"));
    expect(state.receipts).toEqual([orphanedAtTip]);
    expect(journal.findByHash(orphanedAtTip)).toMatchObject({ state: "accepted", minedHash: null });
    journal.close();
  });
});
