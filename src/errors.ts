/** The service's error codes, each with its HTTP status: the one place where a status is decided. */

export const ERROR_CODES = {
  INVALID_ADDRESS: { statusCode: 400, description: "toAddress is not a usable 20-byte address (bad checksum, zero address)" },
  INVALID_AMOUNT: { statusCode: 400, description: "amount is not a positive decimal the token can represent" },
  CONFLICTING_RECIPIENT: { statusCode: 400, description: "both toAddress and to were sent, with different values" },
  MISSING_RECIPIENT: { statusCode: 400, description: "neither toAddress nor to was sent" },
  UNKNOWN_NETWORK: { statusCode: 400, description: "network names no network this service pays on (a name from NETWORKS_FILE, or a chain id)" },
  UNKNOWN_TOKEN: { statusCode: 400, description: "token names no token of the network (a symbol from NETWORKS_FILE, or the token's address)" },
  INVALID_QUERY: { statusCode: 400, description: "a query parameter is not of the form the route documents (GET /transfers: since, until; GET /audit: a cursor of the other order)" },
  INVALID_IDEMPOTENCY_KEY: { statusCode: 400, description: "the Idempotency-Key header is empty, too long or not printable ASCII" },
  IDEMPOTENCY_KEY_REQUIRED: { statusCode: 400, description: "POST /payouts needs an Idempotency-Key: a batch pays many recipients, and only the key makes a retry safe" },
  INVALID_PAYOUT: {
    statusCode: 400,
    description: "the payout's items are not usable: none or too many, or an item (its index named) with a bad address, amount or id, or an id twice",
  },
  PAYOUTS_NOT_CONFIGURED: { statusCode: 400, description: "the network has no payout contract (PAYOUT_CONTRACT, or its payoutContract in NETWORKS_FILE), or the token is the native coin" },
  AUTH_REQUIRED: { statusCode: 401, description: "no Authorization: Bearer <API key> header" },
  AUTH_INVALID: { statusCode: 401, description: "the API key is not one of API_KEYS" },
  AMOUNT_ABOVE_LIMIT: { statusCode: 403, description: "the amount is above MAX_TRANSFER_AMOUNT" },
  DAILY_CAP_EXCEEDED: { statusCode: 403, description: "the API key would exceed TRANSFER_CAP_PER_DAY within 24 h" },
  RECIPIENT_NOT_ALLOWED: { statusCode: 403, description: "the recipient is not in ALLOWED_RECIPIENTS" },
  CANCEL_NOT_ALLOWED: { statusCode: 403, description: "only the API key that sent a transfer (or an admin key) may cancel or re-price it" },
  APPROVER_IS_REQUESTER: { statusCode: 403, description: "the API key that asked for a transfer may not approve or reject it: another admin key must (APPROVAL_ABOVE)" },
  FORBIDDEN_FOR_ROLE: { statusCode: 403, description: "the API key's role may not call this route (transfer, read or admin; see docs/api.md)" },
  DELIVERY_NOT_FOUND: { statusCode: 404, description: "no pending or failed webhook delivery has this id" },
  WEBHOOKS_NOT_CONFIGURED: { statusCode: 404, description: "WEBHOOK_URL is not set: there are no deliveries" },
  ROUTE_NOT_FOUND: { statusCode: 404, description: "no such route" },
  TRANSACTION_NOT_FOUND: { statusCode: 404, description: "neither the node nor the journal knows this transaction" },
  APPROVAL_NOT_FOUND: { statusCode: 404, description: "no transfer with this id ever waited for an approval (APPROVAL_ABOVE)" },
  PAYOUT_NOT_FOUND: { statusCode: 404, description: "no payout batch of this API key has this id (read and admin keys see every batch)" },
  IDEMPOTENCY_KEY_IN_FLIGHT: { statusCode: 409, description: "a request with this Idempotency-Key is still being processed" },
  ADDRESS_BOOK_ENTRY_EXISTS: { statusCode: 409, description: "the address is on the address book already: nothing was changed" },
  ADDRESS_BOOK_ENTRY_NOT_FOUND: { statusCode: 404, description: "the address is not on the address book: nothing was changed" },
  ADDRESS_BOOK_FULL: { statusCode: 429, description: "the address book holds its most entries (10,000): remove some before adding" },
  APPROVAL_DECIDED: { statusCode: 409, description: "the transfer was approved, rejected or expired already (the message says which): nothing more was done" },
  TRANSFER_AWAITING_APPROVAL: {
    statusCode: 409,
    description: "this Idempotency-Key's transfer waits for an admin's approval (it was above APPROVAL_ABOVE when asked for); nothing was sent. Repeat the request as it was made for its 202, or wait",
  },
  TRANSFER_ALREADY_MINED: { statusCode: 409, description: "the transfer was mined before it could be cancelled; see GET /transactions/:hash" },
  TRANSFER_NOT_PENDING: { statusCode: 409, description: "the transfer was never sent (refused) or its nonce went to another transaction: nothing to cancel" },
  TRANSFER_OUTCOME_UNKNOWN: {
    statusCode: 503,
    description:
      "the service cannot tell yet whether the transfer will be sent: the journal's shared database did not confirm its record (if it was recorded, it is sent), or the node refused it and the journal could not record the refusal (its signed bytes are sent again after a restart), or (several replicas) the leader got a transfer without an Idempotency-Key and stopped answering; retry with the same Idempotency-Key, or look the transfer up, before sending it again",
  },
  NETWORK_NOT_SERVED: {
    statusCode: 409,
    description: "the transfer was made on a network this deployment no longer pays on (not in NETWORKS_FILE): it is settled, and GET /transfers holds its record",
  },
  PAYOUT_ITEMS_DUPLICATE: {
    statusCode: 409,
    description: "every item of the batch has an id an earlier batch of this API key holds (paid, or being paid): nothing was sent; the message names the batches",
  },
  PAYOUT_ITEM_ID_REUSED: {
    statusCode: 422,
    description: "an item's id is held by an earlier batch of this API key that pays it to another recipient or another amount: nothing was sent; the message names the batch",
  },
  PAYOUT_ITEM_IN_FLIGHT: { statusCode: 409, description: "another request took one of the batch's item ids while this one was checked; nothing was sent, the Idempotency-Key is unused: retry" },
  TRANSFER_BEING_SENT: { statusCode: 409, description: "the transfer's first broadcast is under way: ask again in a moment (until the node answers it, it may yet be refused for good)" },
  REPRICE_AT_FEE_CAP: {
    statusCode: 409,
    description: "a re-pricing would need fees above MAX_FEE_PER_GAS or MAX_PRIORITY_FEE_PER_GAS, or above 10 times the transfer's first fee cap (an admin may pass that ceiling with aboveCeiling=true), to replace the transfer's latest attempt",
  },
  REPRICE_NEEDS_ADMIN: { statusCode: 403, description: "the transfer was re-priced 3 times already, or the ceiling is to be passed: only an admin key may re-price it further" },
  CANCEL_AT_FEE_CAP: { statusCode: 409, description: "a cancel would need fees above MAX_FEE_PER_GAS or MAX_PRIORITY_FEE_PER_GAS to replace the transfer" },
  IDEMPOTENCY_KEY_REUSED: { statusCode: 422, description: "this Idempotency-Key was used with a different request body" },
  INSUFFICIENT_TOKEN_BALANCE: { statusCode: 417, description: "the hot wallet holds fewer tokens than requested" },
  CALL_EXCEPTION: { statusCode: 417, description: "the token contract would revert the transfer; the message holds the reason" },
  INSUFFICIENT_FUNDS: { statusCode: 417, description: "the hot wallet has too little ETH to pay for gas" },
  NONCE_EXPIRED: { statusCode: 417, description: "the node refused the nonce as already used" },
  REPLACEMENT_UNDERPRICED: { statusCode: 417, description: "a pending transaction with the same nonce pays a higher fee" },
  FEE_REFUSED: { statusCode: 417, description: "the node refused the transaction's fee (below the base fee or the pool's minimum, or above the node's fee cap)" },
  GAS_LIMIT_REFUSED: { statusCode: 417, description: "the node refused the transaction's gas limit (intrinsic gas too low, above the block gas limit)" },
  NODE_POOL_FULL: { statusCode: 417, description: "the node's transaction pool is full" },
  UNKNOWN_ERROR: { statusCode: 417, description: "the node refused the request for another reason; the message quotes it" },
  APPROVAL_REJECTED: { statusCode: 417, description: "an admin rejected the transfer, which waited for approval (APPROVAL_ABOVE): nothing of it was or will be sent" },
  APPROVAL_EXPIRED: { statusCode: 417, description: "no admin approved the transfer within APPROVAL_TTL_HOURS: nothing of it was or will be sent" },
  APPROVAL_NOT_SENT: {
    statusCode: 417,
    description: "the transfer was approved, but the node refused its transaction at its first broadcast: nothing of it was or will be sent; ask for it again with a new Idempotency-Key",
  },
  APPROVALS_FULL: {
    statusCode: 429,
    description: "as many transfers as the service keeps wait for an approval already (100 per API key, 1,000 in all): nothing was journaled and the Idempotency-Key is unused; retry once some are decided",
  },
  RATE_LIMITED: { statusCode: 429, description: "too many requests for this API key; see Retry-After" },
  NETWORK_ERROR: { statusCode: 503, description: "the node could not be reached before anything was sent; the Idempotency-Key is left unused, retry" },
  TIMEOUT: { statusCode: 503, description: "the node did not answer in time before anything was sent (slow is not refused); the Idempotency-Key is left unused, retry" },
  SERVER_ERROR: { statusCode: 503, description: "the node answered with an HTTP error before anything was sent; the Idempotency-Key is left unused, retry" },
  NODE_RATE_LIMITED: { statusCode: 503, description: "the node's endpoint rate limits the service even after retries with backoff; nothing was sent, retry later" },
  JOURNAL_UNAVAILABLE: { statusCode: 503, description: "the transfer journal cannot record (disk full, I/O error); nothing was sent, retry later" },
  SIGNER_UNAVAILABLE: {
    statusCode: 503,
    description: "the wallet's remote signer (AWS KMS, an HSM) did not sign: unreachable, throttled or refused; nothing was signed or sent, retry later",
  },
  PAUSE_CHANGED: {
    statusCode: 409,
    description: "POST /wallet/resume named another outflow than the pause's latest (one was reported after you looked): nothing was resumed; look again (GET /wallet) and resume naming it",
  },
  RESUME_NEEDS_SECOND_ADMIN: {
    statusCode: 403,
    description: "RESUME_NEEDS_SECOND_ADMIN: the admin (or another key of its holder) who asked for this resume may not confirm it; a second admin, another person, must",
  },
  SIGNING_PAUSED: {
    statusCode: 503,
    description:
      "the service stopped signing (PAUSE_ON_UNEXPECTED_OUTFLOW): a transaction or token transfer out of its wallet that it never made was seen; nothing was signed or sent and the Idempotency-Key is unused: retry once an admin resumed signing (POST /wallet/resume)",
  },
  NO_LANE_AVAILABLE: {
    statusCode: 503,
    description:
      "the wallet, or every wallet of the pool that could pay, is busy (twice MAX_IN_FLIGHT_PER_LANE not yet mined, none freed for TRANSFER_SLOT_WAIT_MS; in a pool also a transfer stuck or nonces jammed); nothing was sent, the key is unused: retry after Retry-After",
  },
  NETWORK_UNAVAILABLE: {
    statusCode: 503,
    description: "the network named (or the transfer's) has not been reached since the service started; nothing was sent and the Idempotency-Key is unused: retry later",
  },
  PAYOUT_APPROVAL_PENDING: {
    statusCode: 503,
    description:
      "the wallet's approval of the payout contract for this token (sent once, before its first payout) is not mined yet; nothing of the payout was sent and the Idempotency-Key is unused: retry after Retry-After",
  },
  NOT_READY: { statusCode: 503, description: "a readiness check failed; the message names it" },
  NODE_UNAVAILABLE: { statusCode: 503, description: "the node could not be reached, timed out or failed during a lookup" },
  LEADER_UNAVAILABLE: {
    statusCode: 503,
    description: "several replicas: no replica led for 10 s, or the leader stopped answering after it got the request; retry with the same Idempotency-Key",
  },
  INTERNAL_ERROR: { statusCode: 500, description: "a fault inside the service; details are in its log" },
} as const satisfies Record<string, { statusCode: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error whose code, status and message are safe to show to the client as they are. */
export class ServiceError extends Error {
  override name = "ServiceError";
  readonly statusCode: number;

  /** When to try again, sent as Retry-After: for a refusal that only says "not now". */
  readonly retryAfterSeconds: number | undefined;
  /** Logged with the refusal, never answered: words of a third party (a signer's SDK) that may name accounts or hosts. */
  readonly logDetail: string | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: ErrorOptions & { retryAfterSeconds?: number; logDetail?: string },
  ) {
    super(message, options);
    this.statusCode = ERROR_CODES[code].statusCode;
    this.retryAfterSeconds = options?.retryAfterSeconds;
    this.logDetail = options?.logDetail;
  }
}
