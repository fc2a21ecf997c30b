/** What a request with an Idempotency-Key is answered when the journal cannot keep the answer. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ServiceError } from "../../src/errors.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import { JournalUnavailableError, type TransferJournal } from "../../src/journal/transfer-journal.js";
import { NonceAllocator } from "../../src/send-path/nonce-allocator.js";
import { TokenTransferService } from "../../src/send-path/transfer-service.js";
import { TransferSubmitter } from "../../src/send-path/transfer-submitter.js";
import { WalletLedger } from "../../src/send-path/wallet-ledger.js";
import { FAKE_TOKEN, fakeChain, snapshotAt } from "../helpers/fake-chain.js";
import { journalWith } from "../helpers/journal-overrides.js";

const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

describe("TokenTransferService and a journal that fails", () => {
  let dir: string | undefined;
  let journal: TransferJournal | undefined;
  afterEach(() => {
    journal?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers a refusal it cannot record for the key 503 JOURNAL_UNAVAILABLE (retry), not a 417 a repeat after the restart would not repeat", async () => {
    const { chain } = fakeChain(async ({ method }) => {
      throw new Error(`unexpected ${method}`);
    });
    dir = mkdtempSync(join(tmpdir(), "transfer-service-"));
    const real = openSqliteJournal(join(dir, "transfers.sqlite"), { chainId: 31337n, walletAddress: chain.wallet.address, tokenAddress: FAKE_TOKEN });
    journal = real;
    // The claim commits; then the disk fills up before the refusal can be recorded.
    let failed: JournalUnavailableError | undefined;
    const failingAfterClaim = journalWith(real, {
      failure: () => failed,
      claimKey: (...args: Parameters<TransferJournal["claimKey"]>) => {
        const claim = real.claimKey(...args);
        failed = new JournalUnavailableError(new Error("database or disk is full"));
        return claim;
      },
    });
    const ledger = new WalletLedger(snapshotAt(100, 0));
    const nonces = new NonceAllocator(async () => 0);
    const service = new TokenTransferService({
      chain,
      gasLimitMultiplier: "1.0",
      journal: failingAfterClaim,
      ledger,
      submitter: new TransferSubmitter({ chain, journal: failingAfterClaim, ledger, nonces, onHeld: () => undefined }),
      ensureFees: async () => undefined,
      ensureSnapshot: async () => undefined,
    });

    // More tokens than the wallet holds: a refusal before anything is signed.
    const answer = await service.sendTokenTransfer({ recipient: RECIPIENT, units: 10n ** 30n }, "order-1").catch((error: unknown) => error);
    expect(answer).toBeInstanceOf(ServiceError);
    expect(answer).toMatchObject({ code: "JOURNAL_UNAVAILABLE", statusCode: 503 });
  });
});
