/**
 * Sends ERC-20 transfers from the hot wallet: refuses up front what would fail or overdraw, journals
 * every signed transaction before broadcasting it, and answers a repeated Idempotency-Key from the journal.
 */
import { Transaction, isError, keccak256, toBigInt } from "ethers";
import { ServiceError } from "../errors.js";
import type { JournalEntry, TransferJournal, TransferRequest } from "../journal/transfer-journal.js";
import { BroadcastOutcomeUnknownError, isAlreadyKnown, isSurelyRejected } from "./broadcast-outcome.js";
import type { ChainConnection } from "./connect-chain.js";
import { encodeTransfer } from "./erc20.js";
import { classifyChainFailure } from "./ethers-errors.js";
import { NonceAllocator } from "./nonce-allocator.js";
import type { TransferReconciler } from "./transfer-reconciler.js";
import type { Reservation, WalletLedger } from "./wallet-ledger.js";

/** Places where tests can stop the process to prove nothing is lost (TEST_FAULT_POINT). */
export type FaultPoint = "after-sign" | "after-broadcast";

export interface TokenTransferSenderOptions {
  chain: ChainConnection;
  journal: TransferJournal;
  ledger: WalletLedger;
  reconciler: TransferReconciler;
  /** Awaited at each fault point; resolves at once outside tests. */
  reachFaultPoint?: (point: FaultPoint) => Promise<void>;
}

/**
 * A signed transfer with its hash, bytes and signer worked out once: ethers recomputes `hash` and
 * `serialized` on every access, and recovers `from` from the signature (about a millisecond each time).
 */
export interface SignedTokenTransfer {
  transaction: Transaction;
  hash: string;
  rawTransaction: string;
  from: string;
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

/** Mutable state of one transfer across its attempts. */
interface TransferAttempt {
  request: TransferRequest;
  data: string;
  gasLimit: bigint;
  reservation: Reservation;
  entryId: number | undefined;
}

/** Sends token transfers for one hot wallet; safe to call concurrently. */
export class TokenTransferSender {
  readonly #options: TokenTransferSenderOptions;
  readonly #nonces: NonceAllocator;
  readonly #inFlightKeys = new Set<string>();
  readonly #inFlightEntries = new Set<number>();

  constructor(options: TokenTransferSenderOptions) {
    this.#options = options;
    const { provider, wallet } = options.chain;
    this.#nonces = new NonceAllocator(async () => Number(await provider.send("eth_getTransactionCount", [wallet.address, "pending"])));
  }

  /** True while a request is working on this journal entry. */
  isInFlight(entryId: number): boolean {
    return this.#inFlightEntries.has(entryId);
  }

  /** The nonce the next transfer would take; undefined before the first transfer. */
  get nextNonce(): number | undefined {
    return this.#nonces.peek();
  }

  /** Gives back a nonce whose transaction the node refused after all (see TransferReconciler). */
  releaseNonce(nonce: number): void {
    this.#nonces.release(nonce);
  }

  /** Transfers being worked on right now. */
  get inFlightCount(): number {
    return this.#inFlightEntries.size;
  }

  /**
   * Sends `transfer(recipient, units)` and resolves once the node has accepted it, before it is mined.
   * With an idempotency key, a repeat answers from the journal without sending anything (and without
   * `authorize`, which only new transfers go through).
   * Throws ServiceError: 417 when it cannot be sent, 409/422 for a key in flight or reused.
   */
  async sendTokenTransfer(request: TransferRequest, idempotencyKey?: string, authorize?: AuthorizeTransfer): Promise<TransferOutcome> {
    if (idempotencyKey === undefined) return { transfer: await this.#execute(request, undefined, authorize), replayed: false };
    const claim = this.#options.journal.claimKey(idempotencyKey, request);
    if (claim.outcome === "existing") return this.#answerRepeat(idempotencyKey, request, claim.entry);
    this.#inFlightKeys.add(idempotencyKey);
    try {
      return { transfer: await this.#execute(request, claim.entryId, authorize), replayed: false };
    } finally {
      this.#inFlightKeys.delete(idempotencyKey);
    }
  }

  async #answerRepeat(key: string, request: TransferRequest, entry: JournalEntry): Promise<TransferOutcome> {
    if (entry.recipient !== request.recipient || entry.units !== request.units) {
      throw new ServiceError("IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used for a different transfer; use a new key");
    }
    if (this.#inFlightKeys.has(key) || entry.state === "claimed" || (entry.state === "signed" && this.isInFlight(entry.id))) {
      throw new ServiceError("IDEMPOTENCY_KEY_IN_FLIGHT", "a transfer with this Idempotency-Key is still being sent; retry shortly");
    }
    if (entry.state === "replaced") {
      throw new ServiceError("TRANSACTION_REPLACED", `transaction ${entry.hash} was replaced by another with nonce ${entry.nonce}; nothing was sent for it`);
    }
    if (entry.state === "signed") {
      // Its first broadcast got no answer: send the same bytes again to learn where it stands.
      const outcome = await this.#options.reconciler.rebroadcast(entry).catch((error) => {
        throw asTransferError(error);
      });
      if (outcome !== "accepted") return this.#answerRepeat(key, request, { ...entry, state: outcome });
    }
    if (!entry.rawTransaction || !entry.hash) throw new Error(`journal entry ${entry.id} holds key ${key} without a transaction`);
    const transfer = { transaction: Transaction.from(entry.rawTransaction), hash: entry.hash, rawTransaction: entry.rawTransaction, from: this.#options.chain.wallet.address };
    return { transfer, replayed: true };
  }

  async #execute(request: TransferRequest, claimedEntryId: number | undefined, authorize: AuthorizeTransfer | undefined): Promise<SignedTokenTransfer> {
    const { ledger, journal } = this.#options;
    let attempt: TransferAttempt | undefined;
    let revokeAuthorization: (() => void) | undefined;
    try {
      revokeAuthorization = authorize?.();
      ledger.assertTokensAvailable(request.units);
      const data = encodeTransfer(request.recipient, request.units);
      const gasLimit = await this.#simulate(data);
      const reservation = ledger.reserve(request.units, gasLimit * ledger.snapshot.maxFeePerGas);
      attempt = { request, data, gasLimit, reservation, entryId: claimedEntryId };
      return await this.#sendWithFreshNonceOnRefusal(attempt);
    } catch (error) {
      const mayBeOnChain = error instanceof BroadcastOutcomeUnknownError;
      if (!mayBeOnChain) revokeAuthorization?.();
      if (attempt && !mayBeOnChain) ledger.release(attempt.reservation);
      const entryId = attempt?.entryId ?? claimedEntryId;
      if (entryId !== undefined && !mayBeOnChain) journal.releaseKey(entryId);
      throw asTransferError(error);
    }
  }

  // The gas simulation: the one node call before signing. A revert surfaces here as CALL_EXCEPTION.
  async #simulate(data: string): Promise<bigint> {
    const { provider, wallet, tokenAddress } = this.#options.chain;
    return toBigInt(await provider.send("eth_estimateGas", [{ from: wallet.address, to: tokenAddress, data }]));
  }

  async #sendWithFreshNonceOnRefusal(attempt: TransferAttempt): Promise<SignedTokenTransfer> {
    try {
      return await this.#signAndBroadcast(attempt);
    } catch (error) {
      // The node refused the nonce as used: another sender used the key, and nothing of ours was
      // broadcast. Catch up with the chain's count; one more try with a fresh nonce is safe.
      if (!isNonceRefusal(error)) throw error;
      return await this.#signAndBroadcast(attempt);
    }
  }

  // Taking the nonce, signing and journaling happen in one synchronous step, so concurrent transfers get
  // distinct nonces without waiting for each other's broadcasts.
  async #signAndBroadcast(attempt: TransferAttempt): Promise<SignedTokenTransfer> {
    const { chain, journal, ledger } = this.#options;
    await this.#nonces.ready();
    const nonce = this.#nonces.take();
    const transfer = this.#sign(attempt, nonce);
    const entryId = journal.recordSigned(attempt.entryId, attempt.request, { nonce, hash: transfer.hash, rawTransaction: transfer.rawTransaction });
    attempt.entryId = entryId;
    ledger.assignNonce(attempt.reservation, nonce);
    this.#inFlightEntries.add(entryId);
    try {
      // Nothing leaves the process before the signed bytes are on disk.
      await journal.flushed();
      await this.#reachFaultPoint("after-sign");
      try {
        await chain.provider.send("eth_sendRawTransaction", [transfer.rawTransaction]);
      } catch (error) {
        if (isAlreadyKnown(error)) {
          // The node holds it already: success.
        } else if (isSurelyRejected(error)) {
          journal.recordRejected(entryId);
          // The client will be told it failed: that must survive a crash, or a restart would send it again.
          await journal.flushed();
          ledger.release(attempt.reservation, nonce);
          ledger.reserveAgain(attempt.reservation);
          // A nonce refused as used may belong to another sender now; any other refusal leaves it free.
          if (isNonceRefusal(error)) await this.#nonces.catchUpWithChain(nonce);
          else this.#nonces.release(nonce);
          throw error;
        } else {
          throw new BroadcastOutcomeUnknownError(transfer.hash, error);
        }
      }
      await this.#reachFaultPoint("after-broadcast");
      journal.recordAccepted(entryId);
      return transfer;
    } finally {
      this.#inFlightEntries.delete(entryId);
    }
  }

  #sign(attempt: TransferAttempt, nonce: number): SignedTokenTransfer {
    const { chain, ledger } = this.#options;
    const { maxFeePerGas, maxPriorityFeePerGas } = ledger.snapshot;
    const transaction = Transaction.from({
      type: 2,
      chainId: chain.chainId,
      nonce,
      to: chain.tokenAddress,
      value: 0n,
      data: attempt.data,
      gasLimit: attempt.gasLimit,
      maxFeePerGas,
      maxPriorityFeePerGas,
      accessList: [],
    });
    transaction.signature = chain.signer.sign(transaction.unsignedHash);
    const rawTransaction = transaction.serialized;
    return { transaction, rawTransaction, hash: keccak256(rawTransaction), from: chain.wallet.address };
  }

  #reachFaultPoint(point: FaultPoint): Promise<void> {
    return this.#options.reachFaultPoint?.(point) ?? Promise.resolve();
  }
}

function isNonceRefusal(error: unknown): boolean {
  return isError(error, "NONCE_EXPIRED") || isError(error, "REPLACEMENT_UNDERPRICED");
}

function asTransferError(error: unknown): unknown {
  if (error instanceof ServiceError) return error;
  if (error instanceof BroadcastOutcomeUnknownError) {
    const failure = classifyChainFailure(error.cause) ?? { code: "NETWORK_ERROR" as const, message: "the node did not answer" };
    return new ServiceError(
      failure.code,
      `${failure.message}; transaction ${error.hash} was signed and may have reached the node: the service keeps sending ` +
        "the same signed bytes, never a second transaction. Retry with the same Idempotency-Key to learn its fate.",
    );
  }
  const failure = classifyChainFailure(error);
  return failure ? new ServiceError(failure.code, failure.message) : error;
}
