/**
 * The durable record of every transfer, written before anything is broadcast: one interface per concern
 * (journal/concerns/), joined here with the unit of work they all write in (one commit makes a change of
 * any of them durable). An interface, so that a networked store can replace the SQLite one; every method is
 * atomic on its own. The records' shapes are in journal-records.ts.
 */
import type { ApprovalRecords } from "./approvals/approval-records.js";
import type { AuditRecords } from "./audit/audit-records.js";
import type { HistoryReads } from "./history/history-reads.js";
import type { OutflowRecords } from "./outflows/outflow-records.js";
import type { PayoutItemRecords } from "./payout-items/payout-item-records.js";
import type { RetentionRecords } from "./retention/retention-records.js";
import type { TransferRecords } from "./transfers/transfer-records.js";
import type { WebhookOutbox } from "./webhook-outbox/webhook-outbox.js";
import { type JournalEntry, JournalOwnerMismatchError, type JournalUnavailableError, type TransferRequest } from "./journal-records.js";

export * from "./journal-records.js";

/**
 * Writes take effect at once for every later read, and reach the disk together with the other writes of
 * the same moment (group commit): await `flushed()` before acting on one, as before a broadcast. A write
 * that finds no row to change throws; once a commit has failed, every write and every `flushed()` throws
 * JournalUnavailableError, so nothing is ever broadcast without its record.
 */
export interface TransferJournal extends TransferRecords, ApprovalRecords, PayoutItemRecords, OutflowRecords, AuditRecords, WebhookOutbox, HistoryReads, RetentionRecords {
  /** The wallet whose transfers this journal object writes and follows: its lane. */
  readonly lane: string;
  /**
   * The same journal as another lane sees it: the same keys, hashes, events and commits; the transfers it
   * writes and follows are that lane's. It lives as long as the journal it came from: closing that one
   * closes the store, closing a lane's view alone does nothing.
   */
  forLane(walletAddress: string): TransferJournal;
  /**
   * The same journal as this lane sees it on another network: a wallet has a nonce sequence per chain, so
   * every transfer is made and followed on one network, and in one token of it (the rows it writes record
   * both). Keys, hashes and events stay every network's: an Idempotency-Key is one payment wherever it went.
   */
  forNetwork(chainId: bigint, tokenAddress: string): TransferJournal;
  /** Resolves once every write made so far is durable; rejects if committing them failed. */
  flushed(): Promise<void>;
  /** Why the journal takes no writes, or undefined while it is healthy. */
  readonly failure: JournalUnavailableError | undefined;
  close(): void;
}

/** What a journaled transfer asks for, as a client's request does (an approved transfer is sent from it). */
export function requestOf(entry: JournalEntry): TransferRequest {
  return { recipient: entry.recipient, units: entry.units, apiKeyId: entry.apiKeyId, token: entry.token, ...(entry.payout ? { payout: entry.payout } : {}) };
}

/**
 * Refuses to start while transfers in flight are on a network not among `chainIds`: nobody would follow
 * them (re-send, re-price, report) until they settle. Settled transfers of a network taken out stay history.
 */
export function refuseUnfollowedNetworks(journal: TransferJournal, chainIds: readonly bigint[]): void {
  const unfollowed = journal.networksWithUnsettled().filter((chainId) => !chainIds.includes(chainId));
  if (unfollowed.length > 0) {
    throw new JournalOwnerMismatchError(
      `the transfer journal has transfers in flight on chain ${unfollowed.join(", ")}, which NETWORKS_FILE does not name; name that network again (beside the others) until they settle`,
    );
  }
}

/**
 * Refuses to start while transfers in flight belong to a wallet not among `lanes`: nobody would follow
 * them (re-send, re-price, report) until they settle. Settled transfers of a wallet taken out stay history.
 */
export function refuseUnfollowedLanes(journal: TransferJournal, lanes: readonly string[]): void {
  const unfollowed = journal.lanesWithUnsettled().filter((lane) => !lanes.includes(lane));
  if (unfollowed.length > 0) {
    throw new JournalOwnerMismatchError(
      `the transfer journal has transfers in flight from ${unfollowed.join(", ")}, whose key is not configured; configure it again (beside the others) until they settle`,
    );
  }
}
