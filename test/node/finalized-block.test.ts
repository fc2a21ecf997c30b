/**
 * The finalized block as several endpoints (or a restarted node) show it: it never goes back; on a chain we
 * name, only the tag; elsewhere depth only once the node said in its own words, repeatedly, that it has no
 * tag. Errors are made as ethers makes them from a node's JSON-RPC error (its message quotes the request,
 * "finalized" included), so that what is classified is what a real provider throws.
 */
import { JsonRpcProvider } from "ethers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FinalizedBlockReader, NO_TAG_ANSWERS_BEFORE_DEPTH, NO_TAG_FOR_MS, finalityRuleOf } from "../../src/node/finalized-block.js";

afterEach(() => vi.useRealTimers());

/** The error ethers' provider throws for a node's JSON-RPC error answer to a read of the `finalized` block. */
function nodeAnswered(code: number, message: string): Error {
  const provider = new JsonRpcProvider("http://127.0.0.1:9", 1n, { staticNetwork: true });
  const error = provider.getRpcError({ method: "eth_getBlockByNumber", params: ["finalized", false], id: 1, jsonrpc: "2.0" }, { id: 1, error: { code, message } } as never);
  provider.destroy();
  return error;
}

/** A node that answers the `finalized` tag with each of `answers` in turn (an Error is thrown). */
function nodeAnswering(answers: ({ number: string } | null | Error)[]) {
  return {
    async send(): Promise<unknown> {
      const answer = answers.shift();
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
}

const RATE_LIMITED = () => nodeAnswered(-32005, "limit exceeded");
// geth before the merge; geth and op-geth after a restart answer "finalized block not found", which is no refusal of the tag.
const NO_TAG = () => nodeAnswered(-32000, "'finalized' tag not supported on pre-merge network");
const NOT_YET = () => nodeAnswered(-32000, "finalized block not found");

describe("the finalized block", () => {
  it("ethers' message for any error of a finalized read quotes the request: the classification must not read it", () => {
    expect(RATE_LIMITED().message).toMatch(/finalized/);
  });

  it("never moves down, and a null or a refusal of the tag after it was answered keeps the highest seen, not depth", async () => {
    const reader = new FinalizedBlockReader(nodeAnswering([{ number: "0x20" }, { number: "0x1a" }, null, NO_TAG(), NO_TAG(), NO_TAG(), NO_TAG(), { number: "0x21" }]), 64);
    expect(await reader.number(1000)).toBe(32);
    for (let read = 0; read < 6; read++) expect(await reader.number(1000)).toBe(32);
    expect(await reader.number(1000)).toBe(33);
    expect(reader.mode).toBe("tag");
  });

  it("a rate limit (HTTP 200, -32005) on the first reads is a fault of the moment, asked again, never a reason for depth", async () => {
    const reader = new FinalizedBlockReader(nodeAnswering([RATE_LIMITED(), RATE_LIMITED(), RATE_LIMITED(), RATE_LIMITED(), { number: "0x0" }]), 64);
    for (let read = 0; read < 4; read++) await expect(reader.number(1000)).rejects.toThrow(/limit exceeded/);
    expect(reader.mode).toBe("unknown");
    expect(await reader.number(1000)).toBe(0);
  });

  it("falls back to FINALITY_BLOCKS below the head on a chain it does not name only after the node said so in its own words, in a row and over a minute, and then does not ask again", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const told: string[] = [];
    const answers = [NO_TAG(), null, RATE_LIMITED(), nodeAnswered(-32602, "invalid argument 0: hex string without 0x prefix"), NO_TAG(), NO_TAG()];
    const reader = new FinalizedBlockReader(nodeAnswering(answers), 64, 31337n, (rule) => told.push(rule.kind));
    expect(await reader.number(100)).toBeNull();
    expect(await reader.number(100)).toBeNull();
    await expect(reader.number(100)).rejects.toThrow(/limit exceeded/);
    expect(await reader.number(100)).toBeNull();
    expect(NO_TAG_ANSWERS_BEFORE_DEPTH).toBe(3);
    // Three in a row within the minute: not yet.
    vi.advanceTimersByTime(NO_TAG_FOR_MS / 2);
    expect(await reader.number(100)).toBeNull();
    vi.advanceTimersByTime(NO_TAG_FOR_MS / 2);
    expect(await reader.number(100)).toBe(36);
    expect(await reader.number(110)).toBe(46);
    expect(reader.mode).toBe("depth");
    expect(told).toEqual(["depth"]);
  });

  it("never takes \"finalized block not found\" (a restarted geth or op-geth that has the tag) for a node without the tag", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const reader = new FinalizedBlockReader(nodeAnswering([...Array.from({ length: 6 }, () => NOT_YET()), { number: "0x10" }]), 64, 31337n);
    for (let read = 0; read < 6; read++) {
      await expect(reader.number(100_000)).rejects.toThrow(/finalized block not found/);
      vi.advanceTimersByTime(NO_TAG_FOR_MS);
    }
    expect(reader.mode).toBe("unknown");
    expect(await reader.number(100_000)).toBe(16);
  });

  it("on a chain whose finality is its tag (Base, Arbitrum One ...), a node without it leaves nothing final, told once: never depth", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    for (const chainId of [8453n, 42161n, 10n, 137n, 56n, 1n]) expect(finalityRuleOf(chainId).kind).toBe("tag");
    expect(finalityRuleOf(424242n, 100)).toEqual({ kind: "depth", blocks: 100, chain: "chain 424242" });
    const told: string[] = [];
    const reader = new FinalizedBlockReader(nodeAnswering(Array.from({ length: 10 }, () => NO_TAG())), 64, 8453n, (rule) => told.push(rule.chain));
    for (let read = 0; read < 10; read++) {
      expect(await reader.number(100_000)).toBeNull();
      vi.advanceTimersByTime(NO_TAG_FOR_MS);
    }
    expect(reader.mode).toBe("unknown");
    expect(told).toEqual(["Base"]);
  });

  it("throws a fault of the moment, and asks again next time", async () => {
    const reader = new FinalizedBlockReader(nodeAnswering([new Error("socket hang up"), { number: "0x05" }]), 64);
    await expect(reader.number(100)).rejects.toThrow(/socket hang up/);
    expect(await reader.number(100)).toBe(5);
  });
});
