/** The hole finder against a scripted node and a real journal. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";
import { encodeTransfer } from "../../src/node/erc20.js";
import { findNonceHole } from "../../src/send-path/nonce-hole.js";
import { signWalletTransaction } from "../../src/send-path/wallet-transaction.js";
import { FAKE_TOKEN, fakeChain } from "../helpers/fake-chain.js";

const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

describe("findNonceHole", () => {
  let dir: string | undefined;
  let journal: TransferJournal | undefined;
  afterEach(() => {
    journal?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("finds the chain's next nonce free with a transfer waiting above it, unless that nonce is given back or being signed", async () => {
    // The node counts nothing pending beyond the 5 mined transactions.
    const { chain } = fakeChain(async ({ method }) => {
      if (method === "eth_getTransactionCount") return "0x5";
      throw new Error(`unexpected ${method}`);
    });
    dir = mkdtempSync(join(tmpdir(), "nonce-hole-"));
    journal = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: chain.wallet.address, tokenAddress: FAKE_TOKEN });
    const signed = await signWalletTransaction(chain, { nonce: 6, to: FAKE_TOKEN, data: encodeTransfer(RECIPIENT, 1n), gasLimit: 60_000n }, { type: 2, maxFeePerGas: 10n, maxPriorityFeePerGas: 1n });
    journal.recordSigned(undefined, { recipient: RECIPIENT, units: 1n }, { nonce: 6, hash: signed.hash, rawTransaction: signed.rawTransaction, signedAtBlock: 1 });
    await journal.flushed();
    const later = Date.now() + 60_000;
    const none = () => false;

    expect(await findNonceHole(chain, journal, { isGivenBack: none }, none, 5, 1_000, later)).toEqual({ nonce: 5, outbid: undefined });
    expect(await findNonceHole(chain, journal, { isGivenBack: (nonce) => nonce === 5 }, none, 5, 1_000, later)).toBeUndefined();
    // A remote signer still making the signature of the transfer that took nonce 5: that is no hole.
    expect(await findNonceHole(chain, journal, { isGivenBack: none }, (nonce) => nonce === 5, 5, 1_000, later)).toBeUndefined();
  });
});
