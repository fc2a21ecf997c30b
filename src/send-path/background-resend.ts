/**
 * The background work that keeps every owned transfer moving, every few seconds, one round at a time:
 * keys past their lifetime are forgotten; a nonce given back that no transfer took, and a hole at the
 * wallet's next nonce that nothing of ours holds, are filled with a 0-value self-transaction; what no node
 * holds is sent again, and the wallet's next transaction held but not executable is replaced.
 */
import { unlessSignerRefuses } from "./signer-refusal.js";
import type { FastifyBaseLogger } from "fastify";
import { monotonicNow, steadyWallClockNow } from "../clock.js";
import type { JournalEntry, TransferJournal } from "../journal/transfer-journal.js";
import type { ChainConnection } from "../node/connect-chain.js";
import { expireKeyBacklog } from "./key-expiry.js";
import { findNonceHole, journalShowsHole } from "./nonce-hole.js";
import type { NonceAllocator } from "./nonce-allocator.js";
import { type TransferReconciler, resendUnanswered } from "./transfer-reconciler.js";
import type { TransferReplacer } from "./transfer-replacer.js";
import type { TransferSubmitter } from "./transfer-submitter.js";
import type { WalletLedger } from "./wallet-ledger.js";

/** How often, at most, lost broadcasts are looked for, and keys past their lifetime forgotten. */
const MAINTENANCE_INTERVAL_MS = 5_000;

export interface BackgroundResendParts {
  chain: ChainConnection;
  journal: TransferJournal;
  ledger: WalletLedger;
  nonces: NonceAllocator;
  reconciler: TransferReconciler;
  submitter: TransferSubmitter;
  replacer: TransferReplacer;
  log: FastifyBaseLogger;
}

/** Starts the rounds; `stop` ends them and waits for the one under way. */
export function startBackgroundResend(
  settings: { rebroadcastAfterMs: number; keyTtlMs: number; hasRoomAtNode: (nonce: number) => boolean },
  parts: BackgroundResendParts,
): { stop(): Promise<void> } {
  const { chain, journal, ledger, nonces, reconciler, submitter, replacer, log } = parts;
  const { rebroadcastAfterMs, keyTtlMs, hasRoomAtNode } = settings;

  const fillNonceGap = async () => {
    // A given-back nonce the chain shows used (another sender's) needs no filling.
    nonces.passMined(ledger.snapshot.minedNonceCount);
    const gap = nonces.takeGivenBackBefore(monotonicNow() - rebroadcastAfterMs);
    if (gap === undefined) return;
    if (!journal.unsettled().some((entry) => entry.nonce !== null && entry.nonce > gap)) {
      nonces.release(gap);
      return;
    }
    let outcome;
    try {
      outcome = await replacer.fillNonceGap(gap);
    } catch (error) {
      // Failed before its record was written (a failed commit stops all sending anyway): give it back.
      if (!journal.failure) nonces.release(gap);
      throw error;
    }
    log.warn({ nonce: gap, outcome }, "filled a nonce gap left by a refused transfer with a 0-value transaction to the wallet itself, so the transfers after it can be mined");
  };
  // Where the node's pending count takes in transactions queued behind a gap (Besu), a hole never shows in
  // it: a hole the journal has shown at the same mined count for this long is filled whatever that count
  // says. A transaction of another sender that sits there and is executable is mined well before that.
  const holeLastsMs = Math.max(4 * rebroadcastAfterMs, 5_000);
  let holeSeen: { nonce: number; since: number } | undefined;
  const fillNonceHole = async () => {
    const now = steadyWallClockNow();
    const mined = ledger.snapshot.minedNonceCount;
    const isBeingSigned = (nonce: number) => submitter.isBeingSigned(nonce);
    if (!journalShowsHole(journal, nonces, isBeingSigned, mined, rebroadcastAfterMs, now)) {
      holeSeen = undefined;
      return;
    }
    if (holeSeen?.nonce !== mined) holeSeen = { nonce: mined, since: now };
    const hole = await findNonceHole(chain, journal, nonces, isBeingSigned, mined, rebroadcastAfterMs, now, now - holeSeen.since < holeLastsMs);
    if (!hole) return;
    const outcome = await replacer.fillNonceGap(hole.nonce, hole.outbid);
    log.warn({ nonce: hole.nonce, outcome }, "the wallet's next nonce was free again with transfers waiting behind it (the chain took back the transaction that used it): filled it with a 0-value transaction to the wallet itself");
  };
  let round: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    // One round at a time: a slow node must not stack rounds that send the same entries again.
    round ??= (async () => {
      // A journal that failed to commit takes no writes: nothing may be sent until the service restarts.
      if (journal.failure) return;
      await expireKeyBacklog(journal, keyTtlMs);
      // Filling a nonce signs; sending again what was signed does not, and goes on whatever the signer does.
      await unlessSignerRefuses(fillNonceGap(), log, "filling a nonce gap");
      await unlessSignerRefuses(fillNonceHole(), log, "filling a nonce hole");
      const outcomes = await unlessSignerRefuses(
        resendUnanswered(reconciler, journal, ledger, {
          isInFlight: (id) => submitter.isInFlight(id),
          hasRoomAtNode,
          staleAfterMs: rebroadcastAfterMs,
          replaceHeld: (entry) => replaceNotExecutable(replacer, entry, log),
        }),
        log,
        "signing a displaced transfer again",
      );
      if (outcomes && outcomes.length > 0) log.info({ outcomes }, "checked unanswered or stale transactions, sending again what no node held");
    })()
      .catch((error) => log.warn({ err: error }, "background resend failed; will retry"))
      .finally(() => (round = undefined));
  }, Math.min(MAINTENANCE_INTERVAL_MS, rebroadcastAfterMs)).unref();
  journal.expireKeys(keyTtlMs);
  return {
    async stop() {
      clearInterval(timer);
      await round;
    },
  };
}

/**
 * The wallet's next transaction, which the node holds without counting it as pending (so it is never
 * mined), replaced at the same nonce. A replacement is told by the replacer's own log line; only one the
 * fee caps forbid is told here.
 */
export async function replaceNotExecutable(replacer: TransferReplacer, entry: JournalEntry, log: FastifyBaseLogger): Promise<void> {
  const outcome = await unlessSignerRefuses(replacer.replaceNotExecutable(entry.hash as string), log, "replacing a transaction the node holds without counting it");
  if (outcome !== "at-cap") return;
  log.warn({ nonce: entry.nonce, hash: entry.hash }, "the node holds the wallet's next transaction without counting it as pending, so it is not mined; the fee caps allow no replacement");
}
