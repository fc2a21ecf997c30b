/** What the client throws: the service's refusals, a request left without an answer, a wait that ended. */
import type { ErrorReply } from "./api-types.js";

/** The service answered with a refusal (4xx, 5xx): `code` is one of docs/api.md's error codes. */
export class ServiceError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly reply: ErrorReply;
  /** The Idempotency-Key the request carried (a transfer's or payout's), to look it up or repeat it later. */
  readonly idempotencyKey: string | undefined;

  constructor(reply: ErrorReply, idempotencyKey?: string) {
    super(`${reply.statusCode} ${reply.code}: ${reply.message}`);
    this.name = "ServiceError";
    this.statusCode = reply.statusCode;
    this.code = reply.code;
    this.reply = reply;
    this.idempotencyKey = idempotencyKey;
  }
}

/**
 * No answer came, after every retry allowed. For a transfer or a payout the outcome is not known: repeat it
 * with `idempotencyKey` (never without it, never another way), and its first answer comes back.
 */
export class NoAnswerError extends Error {
  readonly idempotencyKey: string | undefined;
  readonly attempts: number;

  constructor(message: string, attempts: number, idempotencyKey: string | undefined, cause: unknown) {
    super(message, { cause });
    this.name = "NoAnswerError";
    this.attempts = attempts;
    this.idempotencyKey = idempotencyKey;
  }
}

/** A transfer waited for ended without being paid: `state` (failed, cancelled, rejected, replaced) says how. */
export class TransferNotPaidError extends Error {
  readonly state: string;
  readonly status: unknown;

  constructor(hash: string, state: string, status: unknown) {
    super(`transfer ${hash} ended ${state}: it was not paid`);
    this.name = "TransferNotPaidError";
    this.state = state;
    this.status = status;
  }
}

/** A wait ran out of time; the transfer goes on (the service still owns it): wait again, or follow its webhooks. */
export class WaitTimeoutError extends Error {
  readonly lastStatus: unknown;

  constructor(message: string, lastStatus: unknown) {
    super(message);
    this.name = "WaitTimeoutError";
    this.lastStatus = lastStatus;
  }
}

/** A webhook delivery whose signature or timestamp did not check: do not act on it. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}
