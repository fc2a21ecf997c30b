/**
 * Two-person approval (APPROVAL_ABOVE). A transfer or payout above the threshold is journaled as awaiting
 * approval and answered 202 with its id; nothing is signed. Another admin key than the one that asked
 * approves it (then it is signed and sent with the whole contract of a transfer) or rejects it; undecided
 * for APPROVAL_TTL_HOURS, it expires. Rejected or expired, it is refused for good: its Idempotency-Key
 * answers 417 from then on, and it is never signed. Every decision is one conditional write on the
 * awaiting entry, so two admins (or an admin and the expiry) never both decide it.
 */
import type { KeyHolders } from "../auth/key-holders.js";
import { steadyWallClockNow } from "../clock.js";
import { ServiceError } from "../errors.js";
import {
  type JournalEntry,
  JournalOutcomeUnknownError,
  JournalUnavailableError,
  PayoutItemsTakenError,
  type RecordedRefusal,
  type TransferJournal,
  type TransferRequest,
} from "../journal/transfer-journal.js";
import { samePayment } from "../send-path/payout-call.js";
import type { AuthorizeTransfer, TransferSender } from "../send-path/transfer-service.js";
import type { SignedTokenTransfer } from "../send-path/wallet-transaction.js";
import { approvalEvent } from "../webhooks/approval-events.js";
import type { EventSource } from "../webhooks/transfer-events.js";

/** The most transfers that may await approval at once: every one is held in memory by a new leader, and listed. */
export const APPROVALS_AWAITING_MAX = 1_000;

/** The most one API key may have waiting: one client cannot fill the desk for everyone. */
export const APPROVALS_AWAITING_PER_KEY_MAX = 100;

/** How often undecided approvals past their time are expired (and each approve or repeat checks it too). */
const EXPIRY_SWEEP_MS = 5_000;

/** Expired per pass: the sweep goes on at its next turn. */
const EXPIRY_BATCH = 100;

/** A network as approvals use it: where a new request is journaled, what sends an approved one, and how events name it. */
export interface ApprovalNetwork {
  /** The journal as the network's first lane sees it. */
  journal: TransferJournal;
  transfers: TransferSender;
  eventSource: EventSource;
}

export interface ApprovalDeskOptions {
  /** APPROVAL_TTL_HOURS, in ms. */
  ttlMs: number;
  /** Who holds each key (API_KEY_HOLDERS): the requester's holder may not decide with another key of theirs. */
  holders: KeyHolders;
  /** WEBHOOK_URL's endpoints; none: no events. */
  endpoints: readonly string[];
  /** Told after an event was journaled (the dispatcher sends it). */
  onEvent: () => void;
  /** How events name the network of a chain id, running or not (an expiry needs no node). */
  eventSourceOf: (chainId: number) => EventSource;
  now?: () => number;
}

/** A transfer awaiting approval as a request is answered: the entry, and whether a repeat of its key found it. */
export interface AwaitingApproval {
  entry: JournalEntry;
  replayed: boolean;
}

export class ApprovalDesk {
  readonly #journal: TransferJournal;
  readonly #options: ApprovalDeskOptions;
  readonly #now: () => number;
  #sweep: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> = Promise.resolve();

  constructor(journal: TransferJournal, options: ApprovalDeskOptions) {
    this.#journal = journal;
    this.#options = options;
    this.#now = options.now ?? steadyWallClockNow;
  }

  /**
   * A new transfer above the threshold: journaled awaiting approval (with its event), once durable. A key the
   * journal holds already is answered as that entry stands: its wait again while it waits (the same
   * request only: 422 otherwise); undefined once it was decided, for the transfer path to answer as any
   * repeat (the record, or its 417). `checkPolicy` runs for a new request only (403, a pause's 503).
   */
  async request(network: ApprovalNetwork, request: TransferRequest, key: string | undefined, checkPolicy: () => void): Promise<AwaitingApproval | undefined> {
    const held = key === undefined ? undefined : this.#journal.findByKey(key);
    if (held) return journaled(() => this.#answerRepeat(held, request, network));
    checkPolicy();
    const waiting = this.#journal.awaitingApprovalCount();
    const waitingOfKey = request.apiKeyId === undefined ? 0 : this.#journal.awaitingApprovalCount(request.apiKeyId);
    if (waiting >= APPROVALS_AWAITING_MAX || waitingOfKey >= APPROVALS_AWAITING_PER_KEY_MAX) {
      const whose = waiting >= APPROVALS_AWAITING_MAX ? `${APPROVALS_AWAITING_MAX} transfers` : `${APPROVALS_AWAITING_PER_KEY_MAX} transfers of this API key`;
      throw new ServiceError("APPROVALS_FULL", `${whose} await an approval already; nothing was journaled and the key is unused. Retry once some are decided`, { retryAfterSeconds: 60 });
    }
    return journaled(async () => {
      let claim;
      try {
        claim = network.journal.requestApproval(key, request, this.#now() + this.#options.ttlMs);
      } catch (error) {
        if (error instanceof PayoutItemsTakenError) {
          throw new ServiceError("PAYOUT_ITEM_IN_FLIGHT", `another request took payout item ids ${error.itemIds.join(", ")} while this one was checked; nothing was journaled. Retry with the same Idempotency-Key.`);
        }
        throw error;
      }
      if (claim.outcome === "existing") return this.#answerRepeat(claim.entry, request, network);
      const entry = this.#journal.findById(claim.entryId) as JournalEntry;
      this.#report(approvalEvent("transfer.awaiting_approval", entry, network.eventSource), entry);
      await this.#journal.flushed();
      return { entry, replayed: false };
    });
  }

  /**
   * A request below the threshold, sent by `send` (the transfer path). A key whose transfer awaits approval,
   * asked for when APPROVAL_ABOVE was lower (a restart raised it), is refused there before anything is done
   * (TRANSFER_AWAITING_APPROVAL); it gets its wait again instead, the key's first answer. Decided meanwhile
   * (expired, or an approval under way), it is sent again to be answered as the key now stands. Any other
   * request costs nothing more than `send`.
   */
  async sendUnlessWaiting<T>(network: ApprovalNetwork, request: TransferRequest, key: string | undefined, send: () => Promise<T>): Promise<{ sent: T } | { awaiting: AwaitingApproval }> {
    try {
      return { sent: await send() };
    } catch (error) {
      const held = error instanceof ServiceError && error.code === "TRANSFER_AWAITING_APPROVAL" && key !== undefined ? this.#journal.findByKey(key) : undefined;
      if (!held) throw error;
      const awaiting = await journaled(() => this.#answerRepeat(held, request, network));
      return awaiting ? { awaiting } : { sent: await send() };
    }
  }

  /**
   * The admin key `approver` approves the transfer `entryId`: it is signed and sent on its network, and the
   * record answered. 403 for the key that asked for it, 409 once decided or expired, 404 for an id that never
   * waited; a refusal of the send as any transfer's (a 417 refuses it for good, a 503 leaves it waiting).
   */
  async approve(entryId: number, approver: string, network: (entry: JournalEntry) => ApprovalNetwork, authorize: (entry: JournalEntry) => AuthorizeTransfer): Promise<SignedTokenTransfer> {
    const entry = await journaled(() => this.#awaiting(entryId, approver));
    const { transfers, eventSource } = network(entry);
    const onRefused = (refusedId: number, refusal: RecordedRefusal) => this.#reportRejected(refusedId, eventSource, refusal);
    return transfers.sendApproved({ entry, approver, onRefused }, authorize(entry));
  }

  /** The admin key `by` rejects the transfer: refused for good, never signed. Answers the entry as it now stands. */
  async reject(entryId: number, by: string): Promise<JournalEntry> {
    return journaled(async () => {
      const entry = await this.#awaiting(entryId, by);
      const refusal = { code: "APPROVAL_REJECTED", message: `admin key ${by} rejected transfer ${entryId}; nothing of it was or will be sent` };
      this.#decide(entry, by, refusal);
      await this.#journal.flushed();
      return this.#journal.findById(entryId) as JournalEntry;
    });
  }

  /** The transfer `entryId` as the journal holds it (a working copy asks the shared database for one it does not hold); 404 for one that never waited for an approval. */
  async find(entryId: number): Promise<JournalEntry> {
    const entry = this.#journal.findById(entryId) ?? (await this.#journal.history({}, entryId + 1, 1)).entries.find((found) => found.id === entryId);
    if (!entry?.approval) throw new ServiceError("APPROVAL_NOT_FOUND", `no transfer ${entryId} ever waited for an approval`);
    return entry;
  }

  /** Expires every undecided approval past its time (a batch per call); how many. */
  async expireDue(): Promise<number> {
    const now = this.#now();
    const due = this.#journal.awaitingApproval(EXPIRY_BATCH).filter((entry) => isExpired(entry, now));
    for (const entry of due) this.#expire(entry);
    if (due.length > 0) await this.#journal.flushed();
    return due.length;
  }

  /**
   * Expires approvals past their time now (those that passed it while the service was down) and then every
   * few seconds until stop(); `onError` hears of a failed pass.
   */
  start(onError: (error: unknown) => void): void {
    const pass = () => {
      this.#sweeping = this.#sweeping.then(() => this.expireDue().then(() => undefined, onError));
    };
    pass();
    this.#sweep = setInterval(pass, EXPIRY_SWEEP_MS);
    this.#sweep.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#sweep);
    await this.#sweeping;
  }

  async #answerRepeat(held: JournalEntry, request: TransferRequest, network: ApprovalNetwork): Promise<AwaitingApproval | undefined> {
    if (held.state !== "awaiting-approval") return undefined;
    if (BigInt(held.chainId) !== network.eventSource.network.chainId || !sameRequest(held, request)) {
      throw new ServiceError("IDEMPOTENCY_KEY_REUSED", `this Idempotency-Key was used for a different ${held.payout ? "payout" : "transfer"}; use a new key`);
    }
    if (isExpired(held, this.#now())) {
      this.#expire(held);
      await this.#journal.flushed();
      return undefined;
    }
    // The first request's commit may still be under way: its wait is answered once durable (a failed commit
    // takes the row back, and its id with it), and as it stands then.
    await this.#journal.flushed();
    const now = this.#journal.findById(held.id);
    return now?.state === "awaiting-approval" ? { entry: now, replayed: true } : undefined;
  }

  // The entry `entryId` while it awaits approval, for a decision by the admin key `by`; throws otherwise.
  async #awaiting(entryId: number, by: string): Promise<JournalEntry> {
    const entry = await this.find(entryId);
    if (entry.apiKeyId === by) throw new ServiceError("APPROVER_IS_REQUESTER", `transfer ${entryId} was asked for with this API key: another admin key must decide it`);
    if (entry.apiKeyId !== undefined && this.#options.holders.samePerson(entry.apiKeyId, by)) {
      throw new ServiceError("APPROVER_IS_REQUESTER", `transfer ${entryId} was asked for by ${this.#options.holders.personOf(by)}, who holds this API key too (API_KEY_HOLDERS): another person's admin key must decide it`);
    }
    if (entry.state === "awaiting-approval" && isExpired(entry, this.#now())) {
      this.#expire(entry);
      await this.#journal.flushed();
      throw new ServiceError("APPROVAL_DECIDED", `transfer ${entryId} expired undecided (APPROVAL_TTL_HOURS); nothing of it was or will be sent`);
    }
    if (entry.state !== "awaiting-approval") throw new ServiceError("APPROVAL_DECIDED", `transfer ${entryId} was ${decisionOf(entry)} already; nothing more was done`);
    return entry;
  }

  #expire(entry: JournalEntry): void {
    const hours = Math.round((this.#options.ttlMs / 3_600_000) * 1000) / 1000;
    this.#decide(entry, "expiry", { code: "APPROVAL_EXPIRED", message: `no admin approved transfer ${entry.id} within ${hours} h (APPROVAL_TTL_HOURS); nothing of it was or will be sent` });
  }

  // Refuses the awaiting entry for good, with the client's event in the same commit; 409 if decided meanwhile.
  #decide(entry: JournalEntry, by: string, refusal: RecordedRefusal): void {
    if (!this.#journal.refuseApproval(entry.id, by, this.#now(), refusal)) {
      throw new ServiceError("APPROVAL_DECIDED", `transfer ${entry.id} was decided meanwhile; nothing more was done`);
    }
    this.#reportRejected(entry.id, this.#options.eventSourceOf(entry.chainId), refusal);
  }

  #reportRejected(entryId: number, source: EventSource, reason: RecordedRefusal): void {
    const entry = this.#journal.findById(entryId) as JournalEntry;
    this.#report(approvalEvent("transfer.rejected", entry, source, reason), entry);
  }

  #report(event: ReturnType<typeof approvalEvent>, entry: JournalEntry): void {
    const { endpoints, onEvent } = this.#options;
    if (!entry.notify || endpoints.length === 0) return;
    this.#journal.recordEvent(event, endpoints);
    onEvent();
  }
}

/**
 * Runs a step that writes the journal: a journal that takes no writes is "nothing was done, retry" (503),
 * and a shared database that did not confirm a commit is "look before you ask again", as for a transfer.
 */
async function journaled<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof JournalUnavailableError) {
      throw new ServiceError("JOURNAL_UNAVAILABLE", "the transfer journal cannot record (see the service's log); nothing was decided or sent. Retry later.");
    }
    if (error instanceof JournalOutcomeUnknownError) {
      throw new ServiceError("TRANSFER_OUTCOME_UNKNOWN", "the transfer journal's database did not confirm this record: look the transfer up (GET /transfers) before asking again");
    }
    throw error;
  }
}

function isExpired(entry: JournalEntry, now: number): boolean {
  return entry.approval !== null && entry.approval.expiresAt <= now;
}

// A repeat is the same request by its token and what it pays (the network is compared by the caller).
function sameRequest(entry: JournalEntry, request: TransferRequest): boolean {
  if (request.token !== undefined && entry.token.toLowerCase() !== request.token.toLowerCase()) return false;
  return samePayment(entry, request);
}

/** How a decided approval ended, in words. */
export function decisionOf(entry: JournalEntry): "approved" | "rejected" | "expired" | "awaiting approval" {
  if (entry.state === "awaiting-approval") return "awaiting approval";
  if (entry.refusal?.code === "APPROVAL_EXPIRED") return "expired";
  if (entry.refusal?.code === "APPROVAL_REJECTED") return "rejected";
  return "approved";
}
