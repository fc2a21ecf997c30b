/** The service's error codes, each with its HTTP status: the one place where a status is decided. */

export const ERROR_CODES = {
  INVALID_ADDRESS: { statusCode: 400, description: "toAddress is not a usable 20-byte address (bad checksum, zero address)" },
  INVALID_AMOUNT: { statusCode: 400, description: "amount is not a positive decimal the token can represent" },
  CONFLICTING_RECIPIENT: { statusCode: 400, description: "both toAddress and to were sent, with different values" },
  MISSING_RECIPIENT: { statusCode: 400, description: "neither toAddress nor to was sent" },
  INVALID_IDEMPOTENCY_KEY: { statusCode: 400, description: "the Idempotency-Key header is empty, too long or not printable ASCII" },
  AUTH_REQUIRED: { statusCode: 401, description: "no Authorization: Bearer <API key> header" },
  AUTH_INVALID: { statusCode: 401, description: "the API key is not one of API_KEYS" },
  AMOUNT_ABOVE_LIMIT: { statusCode: 403, description: "the amount is above MAX_TRANSFER_AMOUNT" },
  DAILY_CAP_EXCEEDED: { statusCode: 403, description: "the API key would exceed TRANSFER_CAP_PER_DAY within 24 h" },
  RECIPIENT_NOT_ALLOWED: { statusCode: 403, description: "the recipient is not in ALLOWED_RECIPIENTS" },
  ROUTE_NOT_FOUND: { statusCode: 404, description: "no such route" },
  TRANSACTION_NOT_FOUND: { statusCode: 404, description: "neither the node nor the journal knows this transaction" },
  IDEMPOTENCY_KEY_IN_FLIGHT: { statusCode: 409, description: "a request with this Idempotency-Key is still being processed" },
  IDEMPOTENCY_KEY_REUSED: { statusCode: 422, description: "this Idempotency-Key was used with a different request body" },
  INSUFFICIENT_TOKEN_BALANCE: { statusCode: 417, description: "the hot wallet holds fewer tokens than requested" },
  CALL_EXCEPTION: { statusCode: 417, description: "the token contract would revert the transfer; the message holds the reason" },
  INSUFFICIENT_FUNDS: { statusCode: 417, description: "the hot wallet has too little ETH to pay for gas" },
  NONCE_EXPIRED: { statusCode: 417, description: "the node refused the nonce as already used" },
  REPLACEMENT_UNDERPRICED: { statusCode: 417, description: "a pending transaction with the same nonce pays a higher fee" },
  TRANSACTION_REPLACED: { statusCode: 417, description: "the transaction was replaced by another with the same nonce" },
  NETWORK_ERROR: { statusCode: 417, description: "the node could not be reached while sending" },
  TIMEOUT: { statusCode: 417, description: "the node did not answer in time while sending" },
  SERVER_ERROR: { statusCode: 417, description: "the node answered with an HTTP error while sending" },
  UNKNOWN_ERROR: { statusCode: 417, description: "the node refused the transaction for another reason; the message quotes it" },
  RATE_LIMITED: { statusCode: 429, description: "too many requests for this API key; see Retry-After" },
  NOT_READY: { statusCode: 503, description: "a readiness check failed; the message names it" },
  NODE_UNAVAILABLE: { statusCode: 503, description: "the node could not be reached, timed out or failed during a lookup" },
  INTERNAL_ERROR: { statusCode: 500, description: "a fault inside the service; details are in its log" },
} as const satisfies Record<string, { statusCode: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes a failed send can carry; all answer 417. */
export type TransferFailureCode = {
  [Code in ErrorCode]: (typeof ERROR_CODES)[Code]["statusCode"] extends 417 ? Code : never;
}[ErrorCode];

/** An error whose code, status and message are safe to show to the client as they are. */
export class ServiceError extends Error {
  override name = "ServiceError";
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.statusCode = ERROR_CODES[code].statusCode;
  }
}
