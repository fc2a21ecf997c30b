/**
 * Background rounds and a signer that does not sign (paused after an unexpected outflow, or a KMS out of
 * reach): the transfer that needed a signature waits for the next round, and the others are settled now.
 */
import type { FastifyBaseLogger } from "fastify";
import { describe, expect, it } from "vitest";
import type { JournalEntry, TransferJournal } from "../../src/journal/transfer-journal.js";
import type { WalletTransferLogs } from "../../src/node/wallet-transfer-logs.js";
import { unlessSignerRefuses } from "../../src/send-path/signer-refusal.js";
import type { TransferReconciler } from "../../src/send-path/transfer-reconciler.js";
import { verifyUsedNonces } from "../../src/send-path/used-nonce-verifier.js";
import { SigningPausedError } from "../../src/signers/signing-pause.js";
import { SignerUnavailableError } from "../../src/signers/wallet-signer.js";

const hashOf = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const entryOf = (id: number): JournalEntry => ({ id, nonce: id, hash: hashOf(id), attempts: [{ hash: hashOf(id), kind: "transfer", signedAtBlock: 1 }] }) as unknown as JournalEntry;

function warnings() {
  const lines: string[] = [];
  const log = { warn: (_fields: object, message: string) => lines.push(message) } as unknown as FastifyBaseLogger;
  return { lines, log };
}

describe("verifyUsedNonces with a signer that does not sign", () => {
  it("settles every other transfer, then throws the refusal once", async () => {
    // Entry 1 was displaced (to be signed again), 2 has no log yet (settled by the reconciler), 3 was mined (its log).
    const entries = [entryOf(1), entryOf(2), entryOf(3)];
    const settled: number[] = [];
    const mined: number[] = [];
    const reconciler = {
      settleUsedNonce: async (entry: JournalEntry) => {
        if (entry.id === 1) throw new SigningPausedError("signing is paused");
        settled.push(entry.id);
        return "taken";
      },
      recordMined: (entry: JournalEntry) => mined.push(entry.id),
    } as unknown as TransferReconciler;
    const journal = { usedUnverified: () => entries } as unknown as TransferJournal;
    const logs = { read: async () => new Map([[hashOf(3), { blockNumber: 5, blockHash: hashOf(500) }]]) } as unknown as WalletTransferLogs;
    await expect(verifyUsedNonces(logs, journal, reconciler, 6)).rejects.toBeInstanceOf(SigningPausedError);
    expect(settled).toEqual([2]);
    expect(mined).toEqual([3]);
  });

  it("throws any other failure at once, as before", async () => {
    const reconciler = {
      settleUsedNonce: async () => {
        throw new Error("node down");
      },
      recordMined: () => undefined,
    } as unknown as TransferReconciler;
    const journal = { usedUnverified: () => [entryOf(1), entryOf(2)] } as unknown as TransferJournal;
    const logs = { read: async () => new Map() } as unknown as WalletTransferLogs;
    await expect(verifyUsedNonces(logs, journal, reconciler, 6)).rejects.toThrow("node down");
  });
});

describe("unlessSignerRefuses", () => {
  it("answers what the work resolved with", async () => {
    const { log } = warnings();
    expect(await unlessSignerRefuses(Promise.resolve("done"), log, "re-pricing")).toBe("done");
  });

  it("takes a pause quietly (said when it began) and a signer out of reach with a warning; throws anything else", async () => {
    const { lines, log } = warnings();
    expect(await unlessSignerRefuses(Promise.reject(new SigningPausedError("paused")), log, "re-pricing")).toBeUndefined();
    expect(lines).toEqual([]);
    expect(await unlessSignerRefuses(Promise.reject(new SignerUnavailableError("KMS throttled")), log, "re-pricing")).toBeUndefined();
    expect(lines).toEqual(["re-pricing: the signer did not sign; tried again at the next round"]);
    await expect(unlessSignerRefuses(Promise.reject(new Error("node down")), log, "re-pricing")).rejects.toThrow("node down");
  });
});
