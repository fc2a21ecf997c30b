/** Builds the parts that sign and send: the submitter of new transfers and the replacer of stuck ones. */
import type { FastifyBaseLogger } from "fastify";
import { atMostEvery } from "./at-most-every.js";
import type { AttemptKind, JournalEntry, TransferJournal } from "../journal/transfer-journal.js";
import type { ChainConnection } from "../node/connect-chain.js";
import type { FeePolicy } from "./fee-policy.js";
import type { NonceAllocator } from "./nonce-allocator.js";
import type { TransferReconciler } from "./transfer-reconciler.js";
import type { NextNonceReason } from "./replacement-bounds.js";
import { type ReplacementReason, TransferReplacer } from "./transfer-replacer.js";
import { type FaultPoint, TransferSubmitter } from "./transfer-submitter.js";
import type { WalletLedger } from "./wallet-ledger.js";
import { feesAsText } from "./wallet-transaction.js";

/** How often a node's missing pending count is logged at most, per wallet. */
const PENDING_COUNT_WARNING_EVERY_MS = 600_000;

export interface SendPathSettings {
  stuckAfterBlocks: number;
  repriceUnminedAfterMs: number;
  rebroadcastAfterMs: number;
  gasLimitMultiplier: string;
  testFaultPoint?: FaultPoint;
}

export interface SendPathParts {
  chain: ChainConnection;
  journal: TransferJournal;
  ledger: WalletLedger;
  nonces: NonceAllocator;
  reconciler: TransferReconciler;
  policy: FeePolicy;
  log: FastifyBaseLogger;
  /** Told in the same turn as a replacement is journaled (webhooks report it in the same commit). */
  onAttemptJournaled?: (entry: JournalEntry, hash: string, kind: AttemptKind) => void;
  /** Something was sent in the background: the chain is to be followed at the busy pace. */
  onSentInBackground: () => void;
  /** See TransferSubmitterOptions.awaitRoomAtNode. */
  awaitRoomAtNode?: (nonce: number) => Promise<boolean>;
}

export function createSendPath(settings: SendPathSettings, parts: SendPathParts): { submitter: TransferSubmitter; replacer: TransferReplacer } {
  const { chain, journal, ledger, nonces, reconciler, policy, log } = parts;
  const reachFaultPoint = faultPointReacher(settings.testFaultPoint);
  const submitter = new TransferSubmitter({
    chain,
    journal,
    ledger,
    nonces,
    onHeld: (hash, nonce, { meaning, nodeMessage }) =>
      log.warn({ hash, nonce, meaning, nodeMessage }, "broadcast not known to be taken; the signed transaction stays journaled, and the chain decides (it is sent again until a node holds it or its nonce is found used)"),
    reachFaultPoint,
    awaitRoomAtNode: parts.awaitRoomAtNode,
  });
  reconciler.signAgain = async (entry) => {
    const signed = await submitter.signAgain(entry);
    parts.onSentInBackground();
    if (signed) log.warn({ hash: entry.hash, nonce: entry.nonce }, "another transaction used this transfer's nonce; signed it again at a new nonce");
    return signed;
  };
  // A fleet with one backend that refuses the pending tag fails every few rounds for as long as it lasts.
  const pendingCountWarning = atMostEvery(PENDING_COUNT_WARNING_EVERY_MS);
  reconciler.onPendingCountUnread = (error, at) =>
    pendingCountWarning(() =>
      log.warn(
        { err: error, ...at },
        "a node did not give the wallet's pending transaction count after a re-send of its next transaction: while none does, a node that holds that transaction without counting it is not noticed at once; it is re-priced once it waited REPRICE_UNMINED_AFTER_MS (told at most once every 10 minutes)",
      ),
    );
  const replacer = new TransferReplacer({
    chain,
    journal,
    ledger,
    policy,
    stuckAfterBlocks: settings.stuckAfterBlocks,
    repriceUnminedAfterMs: settings.repriceUnminedAfterMs,
    onNextNonceAtBound: ({ reason, ...stuck }) =>
      log.warn(
        stuck,
        `the wallet's next transaction is still not mined: ${atBoundBecause[reason]}, and it was re-priced 3 times for that (the most the service does on its own, whatever the market): it waits, and every later transfer behind it; check the endpoints, then re-price or cancel it (POST /transactions/:hash/reprice, /cancel)`,
      ),
    notExecutableRetryMs: settings.rebroadcastAfterMs,
    gasLimitMultiplier: settings.gasLimitMultiplier,
    isInFlight: (entryId) => submitter.isInFlight(entryId),
    lastRefusalOf: (entryId) => reconciler.lastRefusalOf(entryId),
    onAtCap: ({ offered, needed, ...stuck }) =>
      log.warn(
        { ...stuck, offered: feesAsText(offered), needed: feesAsText(needed) },
        "a stuck transfer is at the fee cap (MAX_FEE_PER_GAS, or the chain's default ceiling when it is unset; MAX_PRIORITY_FEE_PER_GAS): it waits unmined, and every later transfer behind it",
      ),
    onReplaced: ({ fees: offered, ...replacement }) =>
      log.info(
        { ...replacement, fees: feesAsText(offered) },
        replacement.kind === "cancel" ? "sent a cancel at the transfer's nonce" : replacedBecause[replacement.reason],
      ),
    reachFaultPoint: reachFaultPoint && (() => reachFaultPoint("after-replacement-sign")),
    onAttemptJournaled: parts.onAttemptJournaled,
  });
  return { submitter, replacer };
}

const atBoundBecause: Record<NextNonceReason, string> = {
  "refused-at-next-nonce": "nodes refuse it",
  "unmined-at-next-nonce": "the chain makes blocks without it at a fair price (a node that holds it and never passes it on?)",
  "not-executable": "a node holds it without counting it as pending",
};

const replacedBecause: Record<ReplacementReason, string> = {
  underpriced: "re-priced a stuck transfer: a replacement at the same nonce",
  "refused-at-next-nonce": "re-priced the wallet's next transaction, which no node would take: a replacement at the same nonce",
  "unmined-at-next-nonce":
    "re-priced the wallet's next transaction: it waits at a fair price, yet the chain made blocks without it (a node that holds it and never passed it on?); a replacement at the same nonce",
  "not-executable": "replaced the wallet's next transaction, which the node holds without counting it as pending",
  requested: "re-priced a transfer on request: a replacement at the same nonce",
};

// A test-only switch: at the named point the process announces itself and stops making progress, so a
// test can kill -9 it exactly there.
function faultPointReacher(configured: FaultPoint | undefined): ((point: FaultPoint) => Promise<void>) | undefined {
  if (!configured) return undefined;
  return (point) => {
    if (point !== configured) return Promise.resolve();
    process.stdout.write(`TEST_FAULT_POINT reached: ${point}\n`);
    return new Promise<void>(() => {});
  };
}
