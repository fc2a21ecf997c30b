/**
 * The shapes of what the journal records: a transfer and its attempts, requests and refusals, payout
 * orders, webhook events and deliveries, outflows, the signing pause, and the journal's own errors.
 */
import type { AuditRow } from "./audit/audit-chain.js";

/**
 * claimed: an Idempotency-Key is reserved, nothing signed yet.
 * refused: refused before anything was signed; the client was told `answer`.
 * signed: the raw transaction is stored; no node is known to have it (yet).
 * accepted: a node took it.
 * nonce-used: the chain's mined nonce count passed its nonce.
 * replaced: a transaction that is none of its attempts was mined at its nonce (proven, not guessed from
 *   one missing receipt).
 * rejected: the node refused its first broadcast; it is never sent again and the client was told `answer`.
 * cancelled: its cancel attempt (a 0-value transaction to the wallet itself) was mined at its nonce.
 * awaiting-approval: above APPROVAL_ABOVE, it waits for a second admin key; nothing signed. Approved, it is
 *   claimed (and sent); rejected or expired, refused.
 */
export type JournalState = "awaiting-approval" | "claimed" | "refused" | "signed" | "accepted" | "nonce-used" | "replaced" | "rejected" | "cancelled";

/**
 * transfer: the token transfer or payout batch (the first attempt, or a re-priced copy); cancel: a 0-value
 * self-transfer; top-up: ETH for gas sent to another lane of the pool (GAS_TOPUP_*), recorded as a
 * transfer of 0 units; approval: the wallet's approve() of the payout contract, recorded as a transfer of
 * 0 units of the token to that contract.
 */
export type AttemptKind = "transfer" | "cancel" | "top-up" | "approval";

/**
 * One signed transaction at a transfer's nonce. A transfer has one or more; at most one is ever mined, and
 * every attempt is journaled before it is broadcast, so the journal knows every hash that could be.
 */
export interface JournalAttempt {
  hash: string;
  rawTransaction: string;
  kind: AttemptKind;
  /** The head when it was signed: how long it has waited is counted in blocks from here. */
  signedAtBlock: number;
  createdAt: number;
}

/** What a client asked for: the checksummed recipient and the amount in base units. */
export interface TransferRequest {
  recipient: string;
  units: bigint;
  /** The API key that asked for it (its id, not the key), for the per-key cap. */
  apiKeyId?: string;
  /** The token it pays in: a contract's address, or "native"; without it, the journal view's token. */
  token?: string;
  /**
   * A payout batch: the items it pays in one transaction through the payout contract, which is then the
   * recipient, and `units` the total of the items it pays (those not paid before).
   */
  payout?: PayoutOrder;
}

/** A payout batch as journaled: the contract that pays it, and every item the client sent, in order. */
export interface PayoutOrder {
  contract: string;
  items: PayoutOrderItem[];
}

/** One item of a payout batch. */
export interface PayoutOrderItem {
  /** The client's id for the item, unique per API key across batches. */
  id: string;
  recipient: string;
  units: bigint;
  /** The batch (journal entry id) that held this item id already: the item is not paid by this one. */
  duplicateOf?: number;
}

/** Items of a new payout batch whose ids an earlier batch took meanwhile: nothing was claimed. */
export class PayoutItemsTakenError extends Error {
  override name = "PayoutItemsTakenError";

  constructor(readonly itemIds: readonly string[]) {
    super(`payout item ids taken by another batch meanwhile: ${itemIds.join(", ")}`);
  }
}

export interface SignedTransfer {
  nonce: number;
  hash: string;
  rawTransaction: string;
  signedAtBlock: number;
  /** "cancel" for a nonce filler: a 0-value transaction to the wallet itself, recorded as a transfer of 0 units. */
  kind?: AttemptKind;
}

/** A transaction found mined at a transfer's nonce, and the block it was found in. */
export interface StoredDisplacement {
  by: string;
  block: { number: number; hash: string };
  nonce: number;
}

/** The refusal a client was given, kept so that a repeat of its Idempotency-Key gets the same answer. */
export interface RecordedRefusal {
  code: string;
  message: string;
}

export interface JournalEntry extends TransferRequest {
  id: number;
  /** The wallet that signs it (its lane in a wallet pool). */
  lane: string;
  /** The network it is paid on, and the token it pays in (its contract's address). */
  chainId: number;
  token: string;
  idempotencyKey: string | null;
  state: JournalState;
  nonce: number | null;
  /** The first attempt's: what the client was answered, and what a repeat of its key is answered. */
  hash: string | null;
  rawTransaction: string | null;
  /** Every attempt, oldest first (the first is the one above); empty until signed. */
  attempts: JournalAttempt[];
  /** The attempt found mined, once known; null before, and for a transfer that only ever had one attempt. */
  minedHash: string | null;
  /** Set for refused and rejected entries. */
  refusal: RecordedRefusal | null;
  /**
   * Another transaction found mined at the entry's nonce (by hash, lowercase, and the block it was found in),
   * recorded when found, so that a restart or a new leader goes on from it while that block becomes final;
   * it speaks of `nonce` only (an entry signed again since is at another).
   */
  displacement: StoredDisplacement | null;
  /** Whether webhooks report on this transfer (they were configured when it was made), and the last event reported. */
  notify: boolean;
  reported: TransferEventType | null;
  /** The block the last reported outcome named: a reorganisation that moves the transfer elsewhere is reported. */
  reportedBlockHash: string | null;
  /** The head at which the service first saw it settled (it was mined at or below), while settled. */
  settledBlock: number | null;
  /** The finalized block that made it final; null until then. */
  finalBlock: number | null;
  /** Set for a transfer that needed a second admin key's approval (APPROVAL_ABOVE); null for any other. */
  approval: EntryApproval | null;
  createdAt: number;
}

/** A transfer's two-person approval: until when it waits, and who decided it, when (null while undecided). */
export interface EntryApproval {
  /** ms, wall clock. */
  expiresAt: number;
  /** The admin key's id, or "expiry" for one that expired undecided. */
  decidedBy: string | null;
  decidedAt: number | null;
}

/** Which entries a history read returns: every condition given must hold. */
export interface HistoryFilter {
  states?: readonly JournalState[];
  /** Made at or after (ms since the epoch). */
  since?: number;
  /** Made before (ms since the epoch). */
  until?: number;
  recipient?: string;
  apiKeyId?: string;
  /** Any of these journal keys (an Idempotency-Key is journaled under its API key's id: `<id>/<key>`). */
  idempotencyKeys?: readonly string[];
  /** The payout batch that holds this item id under any of these API keys (at most one per key). */
  payoutItem?: { itemId: string; apiKeyIds: readonly string[] };
  lane?: string;
  /** The network's chain id, in decimal. */
  chainId?: string;
  /** The token: its contract's checksummed address, or "native" (with chainId, that network's native coin). */
  token?: string;
}

/** A page of the history: its entries, newest first, and where the next page starts (ids below `nextBefore`). */
export interface HistoryPage {
  entries: JournalEntry[];
  /**
   * Undefined once nothing more matches. A page may hold fewer entries than asked for and still go on: a
   * read walks a bounded number of rows (see sqlite-history).
   */
  nextBefore: number | undefined;
}

/**
 * Where a shared database keeps what its leader's working copy does not hold (the transfers settled for
 * good before the leader took over, and the history as a whole), read on demand.
 */
export interface JournalElsewhere {
  history(filter: HistoryFilter, beforeId: number | undefined, limit: number): Promise<HistoryPage>;
  findByHash(hash: string): Promise<JournalEntry | undefined>;
  findWithSeveralAttempts(hash: string): Promise<JournalEntry | undefined>;
  /** See TransferJournal.payoutItemsHeld. */
  payoutItemsHeld(apiKeyId: string, itemIds: readonly string[]): Promise<Map<string, number>>;
  /** Which of `nonces` some transfer of `lane` on chain `chainId` holds. */
  noncesHeld(lane: string, chainId: string, nonces: readonly number[]): Promise<Set<number>>;
  /** The highest nonce a transfer of `lane` on chain `chainId` holds; undefined for none. */
  highestNonce(lane: string, chainId: string): Promise<number | undefined>;
  deliveriesOf(entryId: number, limit: number): Promise<WebhookDelivery[]>;
  /** Delivered deliveries, oldest first; without a state, every delivery, newest first. */
  deliveries(state: "delivered" | undefined, limit: number): Promise<WebhookDelivery[]>;
  /** See TransferJournal.auditEntries. */
  auditEntries(cursor: AuditCursor, limit: number): Promise<AuditRow[]>;
}

/** Where a page of the audit log starts: after an entry, oldest first; or before one, newest first. */
export type AuditCursor = { after: number } | { before: number };

/** A transfer as the archive keeps it: its rows as the journal stored them. */
export interface ArchivedTransfer {
  transfer: Record<string, unknown>;
  attempts: Record<string, unknown>[];
  webhookEvents: Record<string, unknown>[];
  webhookDeliveries: Record<string, unknown>[];
}

/** The events webhooks report about a transfer. */
export type TransferEventType = "transfer.confirmed" | "transfer.failed" | "transfer.replaced" | "transfer.cancelled" | "transfer.reorged" | "transfer.finalized";

/** The events webhooks report about each item of a payout batch (besides the batch's own, as a transfer). */
export type PayoutItemEventType = "payout.item.paid" | "payout.item.failed" | "payout.item.reorged" | "payout.item.finalized";

/** The events of a transfer's two-person approval (APPROVAL_ABOVE): it waits, or it was rejected (or expired) and is never sent. */
export type ApprovalEventType = "transfer.awaiting_approval" | "transfer.rejected";

/** Every event webhooks report; an unexpected outflow belongs to no transfer (its entry id is null). */
export type WebhookEventType = TransferEventType | PayoutItemEventType | ApprovalEventType | "wallet.unexpected_outflow" | "audit.head";

/** A webhook event as journaled: its body is fixed once, so that every retry sends the same bytes. */
export interface WebhookEventRecord {
  /** The Standard Webhooks `webhook-id`, the same on every retry. */
  id: string;
  type: WebhookEventType;
  /** The transfer it is about; null for an event about no transfer (wallet.unexpected_outflow). */
  entryId: number | null;
  body: string;
}

export type DeliveryState = "pending" | "delivered" | "failed";

/** One event's delivery to one endpoint. */
export interface WebhookDelivery {
  id: number;
  eventId: string;
  type: WebhookEventType;
  /** Null for an event about no transfer. */
  entryId: number | null;
  endpoint: string;
  state: DeliveryState;
  attempts: number;
  /** The receiver's last HTTP status, or what went wrong ("timeout", "connection refused"). */
  lastStatus: string | null;
  /** When it is tried next (ms, wall clock), while pending. */
  nextAttemptAt: number;
  createdAt: number;
}

/**
 * An unexpected outflow as the journal keeps it: which one (chain, transaction, log; null for the transaction
 * itself), where and when seen. A token outflow is one per chain, transaction and log key (its log index
 * moves when a reorganisation mines the transaction in another block); rows of earlier versions have no log
 * key, and are one per log index.
 */
export interface StoredOutflow {
  chainId: string;
  hash: string;
  logIndex: number | null;
  /** A token Transfer: what it says and how many alike its transaction made before it (UnexpectedOutflow.logKey); null for the transaction itself. */
  logKey: string | null;
  wallet: string;
  blockNumber: number;
  /** ms, wall clock. */
  detectedAt: number;
}

/** Where a network's outflow watch got to, kept so that a restart or a new leader goes on from it. */
export interface OutflowWatchProgress {
  /** The last block whose logs were read and judged. */
  logsReadTo: number;
  /** Per lane (its address): every nonce below this was checked. */
  noncesCheckedBelow: Record<string, number>;
}

/** A pause of signing as the journal keeps it: since when (ms, wall clock), why, and the transaction that caused it. */
export interface StoredSigningPause {
  since: number;
  reason: string;
  hash: string | null;
  /** The latest outflow reported during it, and how many. */
  latestHash: string | null;
  outflows: number;
}

/** The outcome of claiming an Idempotency-Key: a new entry, or the entry that already holds the key. */
export type KeyClaim = { outcome: "claimed"; entryId: number } | { outcome: "existing"; entry: JournalEntry };

/** A journal of another token or chain, or one whose transfers in flight belong to a wallet not configured. */
export class JournalOwnerMismatchError extends Error {
  override name = "JournalOwnerMismatchError";
}

/** The journal cannot take writes: a commit failed (disk full, I/O error). Nothing may be broadcast. */
export class JournalUnavailableError extends Error {
  override name = "JournalUnavailableError";

  constructor(override readonly cause: unknown) {
    super(`the transfer journal failed to commit (${cause instanceof Error ? cause.message : String(cause)}); it takes no writes until the service is restarted`);
  }
}

/**
 * The journal failed while a transfer's record was being made durable, and whether it was is not known:
 * a shared database that did not acknowledge the commit, and cannot be asked now. If it was recorded, the
 * service sends it (the next leader does); if not, nothing was or will be sent.
 */
export class JournalOutcomeUnknownError extends Error {
  override name = "JournalOutcomeUnknownError";

  constructor(
    readonly hash: string,
    override readonly cause: unknown,
  ) {
    super(`the transfer journal's database did not confirm the record of transaction ${hash}, and cannot be asked now`);
  }
}

/**
 * Which token and chain a journal belongs to (another is refused), and the wallet whose transfers the
 * journal object opened writes and follows: its lane. One journal holds every lane of a wallet pool.
 */
export interface JournalOwner {
  chainId: bigint;
  walletAddress: string;
  tokenAddress: string;
  /** The deployment pays on other networks too: the journal is marked so that versions before networks refuse it (see SEVERAL_NETWORKS_MARK). */
  severalNetworks?: boolean;
}

/** A write that should have changed one entry found none: the journal and the service disagree. */
export class JournalWriteError extends Error {
  override name = "JournalWriteError";
}
