/** Translates what the node and the network answered into the service's error codes, with messages safe to show. */
import { isError } from "ethers";
import { type ErrorCode, ServiceError } from "../errors.js";
import { ERC20_INTERFACE } from "./erc20.js";
import { type NodeAnswer, isNodeError, readNodeAnswer } from "./node-answers.js";

/** A failure reported by the node or the network, already classified. */
export interface ChainFailure {
  code: ErrorCode;
  message: string;
}

/**
 * Classifies an error thrown while talking to the node (by meaning, see node-answers.ts). Returns undefined
 * for anything that is not a chain or network failure (a bug in the service), which the caller must let
 * through as an internal error. Messages never quote ethers' own text, which embeds request URLs and payloads.
 */
export function classifyChainFailure(error: unknown): ChainFailure | undefined {
  if (!isNodeError(error)) return undefined;
  if (isError(error, "CALL_EXCEPTION")) {
    // ethers calls every error answer to eth_call or eth_estimateGas a call exception; only a revert is
    // one. A node's own fault ("Internal error", insufficient funds, a time-out) is read for what it is.
    const answer = error.info?.error ? readNodeAnswer({ error: error.info.error }) : undefined;
    if (answer && answer.meaning !== "reverted" && error.data == null) return describeNodeAnswer(answer, error);
    return { code: "CALL_EXCEPTION", message: `the token contract would revert the transfer: ${describeRevert(error)}` };
  }
  return describeNodeAnswer(readNodeAnswer(error), error);
}

/** The client-facing code and message of a node's answer. */
export function describeNodeAnswer({ meaning, nodeMessage }: NodeAnswer, error?: unknown): ChainFailure {
  const quoted = nodeMessage ? `: ${nodeMessage}` : "";
  switch (meaning) {
    case "reverted":
      return { code: "CALL_EXCEPTION", message: `the token contract would revert the transfer${quoted}` };
    case "insufficient-funds":
      return { code: "INSUFFICIENT_FUNDS", message: "the hot wallet has too little ETH to pay for gas" };
    case "nonce-too-low":
      return { code: "NONCE_EXPIRED", message: "the node refused the nonce as already used, again after resynchronising it from the chain" };
    case "replacement-underpriced":
      return { code: "REPLACEMENT_UNDERPRICED", message: "another transaction of the hot wallet with the same nonce waits in the node's pool and pays more" };
    case "fee-cap-below-base-fee":
    case "tip-above-fee-cap":
    case "underpriced":
    case "fee-above-node-cap":
      return { code: "FEE_REFUSED", message: `the node refused the transaction's fee${quoted}` };
    case "intrinsic-gas-too-low":
    case "exceeds-block-gas-limit":
      return { code: "GAS_LIMIT_REFUSED", message: `the node refused the transaction's gas limit${quoted}` };
    case "pool-full":
      return { code: "NODE_POOL_FULL", message: `the node's transaction pool is full${quoted}` };
    case "rate-limited":
      return { code: "NODE_RATE_LIMITED", message: "the Ethereum node's endpoint is rate limiting this service; retry shortly" };
    case "connection-refused":
      return { code: "NETWORK_ERROR", message: "the Ethereum node could not be reached" };
    case "no-answer":
      if (isError(error, "TIMEOUT") || /time/i.test(nodeMessage ?? "")) return { code: "TIMEOUT", message: "the Ethereum node did not answer in time" };
      if (isError(error, "SERVER_ERROR")) return { code: "SERVER_ERROR", message: "the Ethereum node answered with an HTTP error" };
      return { code: "NETWORK_ERROR", message: "the Ethereum node could not be reached" };
    case "already-known":
    case "nonce-too-high":
    case "method-not-supported":
    case "invalid-transaction":
    case "unrecognised":
      return { code: "UNKNOWN_ERROR", message: nodeMessage ? `the node refused the request: ${nodeMessage}` : "the node refused the request" };
  }
}

function describeRevert(error: { reason: string | null; data: string | null }): string {
  if (error.reason) return error.reason;
  if (error.data) {
    const decoded = ERC20_INTERFACE.parseError(error.data);
    if (decoded) return `${decoded.name}(${decoded.args.map(String).join(", ")})`;
  }
  return "no reason given";
}

/**
 * For reads (lookups, the wallet report): a chain or network failure becomes NODE_UNAVAILABLE (503); any
 * other error is returned as it is, to surface as an internal error.
 */
export function asNodeUnavailable(error: unknown): unknown {
  const failure = classifyChainFailure(error);
  return failure ? new ServiceError("NODE_UNAVAILABLE", `${failure.message}; try again`) : error;
}
