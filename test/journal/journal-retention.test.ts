/**
 * Retention on a real SQLite journal: only transfers whose story is over leave it (final or refused, key
 * expired, every event delivered or given up), each written to the archive file first, with all its rows.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { archiveOldTransfers } from "../../src/journal/journal-retention.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const RECIPIENT = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const DAY_MS = 86_400_000;
const hashOf = (nonce: number) => `0x${nonce.toString(16).padStart(64, "0")}`;

describe("journal retention", () => {
  let dir: string;
  let journal: TransferJournal;
  afterEach(() => {
    journal?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A transfer signed at `nonce` and taken by a node (settleAndFinalize makes it mined and final). */
  function signedTransfer(nonce: number, key?: string): number {
    const claimed = key === undefined ? undefined : journal.claimKey(key, { recipient: RECIPIENT, units: 1n });
    const id = journal.recordSigned(claimed?.outcome === "claimed" ? claimed.entryId : undefined, { recipient: RECIPIENT, units: 1n }, { nonce, hash: hashOf(nonce), rawTransaction: "0x02f8", signedAtBlock: 1 });
    journal.recordAccepted(id);
    return id;
  }

  function settleAndFinalize(minedNonceCount: number): void {
    journal.markNonceUsedBelow(minedNonceCount);
    for (const entry of journal.usedUnverified()) journal.recordMined(entry.id, entry.hash as string);
    journal.markSettledAt(5);
    journal.finalizeThrough(10);
  }

  it("archives final and refused transfers whose key expired, and keeps the rest; a file line holds every row", async () => {
    dir = mkdtempSync(join(tmpdir(), "retention-"));
    journal = openSqliteJournal(join(dir, "transfers.sqlite"), OWNER);
    const settings = { days: 90, archiveDir: join(dir, "archive") };
    const finalWithoutKey = signedTransfer(0);
    const refused = journal.claimKey("refused-key", { recipient: RECIPIENT, units: 5n });
    if (refused.outcome !== "claimed") throw new Error("claim");
    journal.recordRefused(refused.entryId, { code: "INSUFFICIENT_TOKEN_BALANCE", message: "too little" });
    const reported = signedTransfer(1);
    settleAndFinalize(2);
    // Its outcome reported and finalized, its delivery still pending: kept until delivered or given up.
    journal.recordEvent({ id: "msg_1", type: "transfer.finalized", entryId: reported, body: "{}" }, ["http://127.0.0.1:9/hook"], "transfer.finalized");
    // Keys made so far are past their TTL.
    journal.expireKeys(0, Date.now() + 1);
    const keyStillValid = signedTransfer(2, "a-live-key");
    const notFinal = signedTransfer(3);
    settleAndFinalize(3);
    // Mined at a block the chain has not finalized yet.
    journal.markNonceUsedBelow(4);
    journal.recordMined(notFinal, hashOf(3));
    journal.markSettledAt(20);
    await journal.flushed();
    const farFuture = Date.now() + 100 * DAY_MS;

    // Not old enough: nothing moves.
    expect(await archiveOldTransfers(journal, { ...settings, days: 200 }, farFuture)).toEqual({ archived: 0, file: undefined });

    const first = await archiveOldTransfers(journal, settings, farFuture);
    expect(first.archived).toBe(2);
    const lines = readFileSync(first.file as string, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(lines.map((line) => line.transfer.id).sort()).toEqual([finalWithoutKey, refused.entryId].sort());
    const archivedFinal = lines.find((line) => line.transfer.id === finalWithoutKey);
    expect(archivedFinal).toMatchObject({ transfer: { state: "nonce-used", final_block: 10, units: "1" }, attempts: [{ hash: hashOf(0), raw_transaction: "0x02f8" }] });
    expect(lines.find((line) => line.transfer.id === refused.entryId)?.transfer).toMatchObject({ state: "refused", refusal_code: "INSUFFICIENT_TOKEN_BALANCE" });
    expect(journal.findById(finalWithoutKey)).toBeUndefined();
    expect(journal.findByHash(hashOf(0))).toBeUndefined();
    for (const kept of [reported, keyStillValid, notFinal]) expect(journal.findById(kept), `entry ${kept}`).toBeDefined();
    expect(journal.findByKey("a-live-key")?.id).toBe(keyStillValid);

    // Delivered: the reported transfer goes too, with its event and delivery.
    const [delivery] = journal.deliveries("pending", 10);
    journal.recordDeliveryAttempt(delivery.id, { state: "delivered", lastStatus: "200", nextAttemptAt: 0 });
    await journal.flushed();
    const second = await archiveOldTransfers(journal, settings, farFuture);
    expect(second.archived).toBe(1);
    const appended = readFileSync(second.file as string, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
    expect(appended).toHaveLength(3);
    expect(appended[2]).toMatchObject({ transfer: { id: reported }, webhookEvents: [{ id: "msg_1", type: "transfer.finalized" }], webhookDeliveries: [{ state: "delivered" }] });
    expect(journal.deliveries(undefined, 10)).toEqual([]);
  });
});
