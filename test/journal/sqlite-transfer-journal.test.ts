import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JournalOwnerMismatchError, JournalWriteError, openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1_500_000_000_000_000_000n };
const SIGNED = { nonce: 7, hash: `0x${"ab".repeat(32)}`, rawTransaction: "0x02f8" };

describe("the SQLite transfer journal", () => {
  let dir: string;
  let path: string;
  let journal: TransferJournal;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "journal-test-"));
    path = join(dir, "nested", "transfers.sqlite");
    journal = openSqliteJournal(path, OWNER);
  });
  afterEach(() => {
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("claims a key once; the second claim sees the first entry", () => {
    const first = journal.claimKey("key-1", REQUEST);
    expect(first.outcome).toBe("claimed");
    const second = journal.claimKey("key-1", { ...REQUEST, units: 1n });
    expect(second).toMatchObject({ outcome: "existing", entry: { state: "claimed", recipient: REQUEST.recipient, units: REQUEST.units } });
  });

  it("keeps a signed transfer across a reopen, as after a crash", () => {
    const claim = journal.claimKey("key-2", REQUEST);
    if (claim.outcome !== "claimed") throw new Error("expected a claim");
    journal.recordSigned(claim.entryId, REQUEST, SIGNED);
    journal.close();
    journal = openSqliteJournal(path, OWNER);
    expect(journal.unsettled()).toEqual([expect.objectContaining({ idempotencyKey: "key-2", state: "signed", ...SIGNED, units: REQUEST.units })]);
    expect(journal.findByHash(SIGNED.hash.toUpperCase().replace("0X", "0x"))?.idempotencyKey).toBe("key-2");
  });

  it("records a transfer without a key when it is signed", () => {
    const id = journal.recordSigned(undefined, REQUEST, SIGNED);
    journal.recordAccepted(id);
    expect(journal.unsettled()).toEqual([expect.objectContaining({ id, idempotencyKey: null, state: "accepted" })]);
  });

  it("marks accepted entries whose nonce the chain has used; signed ones stay for the reconciler to check", () => {
    for (const nonce of [1, 2, 3]) journal.recordAccepted(journal.recordSigned(undefined, REQUEST, { ...SIGNED, nonce, hash: `0x${String(nonce).repeat(64)}` }));
    const unanswered = journal.recordSigned(undefined, REQUEST, { ...SIGNED, nonce: 0, hash: `0x${"0".repeat(64)}` });
    expect(journal.markNonceUsedBelow(3)).toBe(2);
    expect(journal.unsettled().map((entry) => [entry.id, entry.nonce])).toEqual([[unanswered, 0], [expect.any(Number), 3]]);
    expect(journal.findByHash(`0x${"1".repeat(64)}`)?.state).toBe("nonce-used");
  });

  it("keeps the refusal a client was given, for repeats of its key", async () => {
    const claim = journal.claimKey("refused-key", REQUEST);
    if (claim.outcome !== "claimed") throw new Error("expected a claim");
    journal.recordRefused(claim.entryId, { code: "INSUFFICIENT_TOKEN_BALANCE", message: "not enough" });
    await journal.flushed();
    journal.close();
    journal = openSqliteJournal(path, OWNER);
    expect(journal.claimKey("refused-key", REQUEST)).toMatchObject({ outcome: "existing", entry: { state: "refused", refusal: { code: "INSUFFICIENT_TOKEN_BALANCE", message: "not enough" } } });
  });

  it("refuses a write that finds no entry to change, instead of losing it silently", () => {
    expect(() => journal.recordSigned(4242, REQUEST, SIGNED)).toThrow(JournalWriteError);
    expect(() => journal.recordAccepted(4242)).toThrow(JournalWriteError);
    const id = journal.recordSigned(undefined, REQUEST, SIGNED);
    journal.recordAccepted(id);
    // Only a claim or an unanswered signature can be (re)signed.
    expect(() => journal.recordSigned(id, REQUEST, SIGNED)).toThrow(JournalWriteError);
  });

  it("releasing a key deletes an unsigned claim, and never frees the key of a signed entry", () => {
    const unsigned = journal.claimKey("key-3", REQUEST);
    const signed = journal.claimKey("key-4", REQUEST);
    if (unsigned.outcome !== "claimed" || signed.outcome !== "claimed") throw new Error("expected claims");
    journal.recordSigned(signed.entryId, REQUEST, SIGNED);
    expect(journal.releaseKey(unsigned.entryId)).toBe(true);
    // Its transaction may be on chain: a repeat must find it, not run again.
    expect(journal.releaseKey(signed.entryId)).toBe(false);
    expect(journal.claimKey("key-3", REQUEST).outcome).toBe("claimed");
    expect(journal.claimKey("key-4", REQUEST)).toMatchObject({ outcome: "existing", entry: { state: "signed", hash: SIGNED.hash } });
  });

  it("forgets keys past their lifetime but keeps the entries", () => {
    journal.claimKey("old", REQUEST);
    expect(journal.expireKeys(60_000, Date.now() + 61_000)).toBe(1);
    expect(journal.claimKey("old", REQUEST).outcome).toBe("claimed");
    expect(journal.expireKeys(60_000)).toBe(0);
  });

  it("refuses to serve another wallet", () => {
    journal.close();
    expect(() => openSqliteJournal(path, { ...OWNER, walletAddress: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" })).toThrow(JournalOwnerMismatchError);
    journal = openSqliteJournal(path, OWNER);
  });
});
