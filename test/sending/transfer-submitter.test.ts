/** The first broadcast's answer to the client, against a scripted node and a real journal. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import { JournalOutcomeUnknownError, JournalUnavailableError, type TransferJournal } from "../../src/journal/transfer-journal.js";
import { encodeTransfer } from "../../src/node/erc20.js";
import { NonceAllocator } from "../../src/sending/nonce-allocator.js";
import { TransferSubmitter } from "../../src/sending/transfer-submitter.js";
import { WalletLedger } from "../../src/sending/wallet-ledger.js";
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

    const sent = await submitter.submit({ request, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n, reservation: ledger.reserve(1n, 1n), entryId: undefined });

    expect(calls.map((call) => call.method)).toEqual(["eth_sendRawTransaction"]);
    // What a restart's reconciliation starts from: the signed transfer, found and sent again, never lost.
    expect(real.findByHash(sent.hash)).toMatchObject({ state: "signed", nonce: 0 });
    expect(submitter.inFlightCount).toBe(0);
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
    const submitting = submitter.submit({ request: { recipient: RECIPIENT, units: 1n }, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n, reservation: ledger.reserve(1n, 1n), entryId: undefined });

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
});
