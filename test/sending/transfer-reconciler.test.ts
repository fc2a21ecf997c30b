/**
 * The background resend's decisions, against a scripted node and a real journal: it acts on entries as
 * they are when it acts, and the chain's facts (nonce counts, receipts), not a node's words, settle a
 * transfer whose nonce was used.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";
import { createNonceAllocator } from "../../src/sending/create-nonce-allocator.js";
import { TransferReconciler, resendUnanswered } from "../../src/sending/transfer-reconciler.js";
import { WalletLedger } from "../../src/sending/wallet-ledger.js";
import { signWalletTransaction } from "../../src/sending/wallet-transaction.js";
import { encodeTransfer } from "../../src/node/erc20.js";
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

    await resendUnanswered(reconciler, journal, ledger, () => false, 60_000, async () => undefined);

    expect(rawSent(calls)).toEqual([first.raw]);
    expect(journal.findById(second.id)).toMatchObject({ state: "rejected" });
    expect(journal.findById(first.id)).toMatchObject({ state: "accepted" });
  });

  it("settles by the chain's facts when a node refuses a re-send in words no table knows: signed again at a new nonce", async () => {
    let head = 100;
    const { chain, calls, reconciler } = setUp(async ({ method, params }) => {
      if (method === "eth_getTransactionByHash" || method === "eth_getTransactionReceipt") return null;
      if (method === "eth_sendRawTransaction") throw nodeError("the tx doesn't have the correct nonce. account has nonce of: 1 tx has nonce of: 0");
      // Another sender of the wallet's key used nonce 0.
      if (method === "eth_getTransactionCount" && params[1] === "latest") return "0x1";
      if (method === "eth_blockNumber") return `0x${(head++).toString(16)}`;
      throw new Error(`unexpected ${method}`);
    });
    const entry = await journalSigned(chain, 0);
    await journal.flushed();
    const signedAgain: number[] = [];
    reconciler.signAgain = async (stale) => {
      signedAgain.push(stale.id);
      return true;
    };

    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: nonce used, checking again");
    // Proof needs a second look, some time and blocks later: one lagging backend answers like this too.
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    head += 3;
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("signed again");
    expect(signedAgain).toEqual([entry.id]);
    expect(calls.some((call) => call.method === "eth_getTransactionCount")).toBe(true);
  });

  it("signs again a transfer the node still returns unmined from its pool while its nonce is used: that copy is dead", async () => {
    let head = 100;
    const { chain, reconciler } = setUp(async ({ method }) => {
      if (method === "eth_getTransactionReceipt") return null;
      // A pool that keeps a transaction whose nonce another one used (anvil can, for a while).
      if (method === "eth_getTransactionByHash") return { blockNumber: null, blockHash: null };
      if (method === "eth_blockNumber") return `0x${(head++).toString(16)}`;
      throw new Error(`unexpected ${method}`);
    }, 1);
    const entry = await journalSigned(chain, 0);
    const signedAgain: number[] = [];
    reconciler.signAgain = async (stale) => {
      signedAgain.push(stale.id);
      return true;
    };
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: nonce used, checking again");
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    head += 3;
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("signed again");
    expect(signedAgain).toEqual([entry.id]);
  });

  it("reports a transfer failed when it cannot be signed again", async () => {
    let head = 100;
    const { chain, reconciler } = setUp(async ({ method }) => {
      if (method === "eth_getTransactionByHash" || method === "eth_getTransactionReceipt") return null;
      if (method === "eth_blockNumber") return `0x${(head++).toString(16)}`;
      throw new Error(`unexpected ${method}`);
    }, 1);
    const entry = await journalSigned(chain, 0);
    reconciler.signAgain = async () => false;
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("waiting: nonce used, checking again");
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    head += 3;
    expect(await reconciler.resend(journal.findById(entry.id)!)).toBe("replaced");
    expect(journal.findById(entry.id)).toMatchObject({ state: "replaced" });
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
