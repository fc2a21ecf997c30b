/** Translates what ethers and the network throw into the service's error codes, with messages safe to show. */
import { isError } from "ethers";
import { ServiceError, type TransferFailureCode } from "../errors.js";
import { ERC20_INTERFACE } from "./erc20.js";

/** A failure reported by the node or the network, already classified. */
export interface ChainFailure {
  code: TransferFailureCode;
  message: string;
}

// Node's socket errors arrive untranslated from ethers' fetch layer.
const SOCKET_ERROR_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ETIMEDOUT", "UND_ERR_SOCKET"]);

/**
 * Classifies an error thrown while talking to the node. Returns undefined for anything that is not a
 * chain or network failure (a bug in the service), which the caller must let through as an internal error.
 * Messages never quote ethers' own text, which embeds request URLs and payloads.
 */
export function classifyChainFailure(error: unknown): ChainFailure | undefined {
  if (isError(error, "CALL_EXCEPTION")) {
    return { code: "CALL_EXCEPTION", message: `the token contract would revert the transfer: ${describeRevert(error)}` };
  }
  if (isError(error, "INSUFFICIENT_FUNDS")) {
    return { code: "INSUFFICIENT_FUNDS", message: "the hot wallet has too little ETH to pay for gas" };
  }
  if (isError(error, "NONCE_EXPIRED")) {
    return { code: "NONCE_EXPIRED", message: "the node refused the nonce as already used; the service resynchronises it from the chain" };
  }
  if (isError(error, "REPLACEMENT_UNDERPRICED")) {
    return { code: "REPLACEMENT_UNDERPRICED", message: "a pending transaction with the same nonce pays a higher fee; the service resynchronises its nonce" };
  }
  if (isError(error, "TRANSACTION_REPLACED")) {
    return { code: "TRANSACTION_REPLACED", message: "the transaction was replaced by another with the same nonce" };
  }
  if (isError(error, "TIMEOUT")) {
    return { code: "TIMEOUT", message: "the Ethereum node did not answer in time" };
  }
  if (isError(error, "SERVER_ERROR")) {
    return { code: "SERVER_ERROR", message: "the Ethereum node answered with an HTTP error" };
  }
  if (isError(error, "NETWORK_ERROR") || isSocketError(error)) {
    return { code: "NETWORK_ERROR", message: "the Ethereum node could not be reached" };
  }
  if (isError(error, "UNKNOWN_ERROR") || isError(error, "UNSUPPORTED_OPERATION") || isError(error, "BAD_DATA")) {
    const nodeMessage = quoteNodeMessage(error);
    return { code: "UNKNOWN_ERROR", message: nodeMessage ? `the node refused the request: ${nodeMessage}` : "the node refused the request" };
  }
  return undefined;
}

function isSocketError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && SOCKET_ERROR_CODES.has(code);
}

function describeRevert(error: { reason: string | null; data: string | null }): string {
  if (error.reason) return error.reason;
  if (error.data) {
    const decoded = ERC20_INTERFACE.parseError(error.data);
    if (decoded) return `${decoded.name}(${decoded.args.map(String).join(", ")})`;
  }
  return "no reason given";
}

// The node's own JSON-RPC error text, such as "max fee per gas less than block base fee": short,
// printable, and never containing the URL, which lives only in ethers' wrapper around it.
function quoteNodeMessage(error: { error?: unknown }): string | undefined {
  const message = (error.error as { message?: unknown } | undefined)?.message;
  if (typeof message !== "string") return undefined;
  return message.replace(/[^\x20-\x7e]/g, "").slice(0, 200);
}

/**
 * For reads (lookups, the wallet report): a chain or network failure becomes NODE_UNAVAILABLE (503); any
 * other error is returned as it is, to surface as an internal error.
 */
export function asNodeUnavailable(error: unknown): unknown {
  const failure = classifyChainFailure(error);
  return failure ? new ServiceError("NODE_UNAVAILABLE", `${failure.message}; try again`) : error;
}
