/**
 * What a node's error means, whatever implementation or gateway worded it: one table, by meaning. Every
 * decision about a broadcast (taken, refused for sure, try again, unknown) starts from here.
 *
 * The texts were read from the implementations' sources (geth's txpool and core errors, Erigon, Nethermind's
 * AcceptTxResult, Besu's RpcErrorType, reth, anvil, Hardhat/EDR, Arbitrum Nitro, zkSync Era) and from the
 * answers of hosted gateways; test/node/node-answers.test.ts holds one real message per implementation.
 */

/** What a node said about a request, by meaning. */
export type NodeAnswerMeaning =
  /** The node already holds this very transaction: it was taken. */
  | "already-known"
  /** The node's state has used this nonce (mined): this transaction can never be mined. */
  | "nonce-too-low"
  /** The node refuses a nonce above its next one (Hardhat automining, Nethermind, L2 sequencers): send the predecessors first. */
  | "nonce-too-high"
  /** Another transaction with this nonce waits in the node's pool and pays more. */
  | "replacement-underpriced"
  | "insufficient-funds"
  /** maxFeePerGas is below the base fee of the next block. */
  | "fee-cap-below-base-fee"
  | "tip-above-fee-cap"
  /** Below the pool's minimum price. */
  | "underpriced"
  | "intrinsic-gas-too-low"
  | "exceeds-block-gas-limit"
  | "pool-full"
  /** The node's own cap on one transaction's fee (geth's --rpc.txfeecap, 1 ether by default). */
  | "fee-above-node-cap"
  /** The endpoint refuses for load (HTTP 429, JSON-RPC -32005 "limit exceeded"): nothing was processed. */
  | "rate-limited"
  | "method-not-supported"
  /** Bad signature, wrong chain id, unsupported type: these bytes can never be taken. */
  | "invalid-transaction"
  /** The call reverts (simulation). */
  | "reverted"
  /** Time-out, reset connection, HTTP 5xx, gateway error: the request may or may not have been processed. */
  | "no-answer"
  /** The connection was refused: nothing reached the node. */
  | "connection-refused"
  /** An error this table does not know: assume nothing about it. */
  | "unrecognised";

/** A node's answer, classified; `nodeMessage` is the node's own words (printable, bounded), when it gave some. */
export interface NodeAnswer {
  meaning: NodeAnswerMeaning;
  nodeMessage?: string;
}

// Order matters: the more specific wording first ("replacement transaction underpriced" before
// "transaction underpriced", "exceeds block gas limit" before the -32005 rate-limit code).
const MESSAGE_MEANINGS: [RegExp, NodeAnswerMeaning][] = [
  // geth/Erigon/reth/anvil "already known", geth's older "known transaction", Besu "Known transaction",
  // Hardhat "Known transaction: 0x..", anvil "already imported", Nethermind "AlreadyKnown", zkSync "known transaction. transaction with hash .. is already in the system".
  [/already known|\bknown transaction|already imported|\bAlreadyKnown\b|is already in the system/i, "already-known"],
  // Besu "Transaction gas limit exceeds block gas limit", Hardhat "Transaction gas limit is X and exceeds block gas limit of Y",
  // geth "exceeds block gas limit", Nethermind "GasLimitExceeded".
  [/exceeds block gas limit|\bGasLimitExceeded\b/i, "exceeds-block-gas-limit"],
  // geth "nonce too low: address 0x.., tx: 5 state: 7", Besu "Nonce too low", Hardhat "Nonce too low. Expected nonce to be X but got Y."
  // and "Transaction nonce too low. Expected nonce to be at least X", Nethermind "OldNonce, Current nonce: ..",
  // Arbitrum "invalid transaction nonce", Avalanche "nonce too low: address .. current nonce (X) > tx nonce (Y)".
  [/nonce too low|\bOldNonce\b|invalid transaction nonce|too stale nonce/i, "nonce-too-low"],
  // Hardhat "Nonce too high. Expected nonce to be X but got Y. Note that transactions can't be queued when automining.",
  // geth/anvil/Arbitrum/zkSync "nonce too high", Besu "Nonce too high" and "Transaction nonce is too distant from current sender nonce",
  // Nethermind "NonceGap, Future nonce. Expected nonce: X".
  [/nonce too high|\bNonceGap\b|nonce is too distant/i, "nonce-too-high"],
  // geth/anvil "replacement transaction underpriced", Besu "Replacement transaction underpriced",
  // Hardhat "Replacement transaction underpriced. A gasPrice/maxFeePerGas of at least ..", reth "insufficient gas price to replace existing transaction",
  // Nethermind "OwnNonceAlreadyUsed" (another transaction of the same sender with this nonce waits in the pool).
  [/replacement transaction underpriced|insufficient gas price to replace|\bOwnNonceAlreadyUsed\b|another transaction with same nonce/i, "replacement-underpriced"],
  // geth "insufficient funds for gas * price + value: address .. have .. want ..", anvil "Insufficient funds for gas * price + value",
  // Besu "Upfront cost exceeds account balance", Hardhat "Sender doesn't have enough funds to send tx", Nethermind "InsufficientFunds",
  // Arbitrum "not enough funds for gas", zkSync "insufficient balance for transfer".
  [/insufficient funds|upfront cost exceeds account balance|doesn't have enough funds|\bInsufficientFunds\b|not enough funds for gas|insufficient balance for transfer/i, "insufficient-funds"],
  // geth/anvil/reth/Arbitrum/zkSync "max fee per gas less than block base fee", Besu "Gas price below current base fee",
  // Hardhat "Transaction maxFeePerGas (X) is too low for the next block, which has a baseFeePerGas of Y",
  // Nethermind "FeeTooLow, MaxFeePerGas too low. MaxFeePerGas: X, BaseFee: Y ..".
  [/fee per gas less than block base fee|below current base fee|maxFeePerGas \(\d+\) is too low for the next block|MaxFeePerGas too low/i, "fee-cap-below-base-fee"],
  // geth/anvil/zkSync "max priority fee per gas higher than max fee per gas", Besu "Max priority fee per gas exceeds max fee per gas".
  [/priority fee per gas (higher than|exceeds) max fee per gas|tip higher than fee cap/i, "tip-above-fee-cap"],
  // geth "tx fee (1.50 ether) exceeds the configured cap (1.00 ether)", Besu "Transaction fee cap exceeded".
  [/exceeds the configured cap|transaction fee cap exceeded/i, "fee-above-node-cap"],
  // geth/Erigon "txpool is full", Arbitrum "queue full" / "sequencer pending tx pool full, please try again",
  // Nethermind "FeeTooLowToCompete" (the pool is full of better-paying transactions), geth "account limit exceeded".
  [/txpool is full|pool full|queue full|\bFeeTooLowToCompete\b|account limit exceeded|transaction pool is full/i, "pool-full"],
  // geth "transaction underpriced" (below --txpool.pricelimit), Besu "Gas price below configured minimum gas price",
  // Nethermind "FeeTooLow", Arbitrum "gas price too low".
  [/transaction underpriced|below configured minimum gas price|\bFeeTooLow\b|gas price too low/i, "underpriced"],
  // geth "intrinsic gas too low: have X, want Y", Besu "Intrinsic gas exceeds gas limit", zkSync "Not enough gas for transaction validation".
  [/intrinsic gas too low|intrinsic gas exceeds gas limit|not enough gas for transaction validation/i, "intrinsic-gas-too-low"],
  // geth "invalid sender", Besu "Invalid signature" / "Wrong chainId", geth "transaction type not supported", "only replay-protected (EIP-155) transactions allowed".
  [/invalid sender|invalid signature|wrong chainid|invalid chain id|transaction type not supported|only replay-protected/i, "invalid-transaction"],
  // Infura "project ID request rate exceeded" (-32005), Alchemy "Your app has exceeded its compute units per second capacity",
  // QuickNode "request limit reached", generic "too many requests" / "rate limit".
  [/rate limit|rate exceeded|too many requests|request limit reached|exceeded its compute units|limit exceeded/i, "rate-limited"],
  // geth "the method eth_x does not exist/is not available", Besu "Method not found" / "Method not enabled", Hardhat "Method eth_x is not supported".
  [/does not exist\/is not available|method not found|method not enabled|method .* is not supported|unsupported method/i, "method-not-supported"],
  [/execution reverted|reverted/i, "reverted"],
  // A gateway's or a node's own time-out in JSON-RPC words (-32603 "request timed out", "upstream request
  // timeout", geth "execution aborted (timeout = 5s)", "context deadline exceeded"): slow, no refusal.
  [/\btimed? ?out\b|\btimeout\b|deadline exceeded/i, "no-answer"],
];

// JSON-RPC codes that carry the meaning by themselves, when the text matched nothing above.
const CODE_MEANINGS = new Map<number, NodeAnswerMeaning>([
  [-32601, "method-not-supported"],
  [-32005, "rate-limited"],
  [3, "reverted"],
]);

// ethers' own classification, for errors that carry no JSON-RPC error object.
const ETHERS_CODE_MEANINGS = new Map<string, NodeAnswerMeaning>([
  ["CALL_EXCEPTION", "reverted"],
  ["INSUFFICIENT_FUNDS", "insufficient-funds"],
  ["NONCE_EXPIRED", "nonce-too-low"],
  ["REPLACEMENT_UNDERPRICED", "replacement-underpriced"],
  ["TIMEOUT", "no-answer"],
  ["NETWORK_ERROR", "no-answer"],
]);

// Node's socket errors, and undici's, arrive untranslated from the transport (rpc-transport.ts): a reply cut
// short or garbled (its length, llhttp's HPE_ parse errors), a request aborted or its connection closed
// under it: the node may have got the request.
const NO_ANSWER_SOCKET_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ECONNABORTED",
  "UND_ERR_SOCKET",
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
  "UND_ERR_ABORTED",
  "UND_ERR_CLOSED",
  "UND_ERR_DESTROYED",
]);
const UNREACHABLE_SOCKET_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

// ganache "the tx doesn't have the correct nonce. account has nonce of: 3 tx has nonce of: 1": too low or
// too high by its two numbers.
function wrongNonceMeaning(text: string): NodeAnswerMeaning | undefined {
  const nonces = /account has nonce of: (\d+) tx has nonce of: (\d+)/i.exec(text);
  if (!nonces) return undefined;
  return Number(nonces[2]) < Number(nonces[1]) ? "nonce-too-low" : "nonce-too-high";
}

/** The JSON-RPC error object a node answered with, wherever ethers put it. */
function rpcErrorOf(error: unknown): { code?: unknown; message?: unknown; data?: unknown } | undefined {
  const candidate = error as { error?: unknown; info?: { error?: unknown } } | null;
  const rpc = candidate?.error ?? candidate?.info?.error;
  return rpc && typeof rpc === "object" ? (rpc as { code?: unknown; message?: unknown; data?: unknown }) : undefined;
}

/** Reads what an error thrown by a request to the node means. */
export function readNodeAnswer(error: unknown): NodeAnswer {
  const rpc = rpcErrorOf(error);
  if (rpc) {
    const text = [rpc.message, typeof rpc.data === "string" ? rpc.data : undefined].filter((part) => typeof part === "string").join(" ");
    const nodeMessage = printable(text);
    const byNonces = wrongNonceMeaning(text);
    if (byNonces) return { meaning: byNonces, nodeMessage };
    for (const [pattern, meaning] of MESSAGE_MEANINGS) if (pattern.test(text)) return { meaning, nodeMessage };
    const byCode = typeof rpc.code === "number" ? CODE_MEANINGS.get(rpc.code) : undefined;
    return { meaning: byCode ?? "unrecognised", nodeMessage };
  }
  const ethersCode = (error as { code?: unknown } | null)?.code;
  const byEthersCode = typeof ethersCode === "string" ? ETHERS_CODE_MEANINGS.get(ethersCode) : undefined;
  if (byEthersCode) return { meaning: byEthersCode };
  if (ethersCode === "SERVER_ERROR") {
    const status = httpStatusOf(error);
    // A lone endpoint's 429 was asked again already (rpc-transport.ts): what reaches here is its last refusal.
    return { meaning: status === 429 ? "rate-limited" : "no-answer" };
  }
  if (typeof ethersCode === "string" && UNREACHABLE_SOCKET_CODES.has(ethersCode)) return { meaning: "connection-refused" };
  if (typeof ethersCode === "string" && isNoAnswerCode(ethersCode)) return { meaning: "no-answer" };
  return { meaning: "unrecognised" };
}

/** The HTTP status of the reply a request error carries (SERVER_ERROR), if any. */
export function httpStatusOf(error: unknown): number | undefined {
  const status = (error as { response?: { statusCode?: unknown } } | null)?.response?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/**
 * The node's own words: the code and message of the JSON-RPC error object it answered with, never the text
 * ethers formats around it (which quotes the request's parameters); undefined when no node answered (a
 * time-out, a connection or HTTP failure).
 */
export function nodeWordsOf(error: unknown): { code: number | undefined; message: string } | undefined {
  const rpc = rpcErrorOf(error);
  if (!rpc) return undefined;
  return { code: typeof rpc.code === "number" ? rpc.code : undefined, message: typeof rpc.message === "string" ? rpc.message : "" };
}

/** Whether the node refused the request's parameters as such (JSON-RPC -32602): not an answer about the chain. */
export function isInvalidParams(error: unknown): boolean {
  return rpcErrorOf(error)?.code === -32602;
}

/** True for an error that came from the node or the network (not a bug of ours). */
export function isNodeError(error: unknown): boolean {
  if (rpcErrorOf(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return ETHERS_CODE_MEANINGS.has(code) || ["SERVER_ERROR", "BAD_DATA", "UNKNOWN_ERROR", "UNSUPPORTED_OPERATION"].includes(code) || UNREACHABLE_SOCKET_CODES.has(code) || isNoAnswerCode(code);
}

function isNoAnswerCode(code: string): boolean {
  return NO_ANSWER_SOCKET_CODES.has(code) || code.startsWith("HPE_");
}

/**
 * Whether a node's answer to the first broadcast of a transaction proves that these bytes were not taken
 * and never will be: the node validated them and said no. Anything else (no answer, an unknown error)
 * leaves the transaction possibly in some node's pool.
 */
export function provesNotTaken(meaning: NodeAnswerMeaning): boolean {
  switch (meaning) {
    case "nonce-too-low":
    case "nonce-too-high":
    case "replacement-underpriced":
    case "insufficient-funds":
    case "fee-cap-below-base-fee":
    case "tip-above-fee-cap":
    case "underpriced":
    case "intrinsic-gas-too-low":
    case "exceeds-block-gas-limit":
    case "pool-full":
    case "fee-above-node-cap":
    case "rate-limited":
    case "method-not-supported":
    case "invalid-transaction":
    case "connection-refused":
      return true;
    default:
      return false;
  }
}

// The node's own words are short and contain no URL.
function printable(text: string): string | undefined {
  const cleaned = text.replace(/[^\x20-\x7e]/g, "").trim().slice(0, 200);
  return cleaned || undefined;
}
