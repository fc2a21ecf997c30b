/** token-transfer-client: the token transfer service's typed client (README.md). */
export { TransferServiceClient } from "./client.js";
export type { Answer, AwaitingApproval, ClientOptions, KeyedAnswer, LookupRecord, OperationName, PayoutRequest, TransactionStatus, TransferRecord, TransferRequest, WaitOptions } from "./client.js";
export { NoAnswerError, ServiceError, TransferNotPaidError, WaitTimeoutError, WebhookVerificationError } from "./errors.js";
export { type VerifyOptions, type WebhookEvent, verifyWebhook } from "./webhooks.js";
export type { ErrorReply, Operations, WebhookEvents } from "./api-types.js";
