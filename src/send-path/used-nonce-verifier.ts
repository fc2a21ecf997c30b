/**
 * Which transaction used each settled transfer's nonce: a node that took an attempt proves nothing about
 * what was mined (another sender of the wallet's key may have used the nonce first). The wallet's Transfer
 * logs (one read per block, shared) settle most of them at once; only a transfer without such a log
 * (cancelled, reverted, older than the log window, or its nonce used by another transaction) costs
 * receipt lookups of its own, in the reconciler, which signs it again when no attempt of it was mined.
 */
import type { TransferJournal } from "../journal/transfer-journal.js";
import { SignerUnavailableError } from "../signers/wallet-signer.js";
import type { WalletTransferLogs } from "../node/wallet-transfer-logs.js";
import type { TransferReconciler } from "./transfer-reconciler.js";

/** Verifies every used nonce not verified yet, as of chain head `head`; throws a signer's refusal once every other one was. */
export async function verifyUsedNonces(logs: WalletTransferLogs, journal: TransferJournal, reconciler: TransferReconciler, head: number): Promise<void> {
  const unverified = journal.usedUnverified();
  if (unverified.length === 0) return;
  const fromBlock = Math.min(...unverified.flatMap((entry) => entry.attempts.map((attempt) => attempt.signedAtBlock)));
  const logged = await logs.read(fromBlock, head, unverified.length);
  let refused: SignerUnavailableError | undefined;
  for (const entry of unverified) {
    const mined = entry.attempts.find((attempt) => logged.has(attempt.hash));
    const log = mined && logged.get(mined.hash);
    if (mined && log) {
      reconciler.recordMined(entry, mined.hash, { number: log.blockNumber, hash: log.blockHash });
      continue;
    }
    try {
      await reconciler.settleUsedNonce(entry);
    } catch (error) {
      // A transfer to sign again that the signer would not sign waits for the next round; the others are settled now.
      if (!(error instanceof SignerUnavailableError)) throw error;
      refused ??= error;
    }
  }
  if (refused) throw refused;
}
