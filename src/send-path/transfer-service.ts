/**
 * The transfer service: one execution per Idempotency-Key, the transfer policy, the pre-flight checks that
 * refuse up front what would fail or overdraw, and the answer each request gets. The submitter below it
 * signs, journals and broadcasts.
 *
 * The contract of an answer: a transfer either resolves (200: signed, durably journaled, and owned by the
 * service until it is mined or reported failed) or throws a ServiceError. A 417 means nothing of it was or
 * ever will be sent. A repeat of an Idempotency-Key gets the first answer, 200 and 417 alike, also after a
 * restart; only refusals before any work (policy 403, and 503s that say "try again") leave the key unused.
 */
import { Transaction, toBigInt, toQuantity } from "ethers";
import { type ChainConnection, type NetworkToken, tokenOfChain } from "../node/connect-chain.js";
import { encodeTransfer } from "../node/erc20.js";
import { estimateGasAtLatest } from "../node/gas-estimate.js";
import { ServiceError } from "../errors.js";
import { asErrorCode, asServiceError, statusOf } from "./transfer-errors.js";
import { type JournalEntry, type PayoutOrder, type RecordedRefusal, type TransferJournal, type TransferRequest, requestOf } from "../journal/transfer-journal.js";
import { steadyWallClockNow } from "../clock.js";
import { approvalCallData, payoutAllowance, payoutCallData, samePayment, withPayoutGasMargin } from "./payout-call.js";
import { BroadcastRefusedError, type PreparedTransfer, type TransferSubmitter } from "./transfer-submitter.js";
import type { WalletLedger } from "./wallet-ledger.js";
import { type SignedTokenTransfer, withGasLimitMultiplier } from "./wallet-transaction.js";

/**
 * A transfer is priced with fees from a block read at most this long ago (the background reads one every
 * few seconds, so this rarely costs a call). Balances may be older: the ledger counts what is in flight,
 * and a shortfall is checked again against balances read at that moment.
 */
const FEES_MAX_AGE_MS = 10_000;

/** What a client waiting for the payout contract's approval is told to wait: a few blocks. */
const APPROVAL_RETRY_AFTER_SECONDS = 5;

function sameAddress(first: string, second: string): boolean {
  return first.toLowerCase() === second.toLowerCase();
}

/** A sent (or replayed) transfer. */
export interface TransferOutcome {
  transfer: SignedTokenTransfer;
  /** True when the answer comes from the journal for a repeated Idempotency-Key. */
  replayed: boolean;
}

/**
 * The transfer policy for a new transfer (never for a repeat answered from the journal): throws to refuse,
 * or returns the function that takes the authorization back if nothing gets sent.
 */
export type AuthorizeTransfer = () => () => void;

export interface TokenTransferServiceOptions {
  chain: ChainConnection;
  /** GAS_LIMIT_MULTIPLIER: the gas limit is the estimate times this ("1.0": exactly the estimate, as ethers v5 did). */
  gasLimitMultiplier: string;
  journal: TransferJournal;
  ledger: WalletLedger;
  submitter: TransferSubmitter;
  /** Resolves once the fees come from a block read at most `maxAgeMs` ago, reading one if needed. */
  ensureFees: (maxAgeMs: number) => Promise<void>;
  /** Resolves once the wallet snapshot (balances too) is at most `maxAgeMs` old, reading one if needed. */
  ensureSnapshot: (maxAgeMs: number) => Promise<void>;
  /**
   * Whether any lane of the pool is still sending the entry that holds `key` (a repeat must not answer
   * with a record whose first broadcast is still under way). Without a pool, this service's own knowledge.
   */
  isSendingAnywhere?: (key: string, entry: JournalEntry) => boolean;
}

/**
 * A transfer that waited for a second admin key (APPROVAL_ABOVE), approved now: its journal entry as read
 * (awaiting approval), the admin key that approved it, and what journals the client's news of a refusal
 * (the webhook event), called in the same turn as the refusal's write, so that both are one commit.
 */
export interface ApprovedTransfer {
  entry: JournalEntry;
  approver: string;
  onRefused: (entryId: number, refusal: RecordedRefusal) => void;
}

/** What the transfer route asks of the sending side: one wallet's service, or a pool's router. */
export interface TransferSender {
  sendTokenTransfer(request: TransferRequest, idempotencyKey?: string, authorize?: AuthorizeTransfer): Promise<TransferOutcome>;
  /**
   * Signs and sends an approved transfer, with the whole contract of a new one from there on. A 417 refuses
   * it for good (the key's answer from then on); any other failure leaves it awaiting its approval, nothing
   * sent. Throws APPROVAL_DECIDED when another decision took it first.
   */
  sendApproved(approved: ApprovedTransfer, authorize?: AuthorizeTransfer): Promise<SignedTokenTransfer>;
}

/** Told once a new transfer holds its tokens and gas in the wallet's ledger (a pool stops counting it as routed). */
export type OnReserved = () => void;

/** Sends token transfers for one hot wallet; safe to call concurrently. */
export class TokenTransferService implements TransferSender {
  readonly #options: TokenTransferServiceOptions;
  readonly #inFlightKeys = new Set<string>();
  // "token:contract" pairs the wallet is known to have approved for payouts (an approval is for good).
  readonly #payoutApprovals = new Set<string>();
  readonly #approvalsBeingSent = new Map<string, Promise<SignedTokenTransfer>>();

  constructor(options: TokenTransferServiceOptions) {
    this.#options = options;
  }

  /**
   * Sends `transfer(recipient, units)` and resolves once the service owns it (see the contract above).
   * With an idempotency key, a repeat answers from the journal without sending anything (and without
   * `authorize`, which only new transfers go through). Throws ServiceError.
   */
  async sendTokenTransfer(request: TransferRequest, idempotencyKey?: string, authorize?: AuthorizeTransfer, onReserved?: OnReserved): Promise<TransferOutcome> {
    if (idempotencyKey === undefined) return { transfer: await this.#execute(request, undefined, authorize, onReserved), replayed: false };
    const claim = this.#claim(idempotencyKey, request);
    if (claim.outcome === "existing") return this.#answerRepeat(idempotencyKey, request, claim.entry);
    this.#inFlightKeys.add(idempotencyKey);
    try {
      return { transfer: await this.#execute(request, claim.entryId, authorize, onReserved), replayed: false };
    } catch (error) {
      await this.#settleKey(claim.entryId, error);
      throw error;
    } finally {
      this.#inFlightKeys.delete(idempotencyKey);
    }
  }

  /**
   * Answers a transfer a wallet pool refused before any lane took it, as this service answers its own
   * refusals: a 417 is kept for the key (every repeat gets it), a "try again" frees it, and a key that
   * turns out to be taken gets its first answer. Without a key, the refusal is simply thrown.
   */
  async refuse(request: TransferRequest, idempotencyKey: string | undefined, refusal: ServiceError): Promise<TransferOutcome> {
    if (idempotencyKey === undefined) throw refusal;
    const claim = this.#claim(idempotencyKey, request);
    if (claim.outcome === "existing") return this.#answerRepeat(idempotencyKey, request, claim.entry);
    await this.#settleKey(claim.entryId, refusal);
    throw refusal;
  }

  async sendApproved(approved: ApprovedTransfer, authorize?: AuthorizeTransfer, onReserved?: OnReserved): Promise<SignedTokenTransfer> {
    const { entry, approver } = approved;
    const { journal } = this.#options;
    let taken: boolean;
    try {
      taken = journal.takeApproved(entry.id, approver, steadyWallClockNow());
    } catch (error) {
      throw asServiceError(error);
    }
    if (!taken) throw new ServiceError("APPROVAL_DECIDED", `transfer ${entry.id} was decided (or expired) meanwhile; nothing more was done`);
    const key = entry.idempotencyKey ?? undefined;
    if (key !== undefined) this.#inFlightKeys.add(key);
    try {
      // A refusal at the first broadcast that ends it for good (a 417) is told in the commit that records it.
      const onRejected = (entryId: number, refusal: RecordedRefusal) => {
        if (statusOf(refusal.code) === 417) approved.onRefused(entryId, refusal);
      };
      return await this.#execute(requestOf(entry), entry.id, authorize, onReserved, onRejected);
    } catch (error) {
      await this.#settleApproved(entry.id, error, approved.onRefused);
      throw error;
    } finally {
      if (key !== undefined) this.#inFlightKeys.delete(key);
    }
  }

  /**
   * Answers an approved transfer a wallet pool could not route to any lane: a 417 refuses it for good (and
   * journals the client's news of it); a "try again" leaves it awaiting its approval.
   */
  async refuseApproved(approved: ApprovedTransfer, refusal: ServiceError): Promise<never> {
    const { journal } = this.#options;
    if (refusal.statusCode !== 417) throw refusal;
    let refused: boolean;
    try {
      const recorded = { code: refusal.code, message: refusal.message };
      refused = journal.refuseApproval(approved.entry.id, approved.approver, steadyWallClockNow(), recorded);
      if (refused) approved.onRefused(approved.entry.id, recorded);
      await journal.flushed();
    } catch (error) {
      throw asServiceError(error);
    }
    // Another decision took it first (it may be being sent): this approval changed nothing.
    if (!refused) throw new ServiceError("APPROVAL_DECIDED", `transfer ${approved.entry.id} was decided (or expired) meanwhile; nothing more was done`);
    throw refusal;
  }

  // What an approved transfer that was not sent becomes: refused for good on a 417 (the client learns it
  // from the event; a refusal at the first broadcast told it in the submitter's commit already), else
  // awaiting its approval again. Bytes signed and refused at their first broadcast for a reason of the
  // moment are dead all the same: the entry cannot wait again, so it is refused for good, and the approver
  // told so (a 417), rather than left answering a "retry" its key could never make good.
  async #settleApproved(entryId: number, error: unknown, onRefused: ApprovedTransfer["onRefused"]): Promise<void> {
    const { journal } = this.#options;
    const answered = error instanceof ServiceError && error.statusCode === 417;
    if (journal.failure) {
      if (answered && !(error.cause instanceof BroadcastRefusedError)) throw asServiceError(journal.failure);
      return;
    }
    let dead: ServiceError | undefined;
    try {
      if (answered && !(error.cause instanceof BroadcastRefusedError)) {
        const refusal = { code: error.code, message: error.message };
        journal.recordRefused(entryId, refusal);
        onRefused(entryId, refusal);
      } else if (!answered && !journal.returnToApproval(entryId)) {
        const state = journal.findById(entryId)?.state;
        if (state === "refused" || state === "rejected") {
          // A ServiceError's words are a client's to read; anything else is a fault inside, told only in the log.
          const inside = !(error instanceof ServiceError);
          const why = inside ? "see the service's log" : error.message;
          dead = new ServiceError("APPROVAL_NOT_SENT", `transfer ${entryId} was approved, but the node refused it (${why}); nothing of it was or will be sent`, {
            cause: error,
            logDetail: inside ? String(error instanceof Error ? error.message : error) : undefined,
          });
          const refusal = { code: dead.code, message: dead.message };
          journal.restateRefusal(entryId, refusal);
          onRefused(entryId, refusal);
        }
      }
      await journal.flushed();
    } catch (journalError) {
      throw asServiceError(journalError);
    }
    if (dead) throw dead;
  }

  /** Whether this service is still sending `entry`, which holds `key`: its first answer is not known yet. */
  isSending(key: string, entry: JournalEntry): boolean {
    return this.#inFlightKeys.has(key) || (entry.state === "signed" && this.#options.submitter.isInFlight(entry.id));
  }

  #claim(key: string, request: TransferRequest) {
    try {
      return this.#options.journal.claimKey(key, request);
    } catch (error) {
      throw asServiceError(error);
    }
  }

  // What a failed request leaves behind with its key: a 417 is kept, so every repeat gets it too; a
  // refusal before any work (policy, "try again") or a fault of ours frees the key.
  async #settleKey(entryId: number, error: unknown): Promise<void> {
    const { journal } = this.#options;
    const answered = error instanceof ServiceError && error.statusCode === 417;
    // A 417 is final for the key only once it is recorded: a journal that takes no writes cannot keep it,
    // and a repeat after the restart would run afresh. Then the answer is "nothing was done, retry" (503).
    if (journal.failure) {
      if (answered && !(error.cause instanceof BroadcastRefusedError)) throw asServiceError(journal.failure);
      return;
    }
    try {
      if (!answered) {
        // A fault of the moment (the node slow or unreachable, a signer down: a 503) leaves the key unused,
        // also when what was signed is recorded as refused (its bytes are never sent).
        if (journal.releaseRefusedKey(entryId)) await journal.flushed();
        else journal.releaseKey(entryId);
        return;
      }
      // A refusal at broadcast was recorded by the submitter already.
      if (!(error.cause instanceof BroadcastRefusedError)) journal.recordRefused(entryId, { code: error.code, message: error.message });
      await journal.flushed();
    } catch (journalError) {
      throw asServiceError(journalError);
    }
  }

  async #answerRepeat(key: string, request: TransferRequest, entry: JournalEntry): Promise<TransferOutcome> {
    const { chain } = this.#options;
    // A key is one payment on one network, in one token: the same key for another is another request.
    const elsewhere = BigInt(entry.chainId) !== chain.chainId || entry.token.toLowerCase() !== this.#tokenOf(request).address.toLowerCase();
    if (elsewhere || !samePayment(entry, request)) {
      throw new ServiceError("IDEMPOTENCY_KEY_REUSED", `this Idempotency-Key was used for a different ${entry.payout ? "payout" : "transfer"}; use a new key`);
    }
    const isSending = this.#options.isSendingAnywhere ?? ((sentKey, sent) => this.isSending(sentKey, sent));
    if (entry.state === "awaiting-approval") {
      throw new ServiceError("TRANSFER_AWAITING_APPROVAL", `this Idempotency-Key's transfer ${entry.id} awaits an admin's approval; nothing was sent`);
    }
    if (entry.state === "claimed" || isSending(key, entry)) {
      throw new ServiceError("IDEMPOTENCY_KEY_IN_FLIGHT", "a transfer with this Idempotency-Key is still being sent; retry shortly");
    }
    if (entry.refusal) throw new ServiceError(asErrorCode(entry.refusal.code), entry.refusal.message);
    if (!entry.rawTransaction || !entry.hash) throw new Error(`journal entry ${entry.id} holds key ${key} without a transaction`);
    // The first answer was this transaction's record (or was never delivered, the process having died):
    // the same record again, byte for byte. What became of it is for GET /transactions/:hash to tell. Its
    // sender is the wallet that signed it: in a pool, the lane it was sent from.
    const transfer = { transaction: Transaction.from(entry.rawTransaction), hash: entry.hash, rawTransaction: entry.rawTransaction, from: entry.lane };
    return { transfer, replayed: true };
  }

  async #execute(
    request: TransferRequest,
    claimedEntryId: number | undefined,
    authorize: AuthorizeTransfer | undefined,
    onReserved: OnReserved | undefined,
    onRejected?: PreparedTransfer["onRejected"],
  ): Promise<SignedTokenTransfer> {
    const { ledger, submitter } = this.#options;
    const token = this.#tokenOf(request);
    let prepared: PreparedTransfer | undefined;
    let revokeAuthorization: (() => void) | undefined;
    try {
      revokeAuthorization = authorize?.();
      await this.#options.ensureFees(FEES_MAX_AGE_MS);
      // Gas at the fee cap, and on OP Stack chains the L1 data fee, which is paid outside gas x price.
      const gasCost = (gasLimit: bigint) => gasLimit * ledger.snapshot.maxFeePerGas + ledger.snapshot.l1DataFee;
      if (request.payout) {
        const contract = this.#payoutContractOf(request.payout);
        await this.#withBalancesReadAgainOnShortfall(() => ledger.assertTokensAvailable(request.units, token.address));
        await this.#ensurePayoutApproval(token, contract, request.units);
        const data = payoutCallData(token.address, request.payout);
        const gasLimit = withPayoutGasMargin(await this.#estimate({ to: contract, data }));
        const reservation = await this.#withBalancesReadAgainOnShortfall(() => ledger.reserve(request.units, gasCost(gasLimit), token.address));
        onReserved?.();
        prepared = { request, call: { to: contract, data, gasLimit }, kind: "transfer", reservation, entryId: claimedEntryId, onRejected };
      } else if (token.native) {
        // A plain value transfer: the value is spent from the same balance as the gas.
        await this.#withBalancesReadAgainOnShortfall(() => ledger.assertNativeAvailable(request.units));
        const gasLimit = await this.#estimate({ to: request.recipient, value: toQuantity(request.units) });
        const reservation = await this.#withBalancesReadAgainOnShortfall(() => ledger.reserve(0n, gasCost(gasLimit) + request.units, undefined, request.units));
        onReserved?.();
        prepared = { request, call: { to: request.recipient, data: "0x", gasLimit, value: request.units }, kind: "transfer", reservation, entryId: claimedEntryId, onRejected };
      } else {
        await this.#withBalancesReadAgainOnShortfall(() => ledger.assertTokensAvailable(request.units, token.address));
        const data = encodeTransfer(request.recipient, request.units);
        const gasLimit = await this.#simulate(token, data);
        const reservation = await this.#withBalancesReadAgainOnShortfall(() => ledger.reserve(request.units, gasCost(gasLimit), token.address));
        onReserved?.();
        prepared = { request, call: { to: token.address, data, gasLimit }, kind: "transfer", reservation, entryId: claimedEntryId, onRejected };
      }
      return await submitter.submit(prepared);
    } catch (error) {
      revokeAuthorization?.();
      if (prepared) ledger.release(prepared.reservation);
      throw asServiceError(error);
    }
  }

  /**
   * Sends `wei` of ETH to `lane` (another wallet of the pool) for its gas: journaled, broadcast, re-sent and
   * re-priced like a transfer, as an entry of 0 units whose attempts are of kind "top-up". Resolves once the
   * service owns it; throws ServiceError (this wallet cannot pay it, the node refused it, ...).
   */
  async sendGasTopUp(lane: string, wei: bigint): Promise<SignedTokenTransfer> {
    const { chain, ledger, submitter } = this.#options;
    let prepared: PreparedTransfer | undefined;
    try {
      await this.#options.ensureFees(FEES_MAX_AGE_MS);
      const estimate = await estimateGasAtLatest(chain.provider, { from: chain.wallet.address, to: lane, value: toQuantity(wei) });
      const gasLimit = withGasLimitMultiplier(toBigInt(estimate), this.#options.gasLimitMultiplier);
      const reservation = await this.#withBalancesReadAgainOnShortfall(() => ledger.reserve(0n, gasLimit * ledger.snapshot.maxFeePerGas + ledger.snapshot.l1DataFee + wei));
      prepared = { request: { recipient: lane, units: 0n }, call: { to: lane, data: "0x", gasLimit, value: wei }, kind: "top-up", reservation, entryId: undefined };
      return await submitter.submit(prepared);
    } catch (error) {
      if (prepared) ledger.release(prepared.reservation);
      throw asServiceError(error);
    }
  }

  // The snapshot may predate a top-up or mined transfers: balances are read again, twice at most (the ledger
  // frees what two snapshots show mined: WalletLedger.applySnapshot), before the client is told 417.
  async #withBalancesReadAgainOnShortfall<T>(check: () => T): Promise<T> {
    for (let reads = 0; ; reads++) {
      try {
        return check();
      } catch (error) {
        const shortfall = error instanceof ServiceError && (error.code === "INSUFFICIENT_TOKEN_BALANCE" || error.code === "INSUFFICIENT_FUNDS");
        if (!shortfall || reads === 2) throw error;
        await this.#options.ensureSnapshot(0);
      }
    }
  }


  /**
   * The simulation before signing: the gas estimate (a revert surfaces as CALL_EXCEPTION), and, for a
   * token that answers a transfer it cannot make with false instead of a revert (probed at startup), the
   * call's return value, side by side: such a transfer would move nothing on chain.
   */
  async #simulate(token: NetworkToken, data: string): Promise<bigint> {
    const { provider, wallet } = this.#options.chain;
    const call = { from: wallet.address, to: token.address, data };
    // At the latest block, as the call beside it (see gas-estimate.ts).
    const [estimate, returned] = await Promise.all([
      estimateGasAtLatest(provider, call),
      token.mayReturnFalse ? provider.send("eth_call", [call, "latest"]) : undefined,
    ]);
    if (returned !== undefined && transferReturnedFalse(String(returned))) {
      throw new ServiceError("CALL_EXCEPTION", "the token contract would not make the transfer: its transfer() returned false (it would move nothing)");
    }
    return withGasLimitMultiplier(toBigInt(estimate), this.#options.gasLimitMultiplier);
  }

  /**
   * Makes sure the wallet has approved the payout contract for `token`, or throws PAYOUT_APPROVAL_PENDING
   * (503, the key unused) after sending the approval, or while the one sent is not mined: a batch estimated
   * and signed before the approval is mined would fail every item.
   */
  async #ensurePayoutApproval(token: NetworkToken, contract: string, units: bigint): Promise<void> {
    const { chain, journal } = this.#options;
    const approved = `${token.address.toLowerCase()}:${contract.toLowerCase()}`;
    if (this.#payoutApprovals.has(approved)) return;
    const allowance = await payoutAllowance(chain.provider, token.address, chain.wallet.address, contract);
    // The service's own approval is for good; a token that caps allowances below it still pays what it allows.
    if (allowance.forGood) this.#payoutApprovals.add(approved);
    if (allowance.units >= units) return;
    // One approval at a time per token and contract: journaled and unmined, or being sent by a request now.
    const unmined = journal.unsettled().find((entry) => entry.attempts[0]?.kind === "approval" && sameAddress(entry.token, token.address) && sameAddress(entry.recipient, contract));
    let sending = this.#approvalsBeingSent.get(approved);
    if (!unmined && !sending) {
      sending = this.#sendApproval(token, contract).finally(() => this.#approvalsBeingSent.delete(approved));
      this.#approvalsBeingSent.set(approved, sending);
    }
    const hash = unmined?.hash ?? (await (sending as Promise<SignedTokenTransfer>)).hash;
    throw new ServiceError(
      "PAYOUT_APPROVAL_PENDING",
      `the wallet's approval of the payout contract ${contract} for token ${token.symbol} (transaction ${hash}) is not mined yet; nothing of this payout was sent. Retry with the same Idempotency-Key once it is.`,
      { retryAfterSeconds: APPROVAL_RETRY_AFTER_SECONDS },
    );
  }

  // The approval is a wallet transaction like a transfer: journaled, re-sent and re-priced until mined.
  async #sendApproval(token: NetworkToken, contract: string): Promise<SignedTokenTransfer> {
    const { ledger, submitter } = this.#options;
    const data = approvalCallData(contract);
    const gasLimit = await this.#estimate({ to: token.address, data });
    const reservation = await this.#withBalancesReadAgainOnShortfall(() => ledger.reserve(0n, gasLimit * ledger.snapshot.maxFeePerGas + ledger.snapshot.l1DataFee));
    const prepared: PreparedTransfer = { request: { recipient: contract, units: 0n, token: token.address }, call: { to: token.address, data, gasLimit }, kind: "approval", reservation, entryId: undefined };
    try {
      return await submitter.submit(prepared);
    } catch (error) {
      ledger.release(reservation);
      const refused = asServiceError(error);
      // Not a refusal: whether the approval goes out is not known yet, and its message says so.
      if (!(refused instanceof ServiceError) || refused.code === "TRANSFER_OUTCOME_UNKNOWN") throw refused;
      // The payout's own refusal, recorded for its key like any (the approval's refusal is the approval's).
      throw new ServiceError(refused.code, `the wallet's approval of the payout contract ${contract} was not sent: ${refused.message}`, { retryAfterSeconds: refused.retryAfterSeconds });
    }
  }

  #payoutContractOf(order: PayoutOrder): string {
    const configured = this.#options.chain.payoutContract;
    if (!configured || !sameAddress(configured, order.contract)) throw new ServiceError("PAYOUTS_NOT_CONFIGURED", `chain ${this.#options.chain.chainId} pays no payouts through ${order.contract}`);
    return configured;
  }

  // The gas limit of a call from the wallet: a plain value transfer costs 21,000 to an account, more to a
  // contract that runs code on receipt (one that refuses the value reverts here, before anything is signed).
  async #estimate(call: { to: string; value?: string; data?: string }): Promise<bigint> {
    const { provider, wallet } = this.#options.chain;
    return withGasLimitMultiplier(toBigInt(await estimateGasAtLatest(provider, { from: wallet.address, ...call })), this.#options.gasLimitMultiplier);
  }

  // The token a request pays in: the one it names (an address, or "native"), else the network's first ERC-20.
  #tokenOf(request: TransferRequest): NetworkToken {
    const { chain } = this.#options;
    const token = tokenOfChain(chain, request.token);
    if (token) return token;
    throw new Error(`token ${request.token} is not one of chain ${chain.chainId}'s`);
  }
}

// No return data is a token like USDT, whose transfer() returns nothing; otherwise the first word is the bool.
function transferReturnedFalse(returned: string): boolean {
  return returned.length >= 66 && BigInt(returned.slice(0, 66)) === 0n;
}
