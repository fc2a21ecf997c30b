/** The transfers signed but not yet mined, as operators watch them: the oldest, how many are stuck, a jam. */
import { steadyWallClockNow } from "../clock.js";
import type { TransferJournal } from "../journal/transfer-journal.js";

/** An unconfirmed transfer this old is stuck; the oldest one stuck, with its nonce not mined, jams the wallet. */
export const STUCK_AFTER_SECONDS = 120;

export interface UnconfirmedTransfers {
  oldest: { hash: string; nonce: number; state: string; ageSeconds: number } | undefined;
  /** How many are older than STUCK_AFTER_SECONDS. */
  stuck: number;
}

/** Reads the journal's signed and accepted transfers. */
export function readUnconfirmedTransfers(journal: TransferJournal, now = steadyWallClockNow()): UnconfirmedTransfers {
  let oldest: UnconfirmedTransfers["oldest"];
  let stuck = 0;
  for (const entry of journal.unsettled()) {
    if (entry.nonce === null || entry.hash === null) continue;
    const ageSeconds = Math.max(0, Math.floor((now - entry.createdAt) / 1000));
    if (ageSeconds > STUCK_AFTER_SECONDS) stuck++;
    if (!oldest || ageSeconds > oldest.ageSeconds) oldest = { hash: entry.hash, nonce: entry.nonce, state: entry.state, ageSeconds };
  }
  return { oldest, stuck };
}

/** The wallet is jammed when its oldest unconfirmed transfer is stuck and the chain has not mined its nonce. */
export function isJammed({ oldest }: UnconfirmedTransfers, minedNonceCount: number): boolean {
  return oldest !== undefined && oldest.ageSeconds > STUCK_AFTER_SECONDS && minedNonceCount <= oldest.nonce;
}

/** How long a transaction waits unmined before its lane counts as stuck: both must have passed. */
export interface StuckAfter {
  /** STUCK_AFTER_BLOCKS, counted from the head its latest attempt was signed at. */
  blocks: number;
  /**
   * REBROADCAST_AFTER_MS, from when its latest attempt was signed: on a fast chain (a block per
   * transaction, as a dev chain) blocks alone pass while a transaction is still being sent.
   */
  ms: number;
}

/**
 * What holds a pool's lane back from new transfers, read from its journal with each snapshot: a
 * transaction waiting past `stuckAfter` (stuck), and a jam (see isJammed).
 */
export function readLaneHolds(journal: TransferJournal, minedNonceCount: number, head: number, stuckAfter: StuckAfter, now = steadyWallClockNow()): { stuck: boolean; jammed: boolean } {
  const stuck = journal.unsettled().some((entry) => {
    const latest = entry.attempts.at(-1);
    return entry.nonce !== null && entry.nonce >= minedNonceCount && latest !== undefined && head - latest.signedAtBlock >= stuckAfter.blocks && now - latest.createdAt >= stuckAfter.ms;
  });
  return { stuck, jammed: isJammed(readUnconfirmedTransfers(journal, now), minedNonceCount) };
}
