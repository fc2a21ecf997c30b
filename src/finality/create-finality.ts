/** Builds the finality follower: one round per block read at a time, its outcomes logged. */
import type { FastifyBaseLogger } from "fastify";
import type { TransferJournal } from "../journal/transfer-journal.js";
import type { MinedIn } from "../send-path/transfer-reconciler.js";
import type { FeeBlock } from "../send-path/wallet-snapshot.js";
import { DEFAULT_FINALITY_BLOCKS, type FinalityRule } from "../node/finalized-block.js";
import { type FinalityNode, FinalityTracker, type FinalityTrackerOptions } from "./finality-tracker.js";

export interface FinalityParts {
  node: FinalityNode;
  chainId: bigint;
  journal: TransferJournal;
  log: FastifyBaseLogger;
  /** A reorganisation was seen: whatever remembers blocks forgets them, and the wallet is read afresh. */
  onReorg: () => Promise<void>;
  /** The chain moved on unchecked while nothing settled was followed: whatever remembers blocks forgets them. */
  onUnfollowedJump: () => void;
  /** The lane's Transfer logs: transfers looked for again after reads that skipped blocks are found there first. */
  transferLogs: FinalityTrackerOptions["transferLogs"];
  /** Transfers became final or pending again: report it without waiting for another block. */
  onChange: () => void;
  /** The wallet's searches for what used a nonce, shared with the lane's reconciler. */
  nonceSearches: FinalityTrackerOptions["nonceSearches"];
}

/** Follows finality from the block reads; `follow` skips a block read while a round runs (the next read covers it). */
export function createFinality(
  settings: { finalityBlocks?: number },
  parts: FinalityParts,
): { follow(block: FeeBlock): void; expectMinedIn(entryId: number, block: MinedIn): void; stop(): Promise<void> } {
  const { journal, log } = parts;
  const tracker = new FinalityTracker({
    node: parts.node,
    journal,
    finalityBlocks: settings.finalityBlocks ?? DEFAULT_FINALITY_BLOCKS,
    chainId: parts.chainId,
    nonceSearches: parts.nonceSearches,
    onNoFinalizedTag: (rule) => warnNoFinalizedTag(log, rule),
    onReorg: async (at) => {
      log.warn({ blockNumber: at.number, blockHash: at.hash }, "the chain reorganised under transfers not final yet; checking each against the new chain");
      await parts.onReorg();
    },
    onUnfollowedJump: parts.onUnfollowedJump,
    transferLogs: parts.transferLogs,
    onOutcome: (outcome) => {
      log.info(outcome, outcome.reorganised ? "transfers not final checked against the new chain" : "transfers became final");
      parts.onChange();
    },
  });
  let round: Promise<unknown> | undefined;
  let stopped = false;
  return {
    follow(block) {
      if (round || journal.failure || stopped) return;
      round = tracker
        .follow(block)
        .then(() => journal.flushed())
        .catch((error) => log.warn({ err: error }, "finality round failed; will retry at the next block"))
        .finally(() => (round = undefined));
    },
    expectMinedIn: (entryId, block) => tracker.expectMinedIn(entryId, block),
    async stop() {
      stopped = true;
      await round;
    },
  };
}

/** What an operator is told when the node says it knows no `finalized` tag: depth from now on, or nothing final. */
export function warnNoFinalizedTag(log: FastifyBaseLogger, rule: FinalityRule): void {
  if (rule.kind === "depth") {
    log.warn({ chain: rule.chain, finalityBlocks: rule.blocks }, "the node says it knows no finalized block tag: a transfer is final FINALITY_BLOCKS below the head from now on (set it to the chain's own finality)");
  } else {
    log.error({ chain: rule.chain }, "the node says it knows no finalized block tag, which this chain finalizes by: nothing becomes final (no displaced transfer is signed again, no transfer.finalized sent) until an endpoint that answers it is used");
  }
}
