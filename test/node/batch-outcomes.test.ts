/** What a batch's answers say about its endpoint: any call of it counts, not only the first. */
import type { JsonRpcResult } from "ethers";
import { describe, expect, it } from "vitest";
import { faultOf, lacksBlock } from "../../src/node/rpc-endpoint.js";

const ok = (id: number): JsonRpcResult => ({ id, result: "0x1" });
// An error answer, which ethers' result type does not describe.
const failed = (id: number, message: string, code = -32000) => ({ id, error: { code, message } }) as unknown as JsonRpcResult;

describe("a batch's outcome", () => {
  it("is the endpoint's fault when any call was rate limited or timed out; a call's own error is not", () => {
    expect(faultOf({ results: [ok(1), failed(2, "Too Many Requests", 429)] })).toBe("rate-limited");
    expect(faultOf({ results: [ok(1), failed(2, "request timed out")] })).toBe("time-out");
    expect(faultOf({ results: [ok(1), failed(2, "execution reverted")] })).toBeUndefined();
    expect(faultOf({ results: [ok(1), ok(2)] })).toBeUndefined();
  });

  it("lacks the block when any call says so", () => {
    expect(lacksBlock({ results: [ok(1), failed(2, "header not found")] })).toBe(true);
    expect(lacksBlock({ results: [ok(1), failed(2, "execution reverted")] })).toBe(false);
    expect(lacksBlock({ thrown: new Error("header not found") })).toBe(false);
  });
});
