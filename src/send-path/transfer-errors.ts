/**
 * What a failure to send answers the client: the service's own errors as they are, the journal's and the
 * node's in the service's codes, each saying whether anything may have been sent.
 */
import { type ErrorCode, ERROR_CODES, ServiceError } from "../errors.js";
import { JournalOutcomeUnknownError, JournalUnavailableError, PayoutItemsTakenError } from "../journal/transfer-journal.js";
import { classifyChainFailure } from "../node/ethers-errors.js";
import { signerRefusalAnswer } from "./signer-refusal.js";
import { BroadcastRefusedError, RefusalUnrecordedError } from "./transfer-submitter.js";

// The HTTP status a recorded refusal's code answers with (a code of another version: a 417).
export function statusOf(code: string): number {
  return ERROR_CODES[asErrorCode(code)].statusCode;
}

/** A recorded refusal's code as this version knows it (a code of another version: UNKNOWN_ERROR). */
export function asErrorCode(code: string): ErrorCode {
  return code in ERROR_CODES ? (code as ErrorCode) : "UNKNOWN_ERROR";
}

/** The error a client is answered with for `error`, met while sending. */
export function asServiceError(error: unknown): unknown {
  if (error instanceof ServiceError) return error;
  if (error instanceof JournalUnavailableError) {
    return new ServiceError("JOURNAL_UNAVAILABLE", "the transfer journal cannot record transfers (see the service's log); nothing was sent. Retry later.");
  }
  if (error instanceof JournalOutcomeUnknownError) {
    return new ServiceError(
      "TRANSFER_OUTCOME_UNKNOWN",
      `the transfer journal's database did not confirm the record of transaction ${error.hash}: if it was recorded, it is sent. Retry with the same Idempotency-Key, or look ${error.hash} up (GET /transactions/${error.hash}) before sending it again.`,
    );
  }
  if (error instanceof RefusalUnrecordedError) {
    return new ServiceError(
      "TRANSFER_OUTCOME_UNKNOWN",
      `the node refused transaction ${error.hash}, but the transfer journal did not confirm the refusal's record (see the service's log): its signed bytes may be on record, and then the restarted service (or the next leader) sends them again. Retry with the same Idempotency-Key after the restart, or look ${error.hash} up (GET /transactions/${error.hash}) before sending it again.`,
    );
  }
  if (error instanceof PayoutItemsTakenError) {
    return new ServiceError("PAYOUT_ITEM_IN_FLIGHT", `another request took payout item ids ${error.itemIds.join(", ")} while this one was checked; nothing was sent. Retry with the same Idempotency-Key.`);
  }
  const refusal = signerRefusalAnswer(error);
  if (refusal) return refusal;
  if (error instanceof BroadcastRefusedError) return new ServiceError(asErrorCode(error.refusal.code), error.refusal.message, { cause: error });
  const failure = classifyChainFailure(error);
  return failure ? new ServiceError(failure.code, failure.message) : error;
}
