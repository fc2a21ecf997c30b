/** Tells a broadcast the node surely refused from one whose fate is unknown. */

/**
 * A broadcast whose answer was lost (time-out, reset, HTTP error): the node may hold the transaction. Its
 * nonce stays taken and the journal keeps the signed bytes, to be sent again, never signed anew.
 */
export class BroadcastOutcomeUnknownError extends Error {
  override name = "BroadcastOutcomeUnknownError";

  constructor(
    readonly hash: string,
    override readonly cause: unknown,
  ) {
    super(`broadcast of ${hash} got no answer`);
  }
}

// ethers codes that mean the node answered the broadcast with a JSON-RPC error.
const NODE_REFUSALS = new Set(["INSUFFICIENT_FUNDS", "NONCE_EXPIRED", "REPLACEMENT_UNDERPRICED", "UNKNOWN_ERROR", "CALL_EXCEPTION", "UNSUPPORTED_OPERATION"]);

/** True when the node answered with a refusal, or the connection was refused: nothing reached the pool. */
export function isSurelyRejected(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ECONNREFUSED" || (typeof code === "string" && NODE_REFUSALS.has(code));
}

/** The node already holds this exact transaction: sending it again is success, not failure. */
export function isAlreadyKnown(error: unknown): boolean {
  const message = (error as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof message === "string" && /already known|known transaction|already imported|already exists/i.test(message);
}
