/**
 * What may be tried again, as docs/api.md says it (its table of error codes). A transfer or a payout always
 * carries an Idempotency-Key, so its repeat answers what the first did and can never pay twice; a retry is
 * still made only where the service said, or the failure shows, that trying again can change the answer.
 */

/** Answers of a keyed POST (/transfer, /payouts) that say nothing was done and trying again may succeed. */
const RETRIED_WITH_THE_KEY = new Set([
  // 409: the first request with this key (or one of the batch's items) is still being sent.
  "IDEMPOTENCY_KEY_IN_FLIGHT",
  "PAYOUT_ITEM_IN_FLIGHT",
  // 429: over the window's requests; Retry-After says when.
  "RATE_LIMITED",
  // 503: nothing was sent, the key is unused (or, for the last two, the key answers what was done).
  "NETWORK_UNAVAILABLE",
  "PAYOUT_APPROVAL_PENDING",
  "NETWORK_ERROR",
  "TIMEOUT",
  "SERVER_ERROR",
  "NODE_RATE_LIMITED",
  "NO_LANE_AVAILABLE",
  "SIGNER_UNAVAILABLE",
  "TRANSFER_OUTCOME_UNKNOWN",
  "LEADER_UNAVAILABLE",
  // Not SIGNING_PAUSED nor JOURNAL_UNAVAILABLE, although the key is unused: they last until a person acts (an
  // admin's resume, a restart with the disk fixed), so the caller is told at once.
]);

/** Answers of a read (a lookup, a status, a list) worth trying again. */
const RETRIED_READS = new Set(["NODE_UNAVAILABLE", "RATE_LIMITED", "LEADER_UNAVAILABLE", "NETWORK_UNAVAILABLE", "TIMEOUT", "NETWORK_ERROR", "SERVER_ERROR"]);

export type RequestKind = "keyed" | "read" | "action";

/** Whether an answer with this status and code is tried again for a request of this kind. */
export function retriesAnswer(kind: RequestKind, statusCode: number, code: string | undefined): boolean {
  if (code === undefined) return kind === "read" && statusCode >= 502 && statusCode <= 504;
  if (kind === "keyed") return RETRIED_WITH_THE_KEY.has(code);
  if (kind === "read") return RETRIED_READS.has(code);
  // An operator's action (approve, cancel, resume, …) carries no key: tried again only where nothing was done.
  return code === "RATE_LIMITED";
}

/** Why a request got no answer: it never reached the service, or it may have, and what it did is unknown. */
export type ConnectionFailure = "not-reached" | "unknown-outcome";

const NOT_REACHED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH"]);

/** What a fetch failure says of a request: refused before a connection is "not reached"; anything else may have reached it. */
export function connectionFailureOf(error: unknown): ConnectionFailure {
  let cause: unknown = error;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && NOT_REACHED.has(code)) return "not-reached";
    cause = (cause as { cause?: unknown }).cause;
  }
  return "unknown-outcome";
}

/**
 * Whether a request without an answer is sent again: a keyed POST always (its key answers what the first
 * did), a read always, an action only when it never reached the service (it may have been done otherwise).
 */
export function retriesWithoutAnswer(kind: RequestKind, failure: ConnectionFailure): boolean {
  return kind !== "action" || failure === "not-reached";
}

/** How long to wait before attempt `attempt` (1 = the first retry): Retry-After when given, else doubling from 250 ms up to 5 s, jittered. */
export function retryDelayMs(attempt: number, retryAfterSeconds: number | undefined, random: () => number = Math.random): number {
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) return Math.min(retryAfterSeconds * 1000, 60_000);
  const ceiling = Math.min(250 * 2 ** (attempt - 1), 5_000);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
