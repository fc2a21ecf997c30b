/**
 * The background resend's decisions, against a scripted node and a real journal: it acts on entries as
 * they are when it acts, and the chain's facts (nonce counts, receipts), not a node's words, settle a
 * transfer whose nonce was used.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { JournalEntry, TransferJournal } from "../../src/journal/transfer-journal.js";
import { createNonceAllocator } from "../../src/send-path/create-nonce-allocator.js";
import { TransferReconciler, resendUnanswered } from "../../src/send-path/transfer-reconciler.js";
import { WalletLedger } from "../../src/send-path/wallet-ledger.js";
import { signWalletTransaction } from "../../src/send-path/wallet-transaction.js";
import { encodeTransfer } from "../../src/node/erc20.js";
import { NO_TAG_ANSWERS_BEFORE_DEPTH, NO_TAG_FOR_MS } from "../../src/node/finalized-block.js";
import type { ChainConnection } from "../../src/node/connect-chain.js";
import { FAKE_TOKEN, type FakeCall, type FakeNode, fakeChain, nodeError, snapshotAt } from "../helpers/fake-chain.js";

const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const FEES = { type: 2, maxFeePerGas: 2_001_000_000n, maxPriorityFeePerGas: 1_000_000n } as const;

describe("the background resend", () => {
  let dir: string;
  let journal: TransferJournal;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "reconciler-"));
  });
  afterEach(() => {
    journal?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function setUp(node: FakeNode, minedNonceCount = 0) {
    const { chain, calls } = fakeChain(node);
    journal = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: chain.wallet.address, tokenAddress: FAKE_TOKEN });
    const ledger = new WalletLedger(snapshotAt(100, minedNonceCount));
    return { chain, calls, ledger, reconciler: new TransferReconciler(chain, journal, ledger) };
  }

  async function journalSigned(chain: ChainConnection, nonce: number): Promise<{ id: number; hash: string; raw: string }> {
    const signed = await signWalletTransaction(chain, { nonce, to: FAKE_TOKEN, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n }, FEES);
    const id = journal.recordSigned(undefined, { recipient: RECIPIENT, units: 1n }, { nonce, hash: signed.hash, rawTransaction: signed.rawTransaction, signedAtBlock: 90 });
    return { id, hash: signed.hash, raw: signed.rawTransaction };
  }

  // The entries the reconciler signs again (each "succeeds"), in order.
  function recordSigningAgain(reconciler: TransferReconciler): number[] {
    const signedAgain: number[] = [];
    reconciler.signAgain = async (stale) => {
      signedAgain.push(stale.id);
      return true;
    };
    return signedAgain;
  }

  const rawSent = (calls: FakeCall[]) => calls.filter((call) => call.method === "eth_sendRawTransaction").map((call) => call.params[0]);

  it("never sends an entry refused after the round read its list (answered 417): it stays rejected", async () => {
    let refuseSecond: () => void = () => undefined;
    const { chain, calls, ledger, reconciler } = setUp(async ({ method, params }) => {
      if (method === "eth_getTransactionByHash" && params[0] === first.hash) {
        // While the node is asked about the first entry, the second one's request is refused and answered.
        refuseSecond();
        return null;
      }
      if (method === "eth_getTransactionByHash") return null;
      if (method === "eth_sendRawTransaction") return "0x";
      throw new Error(`unexpected ${method}`);
    });
    const first = await journalSigned(chain, 0);
    const second = await journalSigned(chain, 1);
    refuseSecond = () => journal.recordRejected(second.id, { code: "NONCE_EXPIRED", message: "refused; never sent" });
    await journal.flushed();

    await resendUnanswered(reconciler, journal, ledger, { isInFlight: () => false, hasRoomAtNode: () => true, staleAfterMs: 60_000, replaceHeld: async () => undefined });

    expect(rawSent(calls)).toEqual([first.raw]);
    expect(journal.findById(second.id)).toMatchObject({ state: "rejected" });
    expect(journal.findById(first.id)).toMatchObject({ state: "accepted" });
  });

  it("leaves a signed entry unsent while the node has no room for its nonce, and sends the ones that fit", async () => {
    const { chain, calls, ledger, reconciler } = setUp(async ({ method }) => {
      if (method === "eth_getTransactionByHash") return null;
      if (method === "eth_sendRawTransaction") return "0x";
      throw new Error(`unexpected ${method}`);
    });
    const first = await journalSigned(chain, 0);
    const second = await journalSigned(chain, 1);
    await journal.flushed();

    await resendUnanswered(reconciler, journal, ledger, { isInFlight: () => false, hasRoomAtNode: (nonce) => nonce < 1, staleAfterMs: 60_000, replaceHeld: async () => undefined });

    expect(rawSent(calls)).toEqual([first.raw]);
    expect(journal.findById(second.id)).toMatchObject({ state: "signed" });
  });

  it("tells each time a node gives no pending count after re-sending the wallet's next transaction, with its nonce and hash; the bytes go out all the same", async () => {
    let countFails = true;
    const { chain, calls, reconciler } = setUp(async ({ method, params }) => {
      if (method === "eth_getTransactionByHash") return null;
      if (method === "eth_sendRawTransaction") return "0x";
      if (method === "eth_getTransactionCount" && params[1] === "pending") {
        if (countFails) throw nodeError("the pending block tag is not supported");
        return "0x1";
      }
      throw new Error(`unexpected ${method}`);
    });
    const told: { error: unknown; at: { nonce: number; hash: string } }[] = [];
    reconciler.onPendingCountUnread = (error, at) => told.push({ error, at });
    const next = await journalSigned(chain, 0);
    await journal.flushed();
    const resendNext = () => reconciler.resend(journal.findById(next.id) as JournalEntry, true);

    expect(await resendNext()).toBe("taken");
    expect(await resendNext()).toBe("taken");
    expect(told.map(({ at }) => at)).toEqual([
      { nonce: 0, hash: next.hash },
      { nonce: 0, hash: next.hash },
    ]);
    expect(String(told[0].error)).toContain("the pending block tag is not supported");

    // A count given again: nothing told, and the evidence is taken.
    countFails = false;
    expect(await resendNext()).toBe("taken");
    expect(told).toHaveLength(2);
    expect(rawSent(calls)).toEqual([next.raw, next.raw, next.raw]);
  });

  /**
   * A chain as the node shows it, read by block number: the wallet's nonce 0 was used at block `usedAt` by
   * the transaction `user` (another sender's, or one of the transfer's own), blocks are final up to
   * `finalized`; receipts, logs and lookups by hash show nothing (an index that lags its head).
   */
  function chainWith(wallet: () => string, state: { usedAt: number; user: () => string; finalized: number; blockHash?: (height: number) => string }, extra: FakeNode = () => undefined): FakeNode {
    const hashAt = (height: number) => state.blockHash?.(height) ?? `0x${height.toString(16).padStart(64, "b")}`;
    return async (call) => {
      const { method, params } = call;
      const answered = await extra(call);
      if (answered !== undefined) return answered;
      if (method === "eth_getTransactionReceipt" || method === "eth_getTransactionByHash") return null;
      if (method === "eth_getTransactionCount") return Number(params[1]) >= state.usedAt ? "0x1" : "0x0";
      if (method === "eth_getBlockByNumber" && params[0] === "finalized") return { number: `0x${state.finalized.toString(16)}`, hash: hashAt(state.finalized) };
      if (method === "eth_getBlockByNumber") {
        const height = Number(params[0]);
        const transactions = height === state.usedAt ? [{ hash: state.user(), from: wallet().toLowerCase(), nonce: "0x0" }] : [];
        return { number: params[0], hash: hashAt(height), transactions: params[1] ? transactions : transactions.map((transaction) => transaction.hash) };
      }
      throw new Error(`unexpected ${method} ${JSON.stringify(params)}`);
    };
  }
  const OUTSIDE = `0x${"0e".repeat(32)}`;

  it("signs nothing again while nothing on the chain shows which transaction used the nonce: receipts and lookups that lag are no proof", async () => {
    // The node's count says nonce 0 is used, yet no block's body holds a transaction of the wallet at it
    // (backends that disagree), and no receipt, log or lookup shows one.
    let wallet = "";
    const { chain, reconciler } = setUp(chainWith(() => wallet, { usedAt: 95, user: () => "", finalized: 100 }, ({ method, params }) => {
      if (method === "eth_getBlockByNumber" && params[0] !== "finalized") return { number: params[0], hash: `0x${"aa".repeat(32)}`, transactions: [] };
      return undefined;
    }), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    const signedAgain = recordSigningAgain(reconciler);
    for (let round = 0; round < 5; round++) expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: nonce used, checking again");
    expect(signedAgain).toEqual([]);
    expect(journal.findById(entry.id)).toMatchObject({ state: "signed" });
  });

  it("finds its own attempt in the block where the nonce count passed it, when receipts lag: mined, never signed again", async () => {
    let wallet = "";
    let ours = "";
    const { chain, calls, reconciler } = setUp(chainWith(() => wallet, { usedAt: 97, user: () => ours, finalized: 0 }), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    ours = entry.hash.toLowerCase();
    const minedIn: unknown[] = [];
    reconciler.onMinedIn = (_, block) => minedIn.push(block);
    reconciler.signAgain = async () => expect.unreachable("a mined transfer is never signed again");

    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("taken");
    expect(journal.findById(entry.id)).toMatchObject({ state: "nonce-used", minedHash: entry.hash });
    expect(minedIn).toEqual([{ number: 97, hash: `0x${(97).toString(16).padStart(64, "b")}` }]);
    // Found by halving the blocks between the signing and the head, not by reading every one.
    expect(calls.filter((call) => call.method === "eth_getTransactionCount").length).toBeLessThan(8);
  });

  it("signs again only once another sender's transaction is found at the nonce and its block is final; until then the transfer is displaced, not failed", async () => {
    let wallet = "";
    const state = { usedAt: 95, user: () => OUTSIDE, finalized: 90 };
    const { chain, reconciler } = setUp(chainWith(() => wallet, state, ({ method }) => {
      // A node refusing the re-send in words no table knows: only the chain's facts decide.
      if (method === "eth_sendRawTransaction") throw nodeError("the tx doesn't have the correct nonce. account has nonce of: 1 tx has nonce of: 0");
      return undefined;
    }), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    await journal.flushed();
    const signedAgain = recordSigningAgain(reconciler);

    for (let round = 0; round < 3; round++) expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: displaced, not final");
    expect(reconciler.displacements.of(entry.id, 0)).toEqual({ by: OUTSIDE, block: { number: 95, hash: `0x${(95).toString(16).padStart(64, "b")}` }, nonce: 0 });
    expect(signedAgain).toEqual([]);
    expect(journal.findById(entry.id)?.state).toBe("signed");

    state.finalized = 95;
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("signed again");
    expect(signedAgain).toEqual([entry.id]);
    expect(reconciler.displacements.of(entry.id, 0)).toBeUndefined();
  });

  it("journals the displacement it found, so that after a restart, with the displacing block long past the state a node keeps, it goes on from it and signs again once final", async () => {
    let wallet = "";
    const state = { usedAt: 95, user: () => OUTSIDE, finalized: 90 };
    let pruned = false;
    const first = setUp(chainWith(() => wallet, state, ({ method, params }) => {
      if (method === "eth_sendRawTransaction") throw nodeError("nonce too low");
      // After the restart the head is far on: state below it is pruned, and the old bodies are no longer searched for.
      if (pruned && method === "eth_getTransactionCount" && params[1] !== "latest" && Number(params[1]) < 10_000) throw nodeError("missing trie node: state is not available");
      if (pruned && method === "eth_getBlockByNumber" && params[1] === true) throw new Error("no body should be read: the displacement is journaled");
      return undefined;
    }), 1);
    wallet = first.chain.wallet.address;
    const entry = await journalSigned(first.chain, 0);
    await journal.flushed();
    expect(await first.reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: displaced, not final");
    await journal.flushed();
    expect(journal.findById(entry.id)?.displacement).toEqual({ by: OUTSIDE, block: { number: 95, hash: `0x${(95).toString(16).padStart(64, "b")}` }, nonce: 0 });

    // A restart: a new reconciler over the journal reopened; the chain has moved 10,000 blocks on.
    journal.close();
    pruned = true;
    state.finalized = 9_000;
    journal = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: first.chain.wallet.address, tokenAddress: FAKE_TOKEN });
    const restarted = new TransferReconciler(first.chain, journal, new WalletLedger(snapshotAt(10_050, 1)));
    restarted.noteHead(10_050);
    const signedAgain = recordSigningAgain(restarted);
    expect(await restarted.resend(journal.findById(entry.id)!)).toBe("signed again");
    expect(signedAgain).toEqual([entry.id]);
  });

  it("signs nothing when the displacing transaction's block leaves the chain before it is final: the transfer's own bytes may yet be mined", async () => {
    let wallet = "";
    let reorganised = false;
    // After the reorganisation block 95 has another hash, and the wallet's count there no longer passes the nonce.
    const state = { usedAt: 95, user: () => OUTSIDE, finalized: 90, blockHash: (height: number) => `0x${height.toString(16).padStart(64, reorganised ? "c" : "b")}` };
    const { chain, reconciler } = setUp(chainWith(() => wallet, state), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    reconciler.signAgain = async () => expect.unreachable("the displacing transaction never became final");
    let staleSnapshots = 0;
    reconciler.onSnapshotStale = () => staleSnapshots++;

    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: displaced, not final");
    reorganised = true;
    state.usedAt = 1_000;
    state.finalized = 99;
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: nonce used, checking again");
    expect(reconciler.displacements.of(entry.id, 0)).toBeUndefined();
    // The chain's newest blocks show its nonce unused (as an idle service's snapshot, never read again, would
    // not): the snapshot is asked to be read again, from which the transfer is pending again and its own
    // bytes go out.
    reconciler.noteHead(104);
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: nonce unused again");
    expect(staleSnapshots).toBe(1);
  });

  it("signs again a transfer the node still returns unmined from its pool, once the transaction mined at its nonce is found and final: that copy is dead", async () => {
    let wallet = "";
    const { chain, reconciler } = setUp(chainWith(() => wallet, { usedAt: 95, user: () => OUTSIDE, finalized: 99 }, ({ method }) => {
      // A pool that keeps a transaction whose nonce another one used (anvil can, for a while).
      if (method === "eth_getTransactionByHash") return { blockNumber: null, blockHash: null };
      return undefined;
    }), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    const signedAgain = recordSigningAgain(reconciler);
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("signed again");
    expect(signedAgain).toEqual([entry.id]);
  });

  it("settles by the entry as it is now: an attempt added after the caller read it (a re-price), found in the block, is the transfer's own, not a displacement", async () => {
    let wallet = "";
    let repriced = "";
    const { chain, reconciler } = setUp(chainWith(() => wallet, { usedAt: 95, user: () => repriced, finalized: 99 }), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    const stale = journal.findById(entry.id)!;
    const again = await signWalletTransaction(chain, { nonce: 0, to: FAKE_TOKEN, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n }, { ...FEES, maxFeePerGas: 3n * FEES.maxFeePerGas });
    journal.recordAttempt(entry.id, { hash: again.hash, rawTransaction: again.rawTransaction, kind: "transfer", signedAtBlock: 94 });
    repriced = again.hash.toLowerCase();
    reconciler.signAgain = async () => expect.unreachable("the transfer's own re-priced attempt was mined");
    expect(await reconciler.settleUsedNonce(stale)).toBe("taken");
    expect(journal.findById(entry.id)).toMatchObject({ minedHash: again.hash });
  });

  it("signs nothing again before the send path is wired (startup): the displaced transfer waits for the next round, not reported failed", async () => {
    let wallet = "";
    const { chain, reconciler } = setUp(chainWith(() => wallet, { usedAt: 95, user: () => OUTSIDE, finalized: 99 }), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: displaced, not final");
    expect(journal.findById(entry.id)).toMatchObject({ state: "signed" });
  });

  it("counts the displacing block's depth from the newest head a block read showed, not only from the wallet snapshot (an idle service reads no snapshot)", async () => {
    let wallet = "";
    // No `finalized` tag: final is FINALITY_BLOCKS (64 for this chain) below the head.
    const { chain, reconciler } = setUp(chainWith(() => wallet, { usedAt: 95, user: () => OUTSIDE, finalized: 0 }, ({ method, params }) => {
      if (method === "eth_getBlockByNumber" && params[0] === "finalized") throw nodeError("invalid block tag finalized");
      return undefined;
    }), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    const signedAgain = recordSigningAgain(reconciler);
    // The node says it has no such tag at every read: depth once it said so NO_TAG_ANSWERS_BEFORE_DEPTH times in a row, over NO_TAG_FOR_MS.
    vi.useFakeTimers({ toFake: ["performance"] });
    try {
      for (let read = 0; read < NO_TAG_ANSWERS_BEFORE_DEPTH; read++) {
        expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: displaced, not final");
        vi.advanceTimersByTime(NO_TAG_FOR_MS / 2);
      }
      reconciler.noteHead(95 + 64);
      expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("signed again");
      expect(signedAgain).toEqual([entry.id]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("reports a transfer failed when it cannot be signed again", async () => {
    let wallet = "";
    const { chain, reconciler } = setUp(chainWith(() => wallet, { usedAt: 95, user: () => OUTSIDE, finalized: 99 }), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    reconciler.signAgain = async () => false;
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("replaced");
    expect(journal.findById(entry.id)).toMatchObject({ state: "replaced" });
  });

  it("at startup, a node fault of the moment (a rate limit on the finalized read) leaves the transfer waiting for the background, and does not stop the start", async () => {
    let wallet = "";
    const { chain, reconciler } = setUp(chainWith(() => wallet, { usedAt: 95, user: () => OUTSIDE, finalized: 99 }, ({ method, params }) => {
      if (method === "eth_getBlockByNumber" && params[0] === "finalized") throw nodeError("limit exceeded");
      return undefined;
    }), 1);
    wallet = chain.wallet.address;
    const entry = await journalSigned(chain, 0);
    await journal.flushed();
    expect(await reconciler.reconcileAtStartup()).toEqual({ abandonedClaims: 0, taken: 0, replaced: 0, waiting: 1 });
    expect(journal.findById(entry.id)).toMatchObject({ state: "signed" });
  });

  it("at startup, sends again a transfer settled before a reorganisation took its nonce off the chain, and keeps its nonce from new transfers", async () => {
    const { chain, calls, reconciler } = setUp(async ({ method, params }) => {
      if (method === "eth_getTransactionByHash") return null;
      if (method === "eth_sendRawTransaction") return "0x";
      // The chain as it is now: the wallet's transaction at nonce 0 is no longer mined, nor pending.
      if (method === "eth_getTransactionCount") return "0x0";
      throw new Error(`unexpected ${method} ${JSON.stringify(params)}`);
    }, 0);
    const settled = await journalSigned(chain, 0);
    journal.recordAccepted(settled.id);
    journal.markNonceUsedBelow(1);
    journal.recordMined(settled.id, settled.hash);
    await journal.flushed();

    await reconciler.reconcileAtStartup();
    const nonces = await createNonceAllocator(chain, journal);

    expect(rawSent(calls)).toEqual([settled.raw]);
    expect(journal.findById(settled.id)).toMatchObject({ state: "accepted", minedHash: null });
    expect(nonces.take()).toBe(1);
  });
});
