/** The finalized block as several endpoints (or a restarted node) show it: it never goes back, and depth is only for a chain without the tag. */
import { describe, expect, it } from "vitest";
import { FinalizedBlockReader } from "../../src/node/finalized-block.js";

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

describe("the finalized block", () => {
  it("never moves down, and a null or a refusal of the tag after it was answered keeps the highest seen, not depth", async () => {
    const reader = new FinalizedBlockReader(nodeAnswering([{ number: "0x20" }, { number: "0x1a" }, null, new Error("invalid params (-32602)"), { number: "0x21" }]), 64);
    expect(await reader.number(1000)).toBe(32);
    expect(await reader.number(1000)).toBe(32);
    expect(await reader.number(1000)).toBe(32);
    expect(await reader.number(1000)).toBe(32);
    expect(await reader.number(1000)).toBe(33);
  });

  it("falls back to FINALITY_BLOCKS below the head for a node that never had the tag, and does not ask again", async () => {
    const node = nodeAnswering([null]);
    const reader = new FinalizedBlockReader(node, 64);
    expect(await reader.number(100)).toBe(36);
    expect(await reader.number(110)).toBe(46);
  });

  it("throws a fault of the moment, and asks again next time", async () => {
    const reader = new FinalizedBlockReader(nodeAnswering([new Error("socket hang up"), { number: "0x05" }]), 64);
    await expect(reader.number(100)).rejects.toThrow(/socket hang up/);
    expect(await reader.number(100)).toBe(5);
  });
});
