/**
 * Sends ERC-20 transfers from the hot wallet: refuses up front what would fail or overdraw, journals
 * every signed transaction before broadcasting it, and answers a repeated Idempotency-Key from the journal.
 */
import { Transaction, isError, toBigInt } from "ethers";
import { ServiceError } from "../errors.js";
import type { JournalEntry, TransferJournal, TransferRequest } from "../journal/transfer-journal.js";
import { BroadcastOutcomeUnknownError, isAlreadyKnown, isSurelyRejected } from "./broadcast-outcome.js";
import type { ChainConnection } from "./connect-chain.js";
import { encodeTransfer } from "./erc20.js";
import { classifyChainFailure } from "./ethers-errors.js";
import { NonceSequence } from "./nonce-sequence.js";
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

/** A sent (or replayed) transfer. */
export interface TransferOutcome {
  transaction: Transaction;
  /** True when the answer comes from the journal for a repeated Idempotency-Key. */
  replayed: boolean;
}

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
  readonly #nonces: NonceSequence;
  readonly #inFlightKeys = new Set<string>();
  readonly #inFlightEntries = new Set<number>();

  constructor(options: TokenTransferSenderOptions) {
    this.#options = options;
    const { provider, wallet } = options.chain;
    this.#nonces = new NonceSequence(
      async () => Number(await provider.send("eth_getTransactionCount", [wallet.address, "pending"])),
      (error) => error instanceof BroadcastOutcomeUnknownError,
    );
  }

  /** True while a request is working on this journal entry. */
  isInFlight(entryId: number): boolean {
    return this.#inFlightEntries.has(entryId);
  }

  /** Transfers being worked on right now. */
  get inFlightCount(): number {
    return this.#inFlightEntries.size;
  }

  /**
   * Sends `transfer(recipient, units)` and resolves once the node has accepted it, before it is mined.
   * With an idempotency key, a repeat answers from the journal without sending anything.
   * Throws ServiceError: 417 when it cannot be sent, 409/422 for a key in flight or reused.
   */
  async sendTokenTransfer(request: TransferRequest, idempotencyKey?: string): Promise<TransferOutcome> {
    if (idempotencyKey === undefined) return { transaction: await this.#execute(request, undefined), replayed: false };
    const claim = this.#options.journal.claimKey(idempotencyKey, request);
    if (claim.outcome === "existing") return this.#answerRepeat(idempotencyKey, request, claim.entry);
    this.#inFlightKeys.add(idempotencyKey);
    try {
      return { transaction: await this.#execute(request, claim.entryId), replayed: false };
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
    if (!entry.rawTransaction) throw new Error(`journal entry ${entry.id} holds key ${key} without a transaction`);
    return { transaction: Transaction.from(entry.rawTransaction), replayed: true };
  }

  async #execute(request: TransferRequest, claimedEntryId: number | undefined): Promise<Transaction> {
    const { ledger, journal } = this.#options;
    let attempt: TransferAttempt | undefined;
    try {
      ledger.assertTokensAvailable(request.units);
      const data = encodeTransfer(request.recipient, request.units);
      const gasLimit = await this.#simulate(data);
      const reservation = ledger.reserve(request.units, gasLimit * ledger.snapshot.maxFeePerGas);
      attempt = { request, data, gasLimit, reservation, entryId: claimedEntryId };
      return await this.#sendWithFreshNonceOnRefusal(attempt);
    } catch (error) {
      const mayBeOnChain = error instanceof BroadcastOutcomeUnknownError;
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

  async #sendWithFreshNonceOnRefusal(attempt: TransferAttempt): Promise<Transaction> {
    const send = (nonce: number) => this.#signAndBroadcast(attempt, nonce);
    try {
      return await this.#nonces.useNext(send);
    } catch (error) {
      // The node refused the nonce, so nothing was broadcast: another sender used the key. The sequence
      // has been re-read from the chain; one more try with a fresh nonce is safe.
      if (!isError(error, "NONCE_EXPIRED") && !isError(error, "REPLACEMENT_UNDERPRICED")) throw error;
      return await this.#nonces.useNext(send);
    }
  }

  async #signAndBroadcast(attempt: TransferAttempt, nonce: number): Promise<Transaction> {
    const { chain, journal, ledger } = this.#options;
    const transaction = this.#sign(attempt, nonce);
    const entryId = journal.recordSigned(attempt.entryId, attempt.request, {
      nonce,
      hash: transaction.hash as string,
      rawTransaction: transaction.serialized,
    });
    attempt.entryId = entryId;
    ledger.assignNonce(attempt.reservation, nonce);
    this.#inFlightEntries.add(entryId);
    try {
      await this.#reachFaultPoint("after-sign");
      try {
        await chain.provider.send("eth_sendRawTransaction", [transaction.serialized]);
      } catch (error) {
        if (isAlreadyKnown(error)) {
          // The node holds it already: success.
        } else if (isSurelyRejected(error)) {
          journal.recordRejected(entryId);
          ledger.release(attempt.reservation, nonce);
          ledger.reserveAgain(attempt.reservation);
          throw error;
        } else {
          throw new BroadcastOutcomeUnknownError(transaction.hash as string, error);
        }
      }
      await this.#reachFaultPoint("after-broadcast");
      journal.recordAccepted(entryId);
      return transaction;
    } finally {
      this.#inFlightEntries.delete(entryId);
    }
  }

  #sign(attempt: TransferAttempt, nonce: number): Transaction {
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
    transaction.signature = chain.wallet.signingKey.sign(transaction.unsignedHash);
    return transaction;
  }

  #reachFaultPoint(point: FaultPoint): Promise<void> {
    return this.#options.reachFaultPoint?.(point) ?? Promise.resolve();
  }
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
