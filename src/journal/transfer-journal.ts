/**
 * The durable record of every transfer, written before anything is broadcast. An interface, so that a
 * networked store can replace the SQLite one; every method is atomic on its own.
 */

import type { AddressBook } from "./address-book.js";
import type { AuditEntry, AuditRow } from "./audit-chain.js";

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
 * Writes take effect at once for every later read, and reach the disk together with the other writes of
 * the same moment (group commit): await `flushed()` before acting on one, as before a broadcast. A write
 * that finds no row to change throws; once a commit has failed, every write and every `flushed()` throws
 * JournalUnavailableError, so nothing is ever broadcast without its record.
 */
export interface TransferJournal {
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
  /** Every lane of this network that has transfers claimed, signed or accepted: someone must follow them. */
  lanesWithUnsettled(): string[];
  /** Every network (chain id) that has transfers claimed, signed or accepted. */
  networksWithUnsettled(): bigint[];
  /** Resolves once every write made so far is durable; rejects if committing them failed. */
  flushed(): Promise<void>;
  /** Why the journal takes no writes, or undefined while it is healthy. */
  readonly failure: JournalUnavailableError | undefined;
  /**
   * Whether the signed attempt `hash` is durable. After a failed commit: false when the commit itself
   * failed (rolled back); when only shipping it to a shared database failed, what that database holds
   * (its acknowledgement may have been lost after it committed), or undefined when that cannot be told.
   */
  wasRecorded(hash: string): Promise<boolean | undefined>;
  /** The entry that holds `key`, in any lane, without claiming it. */
  findByKey(key: string): JournalEntry | undefined;
  /**
   * Atomically reserves `key` for a new entry, or returns the entry that holds it already. For a payout
   * batch, it takes the ids of the items it pays (not the duplicates) for the API key in the same write, and
   * throws PayoutItemsTakenError, claiming nothing, when another batch holds one of them.
   */
  claimKey(key: string, request: TransferRequest): KeyClaim;
  /**
   * Like claimKey, for a transfer that waits for an admin's approval until `expiresAt` (ms, wall clock)
   * before anything is signed (state awaiting-approval); without a key, always a new entry.
   */
  requestApproval(key: string | undefined, request: TransferRequest, expiresAt: number): KeyClaim;
  /** Every network's transfers awaiting approval, the soonest to expire first, at most `limit`. */
  awaitingApproval(limit: number): JournalEntry[];
  /** How many transfers await approval (every network); of one API key only, when given. */
  awaitingApprovalCount(apiKeyId?: string): number;
  /**
   * The admin key `by` approved the entry at `at`: awaiting-approval becomes claimed, for this view's lane
   * to sign. Only from awaiting-approval, before it expires, on this view's network; whether it changed.
   */
  takeApproved(entryId: number, by: string, at: number): boolean;
  /** A refused or rejected entry's key answers `refusal` from now on (an approved transfer whose bytes died); whether it was one. */
  restateRefusal(entryId: number, refusal: RecordedRefusal): boolean;
  /** An approved entry nothing was signed for (a "try again", a restart) awaits its approval again; whether it did. */
  returnToApproval(entryId: number): boolean;
  /** The entry was rejected (by an admin key, or "expiry"): refused with `refusal`, nothing ever signed. Only from awaiting-approval; whether it changed. */
  refuseApproval(entryId: number, by: string, at: number, refusal: RecordedRefusal): boolean;
  /**
   * Which of these payout item ids of the API key a batch holds, with that batch's entry id: a batch holds
   * its items' ids from its claim on, for good (retention too keeps them), unless it was refused, rejected
   * or released (then nothing of it was sent). A leader's working copy asks the shared database for the
   * ids it does not hold.
   */
  payoutItemsHeld(apiKeyId: string, itemIds: readonly string[]): Promise<Map<string, number>>;
  /**
   * Journals an unexpected outflow; false when it was journaled before (a restart, or a new leader, found it
   * again): it is reported once. A working copy holds every one (see readHot).
   */
  recordOutflow(outflow: StoredOutflow): boolean;
  /** The head of this view's network when the outflow watch first checked it (what came before is not judged); undefined before. */
  outflowWatchStart(): number | undefined;
  /** Journals that head, once per network (a second call keeps the first). */
  recordOutflowWatchStart(block: number): void;
  /** ADDRESS_BOOK: the recipients paid without approval (one book for every network and lane). */
  readonly addressBook: AddressBook;
  /** Where this network's outflow watch got to (see OutflowWatchProgress); undefined before its first check. */
  outflowWatchProgress(): OutflowWatchProgress | undefined;
  recordOutflowWatchProgress(progress: OutflowWatchProgress): void;
  /** The pause of signing no admin has ended (a new leader's working copy holds it too); undefined while the service signs. */
  signingPause(): StoredSigningPause | undefined;
  /** Journals a pause of signing (PAUSE_ON_UNEXPECTED_OUTFLOW), or another outflow during the current one, committed with this turn's writes. */
  recordSigningPaused(pause: StoredSigningPause): void;
  /** Journals that the admin key `by` ended the pause at `at` (ms, wall clock). */
  recordSigningResumed(by: string, at: number): void;
  /**
   * Appends an entry to the audit log (an operator's action, the settings a process started with), in this
   * turn's commit. Transfers' state changes and attempts are entered by the journal itself, in their commit.
   */
  recordAudit(entry: AuditEntry): void;
  /** A page of the audit log from `cursor`, at most `limit` (a working copy reads the shared database's). */
  auditEntries(cursor: AuditCursor, limit: number): Promise<AuditRow[]>;
  /** The audit log's last sealed entry (its head; a working copy holds it), undefined while the log is empty. */
  auditHead(): AuditRow | undefined;
  /** Stores the signed transaction, creating the entry when there was no claim. Returns the entry id. */
  recordSigned(entryId: number | undefined, request: TransferRequest, signed: SignedTransfer): number;
  /** A node took the entry's transaction: signed becomes accepted. Whether it changed (only a signed entry does). */
  recordAccepted(entryId: number): boolean;
  /** A claimed entry was refused before anything was signed. */
  recordRefused(entryId: number, refusal: RecordedRefusal): void;
  /** A signed entry's first broadcast was refused by the node: it is dead. */
  recordRejected(entryId: number, refusal: RecordedRefusal): void;
  /**
   * No attempt of the entry can ever be mined (another transaction used its nonce, proven) and it is not
   * signed again. Only from signed, accepted or nonce-used; whether it changed.
   */
  recordReplaced(entryId: number): boolean;
  /** Another transaction was found mined at the entry's nonce (null: the one found left the chain). */
  recordDisplacement(entryId: number, displacement: StoredDisplacement | null): void;
  /**
   * Another transaction used the entry's nonce (proven): it is signed again at `signed.nonce`, as a new
   * attempt of the same transfer (to be flushed before it is broadcast). Its earlier attempts stay its own.
   */
  recordSignedAgain(entryId: number, signed: SignedTransfer): void;
  /** Adds a re-priced or cancel attempt at the entry's nonce (to be flushed before it is broadcast). */
  recordAttempt(entryId: number, attempt: Omit<JournalAttempt, "createdAt">): void;
  /** One of the entry's attempts was mined: it carries the transfer (a cancel makes the entry cancelled). */
  recordMined(entryId: number, hash: string): void;
  /**
   * Frees the key of a claim that never got signed (the claim is deleted), so that a retry runs afresh.
   * A signed entry keeps its key whatever happens: its transaction may be on chain, and a repeat must
   * answer it rather than send another. Returns whether the key was freed.
   */
  releaseKey(entryId: number): boolean;
  /**
   * Marks accepted entries below the chain's mined nonce count as nonce-used. Signed ones stay: no node was
   * known to hold them, so whose transaction used the nonce is for the reconciler to find out.
   */
  markNonceUsedBelow(minedNonceCount: number): number;
  /**
   * A reorganisation took mined transactions off the chain: entries whose nonce is at or above the chain's
   * mined nonce count at block `atBlock` are accepted once more (pending, followed like any other). Only
   * entries not final, and not seen settled at a head above `atBlock`: a count read at an older block (a
   * backend behind the others) says nothing of them. Returns how many.
   */
  markUnminedFrom(minedNonceCount: number, atBlock: number): number;
  /**
   * Settled transfers (nonce used, cancelled, replaced) not final yet and without a block are noted as
   * settled at `block` (an upper bound of where they were mined); with `resettle`, every one not final is
   * (after a reorganisation, finality is counted again from the new chain). Returns how many.
   */
  markSettledAt(block: number, resettle?: boolean): number;
  /** Whether any settled transfer is not final yet: then every block matters. */
  hasUnfinal(): boolean;
  /** The lowest block at which a verified transfer not final yet was seen settled: what finality waits for. */
  lowestUnfinalSettledBlock(): number | undefined;
  /** Settled transfers not final yet, by nonce. */
  unfinal(): JournalEntry[];
  /** A settled transfer not final yet that the chain no longer carries: pending again. Whether it was one. */
  markUnmined(entryId: number): boolean;
  /**
   * Settled transfers noted at or below the finalized block become final, once verified (which transaction
   * used a nonce is known). Returns how many.
   */
  finalizeThrough(finalizedBlock: number): number;
  /** Transfers made while webhooks were on, final, whose outcome was reported but not their finality. */
  finalizedUnreported(): JournalEntry[];
  /**
   * Entries whose nonce the chain has used while which transaction used it is not verified yet (a node took
   * one of its attempts, which proves nothing about what was mined). Not final ones only.
   */
  usedUnverified(): JournalEntry[];
  /** This lane's entries that may still need the node's attention: claimed, signed or accepted, by nonce. */
  unsettled(): JournalEntry[];
  /** The entry as the journal holds it now. */
  findById(entryId: number): JournalEntry | undefined;
  /** The entry one of whose attempts has this hash. */
  findByHash(hash: string): JournalEntry | undefined;
  /**
   * The entry one of whose attempts has this hash, wherever it is kept: a leader's working copy holds what
   * is not settled for good, and asks the shared database for any other hash.
   */
  lookUpByHash(hash: string): Promise<JournalEntry | undefined>;
  /**
   * The same, only for transfers with several attempts (re-priced or cancelled). For every hash the journal
   * holds it answers from memory, so that the lookup of any hash can ask it at no cost; a leader's working
   * copy asks the shared database about a hash it does not hold.
   */
  findWithSeveralAttempts(hash: string): JournalEntry | undefined | Promise<JournalEntry | undefined>;
  /**
   * Journals a webhook event, a pending delivery of it to each endpoint, and (when given) the transfer's
   * last reported event and the block it named, in the same commit as whatever else is written in this
   * turn (the state change it reports): an event is never lost, and never made twice.
   */
  recordEvent(event: WebhookEventRecord, endpoints: readonly string[], reported?: TransferEventType, blockHash?: string | null): void;
  /**
   * Which of `nonces` of this view's lane on its network no transfer holds, here or (for a working copy) in
   * the shared database (a rejected transfer holds none: its nonce was given back): every nonce the service
   * uses is journaled before it is broadcast, so a counted nonce no transfer holds was most likely used by a
   * transaction this service never signed (the caller checks that transaction's hash too).
   */
  unjournaledNonces(nonces: readonly number[]): Promise<number[]>;
  /** The highest nonce a transfer of this view's lane on its network holds, here or in the shared database; undefined for none. */
  highestNonce(): Promise<number | undefined>;
  /** Transfers made while webhooks were on whose nonce is used and whose outcome is not reported yet. */
  unreportedSettled(): JournalEntry[];
  /** Transfers reported confirmed, failed or cancelled that are pending again (a reorganisation). */
  reportedButUnmined(): JournalEntry[];
  /**
   * Pending deliveries due at `now`, oldest event first, with the body to send; a delivery waits while an
   * earlier event of the same transfer to the same endpoint is pending (in order per transfer).
   */
  dueDeliveries(now: number, limit: number, excludedIds: ReadonlySet<number>): (WebhookDelivery & { body: string })[];
  /** The outcome of one delivery attempt. */
  recordDeliveryAttempt(id: number, outcome: { state: DeliveryState; lastStatus: string; nextAttemptAt: number }): void;
  /**
   * Deliveries in `state`, oldest first; without a state, every delivery, newest first (from the shared
   * database when a working copy may not hold them all: delivered ones of transfers settled for good).
   */
  deliveries(state: DeliveryState | undefined, limit: number): Promise<WebhookDelivery[]>;
  /** The deliveries of one transfer's events, newest first (from the shared database for a transfer a working copy does not hold). */
  deliveriesOf(entryId: number, limit: number): Promise<WebhookDelivery[]>;
  /** Makes a failed or pending delivery due now. Returns whether there was one. */
  retryDelivery(id: number): boolean;
  /** How many deliveries are pending, and when the oldest was made (ms), for the metrics. */
  deliveryBacklog(): { pending: number; oldestCreatedAt: number | null };
  /**
   * Every lane's entries matching `filter`, newest first (highest id first), below `beforeId` when given,
   * at most `limit`, each with its attempts: the transfer history, read in pages of ids, each in bounded time.
   * A leader's working copy reads it from the shared database, once its own commits are shipped there.
   */
  history(filter: HistoryFilter, beforeId: number | undefined, limit: number): Promise<HistoryPage>;
  /** What each API key had signed since `since` (ms) on this network in this token, for the per-key caps after a restart. */
  spentSince(since: number): { apiKeyId: string; units: bigint; at: number }[];
  /**
   * Clients' transfers made since `since` (ms), oldest first, at most `limit`, each with its time and state:
   * read in slices (`afterId`: the last id of the slice before) for the activity charts. A leader's working
   * copy holds every transfer of the last 24 h.
   */
  madeSince(since: number, afterId: number | undefined, limit: number): { id: number; createdAt: number; state: JournalState }[];
  /**
   * Frees the key of an entry refused before it was signed, or whose first broadcast was refused (rejected:
   * never sent again), so that the same request can be made anew, as by a wallet pool on another lane.
   * Returns whether it was one.
   */
  releaseRefusedKey(entryId: number): boolean;
  /**
   * Transfers retention may move out of the journal (JOURNAL_RETENTION_DAYS): made before `before` (ms),
   * their Idempotency-Key expired, their outcome final or refused, every event reported and delivered or
   * given up; the oldest first, at most `limit`, with all their rows as stored.
   */
  archivable(before: number, limit: number): ArchivedTransfer[];
  /**
   * Where retention archives when the journal is the working copy of a shared database (its
   * transfers_archive table); undefined for a journal of its own, whose archive is a file.
   */
  readonly databaseArchive: ((records: readonly ArchivedTransfer[]) => Promise<void>) | undefined;
  /**
   * Retention of what the journal does not hold itself: a leader's working copy has the shared database
   * archive, there, the transfers made before `before` that were settled for good before it took over.
   * Returns how many (0 for a journal that holds its whole history).
   */
  archiveSettledElsewhere(before: number): Promise<number>;
  /** Deletes archived transfers and everything of theirs (attempts, webhook events and deliveries). */
  forgetArchived(entryIds: readonly number[]): void;
  /**
   * Audit entries retention may move out of a journal of its own: the oldest, in order, each entered before
   * `before` (ms) and sealed, never the last sealed one (the next commit seals its entries from its hash,
   * whatever this turn has entered meanwhile); at most `limit`. None in a working copy: its entries are the
   * shared database's (archiveAuditElsewhere).
   */
  archivableAudit(before: number, limit: number): AuditRow[];
  /** Deletes the audit entries up to `throughSeq`, archived; enter the archiving entry in the same turn. */
  forgetArchivedAudit(throughSeq: number): void;
  /**
   * Audit retention in the shared database of a working copy: moves its entries entered before `before`
   * (never the last) into its audit_archive table. Says how many and the last one moved; undefined for none
   * (and always for a journal of its own).
   */
  archiveAuditElsewhere(before: number): Promise<{ count: number; last: AuditRow } | undefined>;
  /**
   * A leader's working copy forgets, without telling the shared database (which keeps them), the transfers it
   * need not hold among the next `limit` made before `before` (a walk, oldest first, that goes on from where
   * the last call stopped, and starts again from the oldest once it reached the end): settled for good, as
   * a new leader would not read them, and unchanged since `before`. They are read there on demand. Says how
   * many it looked at and forgot (none for a journal that holds its whole history); undefined, having done
   * nothing, while a change of the same turn waits to be shipped.
   */
  forgetSettledForGood(before: number, limit: number): { examined: number; forgotten: number } | undefined;
  /**
   * Forgets keys older than `maxAgeMs` (the entries stay), up to a bound per call (a backlog goes in later
   * calls, so a key may live a little longer than `maxAgeMs`). Returns how many were forgotten.
   */
  expireKeys(maxAgeMs: number, now?: number): number;
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
