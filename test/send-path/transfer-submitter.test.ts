/** The first broadcast's answer to the client, against a scripted node and a real journal. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Transaction } from "ethers";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import { JournalOutcomeUnknownError, JournalUnavailableError, type TransferJournal } from "../../src/journal/transfer-journal.js";
import { encodeTransfer } from "../../src/node/erc20.js";
import { NonceAllocator } from "../../src/send-path/nonce-allocator.js";
import { RefusalUnrecordedError, TransferSubmitter } from "../../src/send-path/transfer-submitter.js";
import { WalletLedger } from "../../src/send-path/wallet-ledger.js";
import { SignerUnavailableError } from "../../src/signers/wallet-signer.js";
import { FAKE_TOKEN, fakeChain, snapshotAt } from "../helpers/fake-chain.js";
import { journalWith } from "../helpers/journal-overrides.js";

const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

describe("TransferSubmitter", () => {
  let dir: string | undefined;
  let journal: TransferJournal | undefined;
  afterEach(() => {
    journal?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers the transfer sent once the node took it, even when the journal fails right after (another commit failed meanwhile)", async () => {
    const { chain, calls } = fakeChain(async ({ method }) => {
      if (method === "eth_sendRawTransaction") return "0x";
      throw new Error(`unexpected ${method}`);
    });
    dir = mkdtempSync(join(tmpdir(), "submitter-"));
    const real = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: chain.wallet.address, tokenAddress: FAKE_TOKEN });
    journal = real;
    // The signed bytes are durable; the write after the broadcast meets a journal that failed meanwhile.
    const failingAfterBroadcast = journalWith(real, {
      recordAccepted: () => {
        throw new JournalUnavailableError(new Error("disk I/O error"));
      },
    });
    const ledger = new WalletLedger(snapshotAt(100, 0));
    const submitter = new TransferSubmitter({ chain, journal: failingAfterBroadcast, ledger, nonces: new NonceAllocator(async () => 0), onHeld: () => undefined });
    const request = { recipient: RECIPIENT, units: 1n };

    const sent = await submitter.submit({ request, call: { to: FAKE_TOKEN, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n }, kind: "transfer", reservation: ledger.reserve(1n, 1n), entryId: undefined });

    expect(calls.map((call) => call.method)).toEqual(["eth_sendRawTransaction"]);
    // What a restart's reconciliation starts from: the signed transfer, found and sent again, never lost.
    expect(real.findByHash(sent.hash)).toMatchObject({ state: "signed", nonce: 0 });
    expect(submitter.inFlightCount).toBe(0);
  });

  it("waits for room at the node before the first broadcast; without room in time, the transfer is owned (journaled, signed) and not sent from here", async () => {
    const { chain, calls } = fakeChain(async ({ method }) => {
      if (method === "eth_sendRawTransaction") return "0x";
      throw new Error(`unexpected ${method}`);
    });
    dir = mkdtempSync(join(tmpdir(), "submitter-"));
    const real = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: chain.wallet.address, tokenAddress: FAKE_TOKEN });
    journal = real;
    const ledger = new WalletLedger(snapshotAt(100, 0));
    const held: string[] = [];
    let room: (hasRoom: boolean) => void = () => {};
    const asked: number[] = [];
    const submitter = new TransferSubmitter({
      chain,
      journal: real,
      ledger,
      nonces: new NonceAllocator(async () => 0),
      onHeld: (hash) => held.push(hash),
      awaitRoomAtNode: (nonce) => (asked.push(nonce), new Promise((resolve) => (room = resolve))),
    });
    const prepared = () => ({ request: { recipient: RECIPIENT, units: 1n }, call: { to: FAKE_TOKEN, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n }, kind: "transfer" as const, reservation: ledger.reserve(1n, 1n), entryId: undefined });

    const first = submitter.submit(prepared());
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Journaled before the wait, nothing sent during it.
    expect(asked).toEqual([0]);
    expect(calls).toEqual([]);
    room(true);
    const sent = await first;
    expect(calls.map((call) => call.method)).toEqual(["eth_sendRawTransaction"]);
    expect(real.findByHash(sent.hash)).toMatchObject({ state: "accepted", nonce: 0 });

    const second = submitter.submit(prepared());
    await new Promise((resolve) => setTimeout(resolve, 20));
    room(false);
    const heldTransfer = await second;
    expect(calls).toHaveLength(1);
    expect(held).toEqual([heldTransfer.hash]);
    // Owned: the background sends signed entries once the node has room.
    expect(real.findByHash(heldTransfer.hash)).toMatchObject({ state: "signed", nonce: 1 });
  });

  it.each([
    ["holds the record after all (its acknowledgement was lost): the transfer is owned, 200, and nothing is sent from here", true],
    ["cannot be asked: neither 200 nor 'nothing was sent', but TRANSFER_OUTCOME_UNKNOWN naming the hash", undefined],
    ["does not hold it: nothing was or will be sent", false],
  ] as const)("a journal whose shared database %s", async (_label, recorded) => {
    const { chain, calls } = fakeChain(async ({ method }) => {
      throw new Error(`unexpected ${method}`);
    });
    dir = mkdtempSync(join(tmpdir(), "submitter-"));
    const real = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: chain.wallet.address, tokenAddress: FAKE_TOKEN });
    journal = real;
    const shipmentFailed = new JournalUnavailableError(new Error("Connection terminated unexpectedly"));
    const failingShipment = journalWith(real, { flushed: () => Promise.reject(shipmentFailed), wasRecorded: async () => recorded });
    const ledger = new WalletLedger(snapshotAt(100, 0));
    const held: string[] = [];
    const submitter = new TransferSubmitter({ chain, journal: failingShipment, ledger, nonces: new NonceAllocator(async () => 0), onHeld: (hash) => held.push(hash) });
    const submitting = submitter.submit({ request: { recipient: RECIPIENT, units: 1n }, call: { to: FAKE_TOKEN, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n }, kind: "transfer", reservation: ledger.reserve(1n, 1n), entryId: undefined });

    if (recorded === true) {
      const sent = await submitting;
      expect(held).toEqual([sent.hash]);
    } else if (recorded === undefined) {
      await expect(submitting).rejects.toBeInstanceOf(JournalOutcomeUnknownError);
    } else {
      await expect(submitting).rejects.toBe(shipmentFailed);
    }
    // Nothing is broadcast by a process whose journal failed.
    expect(calls).toEqual([]);
  });

  it.each(["nonce too low", "replacement transaction underpriced"])("a first broadcast the node refuses with %s: held and answered as sent (words are no proof), signed once, its nonce kept; the next transfer starts past the chain's count", async (words) => {
    let chainCount = 0;
    const { chain, calls } = fakeChain(async ({ method }) => {
      if (method === "eth_sendRawTransaction") {
        // Another sender of the key used nonces 0 to 2 between the count's read and the broadcast.
        chainCount = 3;
        throw Object.assign(new Error(words), { error: { code: -32000, message: words } });
      }
      throw new Error(`unexpected ${method}`);
    });
    dir = mkdtempSync(join(tmpdir(), "submitter-"));
    journal = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: chain.wallet.address, tokenAddress: FAKE_TOKEN });
    const ledger = new WalletLedger(snapshotAt(100, 0));
    const nonces = new NonceAllocator(async () => chainCount);
    const held: { hash: string; nonce: number; meaning: string }[] = [];
    const submitter = new TransferSubmitter({ chain, journal, ledger, nonces, onHeld: (hash, nonce, answer) => held.push({ hash, nonce, meaning: answer.meaning }) });
    await nonces.ready();
    const prepared = () => ({ request: { recipient: RECIPIENT, units: 1n }, call: { to: FAKE_TOKEN, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n }, kind: "transfer" as const, reservation: ledger.reserve(1n, 1n), entryId: undefined });

    const sent = await submitter.submit(prepared());

    expect(sent.transaction.nonce).toBe(0);
    expect(calls.filter((call) => call.method === "eth_sendRawTransaction")).toHaveLength(1);
    expect(held).toEqual([{ hash: sent.hash, nonce: 0, meaning: words === "nonce too low" ? "nonce-too-low" : "replacement-underpriced" }]);
    // Owned: on record as signed, sent again by the background, settled by what the chain shows at nonce 0.
    expect(journal.findByHash(sent.hash)).toMatchObject({ state: "signed", nonce: 0 });
    expect(nonces.isGivenBack(0)).toBe(false);
    const next = await submitter.submit(prepared());
    expect(next.transaction.nonce).toBe(3);
  });

  it("a refusal the journal fails to record: RefusalUnrecordedError naming the hash (not \"nothing was sent\"); the signed record stays, for the restart to send again", async () => {
    const { chain } = fakeChain(async ({ method }) => {
      if (method === "eth_sendRawTransaction") throw Object.assign(new Error("insufficient funds for gas * price + value"), { error: { code: -32000, message: "insufficient funds for gas * price + value" } });
      // Asked whether it holds the refused transaction: it does not.
      if (method === "eth_getTransactionByHash") return null;
      throw new Error(`unexpected ${method}`);
    });
    dir = mkdtempSync(join(tmpdir(), "submitter-"));
    const real = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: chain.wallet.address, tokenAddress: FAKE_TOKEN });
    journal = real;
    const failingRefusal = journalWith(real, {
      recordRejected: () => {
        throw new JournalUnavailableError(new Error("database or disk is full"));
      },
    });
    const ledger = new WalletLedger(snapshotAt(100, 0));
    const submitter = new TransferSubmitter({ chain, journal: failingRefusal, ledger, nonces: new NonceAllocator(async () => 0), onHeld: () => undefined });

    const submitting = submitter.submit({ request: { recipient: RECIPIENT, units: 1n }, call: { to: FAKE_TOKEN, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n }, kind: "transfer", reservation: ledger.reserve(1n, 1n), entryId: undefined });

    const error = await submitting.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RefusalUnrecordedError);
    const { hash } = error as RefusalUnrecordedError;
    expect(real.findByHash(hash)).toMatchObject({ state: "signed", nonce: 0 });
  });

  it("signs concurrently with a slow remote signer, each nonce once, journaled before sent; a signature that fails gives its nonce to the next transfer", async () => {
    const received: number[] = [];
    const { chain } = fakeChain(async ({ method, params }) => {
      if (method !== "eth_sendRawTransaction") throw new Error(`unexpected ${method}`);
      received.push(Transaction.from(params[0] as string).nonce);
      return "0x";
    });
    // A signer whose answers take 40 to 80 ms and come back out of order; the fifth call fails.
    const local = chain.signer;
    let calls = 0;
    let signing = 0;
    let mostAtOnce = 0;
    chain.signer = {
      ...local,
      async sign(digest) {
        const call = ++calls;
        signing++;
        mostAtOnce = Math.max(mostAtOnce, signing);
        await new Promise((resolve) => setTimeout(resolve, 40 + ((call * 37) % 41)));
        signing--;
        if (call === 5) throw new SignerUnavailableError("throttled");
        return local.sign(digest);
      },
    };
    dir = mkdtempSync(join(tmpdir(), "submitter-"));
    journal = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: chain.wallet.address, tokenAddress: FAKE_TOKEN });
    const ledger = new WalletLedger(snapshotAt(100, 0));
    const submitter = new TransferSubmitter({ chain, journal, ledger, nonces: new NonceAllocator(async () => 0), onHeld: () => undefined });
    const submit = () => submitter.submit({ request: { recipient: RECIPIENT, units: 1n }, call: { to: FAKE_TOKEN, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n }, kind: "transfer", reservation: ledger.reserve(1n, 1n), entryId: undefined });

    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, submit));
    // Side by side, not one after the other: the signer had most of the 12 signatures under way at once.
    expect(mostAtOnce).toBeGreaterThan(6);
    const failed = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(failed).toHaveLength(1);
    expect((failed[0] as PromiseRejectedResult).reason).toBeInstanceOf(SignerUnavailableError);
    // Nothing was signed at the failed signature's nonce; the next transfer takes it (where none comes, the
    // background's gap filler does), so the wallet's nonces have no hole: 0 to 12.
    const next = await submit();
    expect(next.transaction.nonce).toBe(4);
    const sent = [...outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value.transaction.nonce] : [])), next.transaction.nonce];
    expect([...sent].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, nonce) => nonce));
    expect([...received].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, nonce) => nonce));
    // Each journaled once, at its own nonce, before it was sent.
    for (const outcome of outcomes) {
      if (outcome.status === "fulfilled") expect(journal.findByHash(outcome.value.hash)).toMatchObject({ nonce: outcome.value.transaction.nonce });
    }
  });
});
