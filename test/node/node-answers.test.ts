/**
 * The one table of node answers, fed with the messages each implementation really sends (read from their
 * sources; anvil's and Hardhat's are also produced live by the end-to-end tests), wrapped the way ethers v6
 * wraps a JSON-RPC error, so the shapes are real.
 */
import { AbiCoder, makeError } from "ethers";
import { describe, expect, it } from "vitest";
import { type NodeAnswerMeaning, isNodeError, provesNotTaken, readNodeAnswer } from "../../src/node/node-answers.js";

// What ethers' JsonRpcProvider throws for a JSON-RPC error of eth_sendRawTransaction it cannot classify,
// and for one it can (the RPC error then sits in info.error).
const unclassified = (code: number, message: string, data?: string) =>
  makeError("could not coalesce error", "UNKNOWN_ERROR", { error: { code, message, data }, payload: { method: "eth_sendRawTransaction", params: [], id: 1, jsonrpc: "2.0" } });
const classified = (code: number, message: string) => makeError("nonce has already been used", "NONCE_EXPIRED", { transaction: {}, info: { error: { code, message } } });

const REAL_MESSAGES: [implementation: string, message: string, meaning: NodeAnswerMeaning][] = [
  ["geth", "already known", "already-known"],
  ["geth (older)", "known transaction: 5e0e2d3f", "already-known"],
  ["Besu", "Known transaction", "already-known"],
  ["Hardhat", "Known transaction: 0x5e0e2d3f0b6b8a7c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c", "already-known"],
  ["anvil", "transaction already imported", "already-known"],
  ["Nethermind", "AlreadyKnown", "already-known"],
  ["zkSync Era", "known transaction. transaction with hash 0xabc is already in the system", "already-known"],
  ["geth", "nonce too low: address 0x70997970C51812dc3A010C7d01b50e0d17dc79C8, tx: 5 state: 7", "nonce-too-low"],
  ["Besu", "Nonce too low", "nonce-too-low"],
  ["Hardhat", "Nonce too low. Expected nonce to be 10 but got 8.", "nonce-too-low"],
  ["Hardhat (pool)", "Transaction nonce too low. Expected nonce to be at least 10 but got 8.", "nonce-too-low"],
  ["Nethermind", "OldNonce, Current nonce: 10, nonce of rejected tx: 8", "nonce-too-low"],
  ["Arbitrum", "invalid transaction nonce", "nonce-too-low"],
  ["ganache", "the tx doesn't have the correct nonce. account has nonce of: 3 tx has nonce of: 1", "nonce-too-low"],
  ["ganache (strict)", "the tx doesn't have the correct nonce. account has nonce of: 3 tx has nonce of: 5", "nonce-too-high"],
  ["Hardhat", "Nonce too high. Expected nonce to be 8 but got 9. Note that transactions can't be queued when automining.", "nonce-too-high"],
  ["geth / Arbitrum", "nonce too high", "nonce-too-high"],
  ["Besu", "Transaction nonce is too distant from current sender nonce", "nonce-too-high"],
  ["Nethermind", "NonceGap, Future nonce. Expected nonce: 8", "nonce-too-high"],
  ["zkSync Era", "nonce too high. allowed nonce range: 8 - 58, actual: 70", "nonce-too-high"],
  ["geth / anvil", "replacement transaction underpriced", "replacement-underpriced"],
  ["Hardhat", "Replacement transaction underpriced. A gasPrice/maxFeePerGas of at least 2000000000 is necessary to replace the existing transaction with nonce 3.", "replacement-underpriced"],
  ["reth", "[0xabc]: insufficient gas price to replace existing transaction.", "replacement-underpriced"],
  ["Nethermind", "OwnNonceAlreadyUsed", "replacement-underpriced"],
  ["geth", "insufficient funds for gas * price + value: address 0x70997970C51812dc3A010C7d01b50e0d17dc79C8 have 0 want 1000", "insufficient-funds"],
  ["anvil", "Insufficient funds for gas * price + value", "insufficient-funds"],
  ["Besu", "Upfront cost exceeds account balance", "insufficient-funds"],
  ["Hardhat", "Sender doesn't have enough funds to send tx. The max upfront cost is: 100 and the sender's balance is: 0.", "insufficient-funds"],
  ["Nethermind", "InsufficientFunds, Account balance: 0, cumulative cost: 100", "insufficient-funds"],
  ["Arbitrum", "not enough funds for gas", "insufficient-funds"],
  ["geth / anvil / Arbitrum", "max fee per gas less than block base fee: address 0x70997970C51812dc3A010C7d01b50e0d17dc79C8, maxFeePerGas: 1 baseFee: 7", "fee-cap-below-base-fee"],
  ["Besu", "Gas price below current base fee", "fee-cap-below-base-fee"],
  ["Hardhat", "Transaction maxFeePerGas (1) is too low for the next block, which has a baseFeePerGas of 7", "fee-cap-below-base-fee"],
  ["Nethermind", "FeeTooLow, MaxFeePerGas too low. MaxFeePerGas: 1, BaseFee: 7, MaxPriorityFeePerGas:1, Block number: 100", "fee-cap-below-base-fee"],
  ["geth / anvil", "max priority fee per gas higher than max fee per gas", "tip-above-fee-cap"],
  ["Besu", "Max priority fee per gas exceeds max fee per gas", "tip-above-fee-cap"],
  ["geth", "transaction underpriced: tip needed 1000000000, tip permitted 1", "underpriced"],
  ["Besu", "Gas price below configured minimum gas price", "underpriced"],
  ["Nethermind", "FeeTooLow", "underpriced"],
  ["Arbitrum", "gas price too low", "underpriced"],
  // Also ganache's answer to bytes it already holds: the submitter then asks whether the node has the hash.
  ["ganache", "transaction underpriced", "underpriced"],
  ["geth", "intrinsic gas too low: have 20000, want 21000", "intrinsic-gas-too-low"],
  ["Besu", "Intrinsic gas exceeds gas limit", "intrinsic-gas-too-low"],
  ["zkSync Era", "Not enough gas for transaction validation", "intrinsic-gas-too-low"],
  ["geth / anvil", "exceeds block gas limit", "exceeds-block-gas-limit"],
  ["Besu", "Transaction gas limit exceeds block gas limit", "exceeds-block-gas-limit"],
  ["Hardhat", "Transaction gas limit is 40000000 and exceeds block gas limit of 30000000", "exceeds-block-gas-limit"],
  ["Nethermind", "GasLimitExceeded, Gas limit: 30000000, gas limit of rejected tx: 40000000", "exceeds-block-gas-limit"],
  ["geth / Erigon", "txpool is full", "pool-full"],
  ["Arbitrum", "sequencer pending tx pool full, please try again", "pool-full"],
  ["Nethermind", "FeeTooLowToCompete", "pool-full"],
  ["geth", "tx fee (1.50 ether) exceeds the configured cap (1.00 ether)", "fee-above-node-cap"],
  ["Besu", "Transaction fee cap exceeded", "fee-above-node-cap"],
  ["geth", "invalid sender", "invalid-transaction"],
  ["Besu", "Invalid signature", "invalid-transaction"],
  ["geth", "only replay-protected (EIP-155) transactions allowed over RPC", "invalid-transaction"],
  ["Infura", "project ID request rate exceeded", "rate-limited"],
  ["Alchemy", "Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message.", "rate-limited"],
  ["geth", "the method eth_sendRawTransaction does not exist/is not available", "method-not-supported"],
  ["Hardhat", "Method eth_foo is not supported", "method-not-supported"],
  ["Besu", "Method not enabled", "method-not-supported"],
];

describe("readNodeAnswer: one meaning for every implementation's wording", () => {
  it.each(REAL_MESSAGES)("%s: %j means %s", (_implementation, message, meaning) => {
    expect(readNodeAnswer(unclassified(-32000, message)).meaning).toBe(meaning);
  });

  it("reads the RPC error where ethers files it under info.error", () => {
    expect(readNodeAnswer(classified(-32000, "nonce too low")).meaning).toBe("nonce-too-low");
  });

  it("reads the meaning from the JSON-RPC code when the text says nothing", () => {
    expect(readNodeAnswer(unclassified(-32005, "busy")).meaning).toBe("rate-limited");
    expect(readNodeAnswer(unclassified(-32601, "nope")).meaning).toBe("method-not-supported");
  });

  it("Besu's -32005 for a gas limit above the block's is not a rate limit", () => {
    expect(readNodeAnswer(unclassified(-32005, "Transaction gas limit exceeds block gas limit")).meaning).toBe("exceeds-block-gas-limit");
  });

  it("an error it does not know is unrecognised, never a refusal", () => {
    for (const message of ["Internal error", "something went wrong", "upstream connect error"]) {
      const answer = readNodeAnswer(unclassified(-32603, message));
      expect(answer.meaning).toBe("unrecognised");
      expect(provesNotTaken(answer.meaning)).toBe(false);
    }
  });

  it("an unknown transaction is not 'known'", () => {
    expect(readNodeAnswer(unclassified(-32000, "unknown transaction")).meaning).toBe("unrecognised");
  });

  it("transport faults: time-outs, resets and HTTP errors are 'no answer'; a refused connection reached nothing", () => {
    expect(readNodeAnswer(makeError("timeout", "TIMEOUT", { operation: "request.send", reason: "timeout" })).meaning).toBe("no-answer");
    expect(readNodeAnswer(makeError("server response 502", "SERVER_ERROR", { request: {} as never })).meaning).toBe("no-answer");
    expect(readNodeAnswer(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })).meaning).toBe("no-answer");
    expect(readNodeAnswer(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })).meaning).toBe("connection-refused");
    // A gateway's or node's time-out in JSON-RPC words is slowness too, never a refusal.
    for (const words of ["request timed out", "upstream request timeout", "execution aborted (timeout = 5s)", "context deadline exceeded"]) {
      expect(readNodeAnswer(unclassified(-32603, words)).meaning).toBe("no-answer");
    }
    expect(provesNotTaken("no-answer")).toBe(false);
    expect(provesNotTaken("connection-refused")).toBe(true);
  });

  it("HTTP 429 that outlasted the transport's own retries is a rate limit", () => {
    const error = makeError("server response 429", "SERVER_ERROR", { request: {} as never, response: { statusCode: 429 } as never });
    expect(readNodeAnswer(error).meaning).toBe("rate-limited");
  });

  it("a reply cut short or garbled, or a request closed under way, is no answer (the node may have got it)", () => {
    for (const code of ["UND_ERR_RES_CONTENT_LENGTH_MISMATCH", "UND_ERR_SOCKET", "UND_ERR_CLOSED", "HPE_INVALID_EOF_STATE", "ECONNRESET"]) {
      const error = Object.assign(new Error("cut"), { code });
      expect(readNodeAnswer(error).meaning).toBe("no-answer");
      expect(isNodeError(error)).toBe(true);
    }
  });

  it("a revert in simulation", () => {
    const error = AbiCoder.getBuiltinCallException("estimateGas", { to: null, data: "0x" }, "0x");
    expect(readNodeAnswer(error).meaning).toBe("reverted");
  });

  it("keeps the node's words printable and short", () => {
    const { nodeMessage } = readNodeAnswer(unclassified(-32000, `txpool is full\u0000${"x".repeat(500)}`));
    expect(nodeMessage).toMatch(/^txpool is full/);
    expect(nodeMessage).not.toContain("\u0000");
    expect(nodeMessage?.length).toBeLessThanOrEqual(200);
  });
});
