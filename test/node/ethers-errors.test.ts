/** Error translation, fed with errors built by ethers' own constructors so the shapes are real. */
import { AbiCoder, makeError } from "ethers";
import { describe, expect, it } from "vitest";
import { ERC20_INTERFACE } from "../../src/node/erc20.js";
import { classifyChainFailure } from "../../src/node/ethers-errors.js";

const SECRET_URL = "https://user:hunter2@node.example/v3/secret-api-key";

describe("classifyChainFailure", () => {
  it("names the revert reason of a require()", () => {
    const data = `0x08c379a0${AbiCoder.defaultAbiCoder().encode(["string"], ["DemoToken: transfers are frozen"]).slice(2)}`;
    const error = AbiCoder.getBuiltinCallException("estimateGas", { to: null, data: "0x" }, data);
    expect(classifyChainFailure(error)).toEqual({ code: "CALL_EXCEPTION", message: "the token contract would revert the transfer: DemoToken: transfers are frozen" });
  });

  it("decodes OpenZeppelin's custom errors", () => {
    const data = ERC20_INTERFACE.encodeErrorResult("ERC20InsufficientBalance", ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8", 1n, 2n]);
    const error = AbiCoder.getBuiltinCallException("estimateGas", { to: null, data: "0x" }, data);
    expect(classifyChainFailure(error)?.message).toContain("ERC20InsufficientBalance(0x70997970C51812dc3A010C7d01b50e0d17dc79C8, 1, 2)");
  });

  it.each([
    ["INSUFFICIENT_FUNDS", makeError("insufficient funds", "INSUFFICIENT_FUNDS", { transaction: {} })],
    ["NONCE_EXPIRED", makeError("nonce has already been used", "NONCE_EXPIRED", { transaction: {} })],
    ["REPLACEMENT_UNDERPRICED", makeError("replacement fee too low", "REPLACEMENT_UNDERPRICED", { transaction: {} })],
    ["TIMEOUT", makeError(`timeout (request=${SECRET_URL})`, "TIMEOUT", { operation: "request.send", reason: "timeout" })],
    ["SERVER_ERROR", makeError(`server response 500 (request=${SECRET_URL})`, "SERVER_ERROR", { request: {} as never })],
    ["NETWORK_ERROR", makeError(`could not detect network (${SECRET_URL})`, "NETWORK_ERROR", { event: "x" })],
    ["UNKNOWN_ERROR", makeError("could not coalesce error", "UNKNOWN_ERROR", { error: { message: "something new went wrong" } })],
    ["FEE_REFUSED", makeError("could not coalesce error", "UNKNOWN_ERROR", { error: { message: "max fee per gas less than block base fee" } })],
    ["NODE_POOL_FULL", makeError("could not coalesce error", "UNKNOWN_ERROR", { error: { message: "txpool is full" } })],
  ] as const)("gives %s, and never ethers' text", (code, error) => {
    const failure = classifyChainFailure(error);
    expect(failure?.code).toBe(code);
    expect(failure?.message).not.toContain("hunter2");
    expect(failure?.message).not.toContain("secret-api-key");
  });

  it("treats socket errors from the fetch layer as NETWORK_ERROR", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8545"), { code: "ECONNREFUSED" });
    expect(classifyChainFailure(refused)?.code).toBe("NETWORK_ERROR");
  });

  it("quotes the node's refusal, bounded and printable", () => {
    const error = makeError("could not coalesce error", "UNKNOWN_ERROR", { error: { message: `unheard of\u0000${"x".repeat(500)}` } });
    const message = classifyChainFailure(error)?.message ?? "";
    expect(message).toContain("unheard of");
    expect(message).not.toContain("\u0000");
    expect(message.length).toBeLessThan(260);
  });

  it("leaves errors that are not chain failures alone", () => {
    expect(classifyChainFailure(new TypeError("bug"))).toBeUndefined();
  });
});
