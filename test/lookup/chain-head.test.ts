import { describe, expect, it } from "vitest";
import { ChainHeadTracker } from "../../src/lookup/chain-head.js";

const block = (number: number) => ({ number, hash: `0x${number.toString(16).padStart(64, "0")}`, parentHash: `0x${(number - 1).toString(16).padStart(64, "0")}` });

describe("ChainHeadTracker", () => {
  it("reuses a head within the bound and reads again past it, concurrent callers sharing one read", async () => {
    let now = 1_000;
    let reads = 0;
    const tracker = new ChainHeadTracker(async () => block(++reads), 500, () => now);
    const [first, second] = await Promise.all([tracker.current(), tracker.current()]);
    expect(first.number).toBe(1);
    expect(second.number).toBe(1);
    now += 500;
    expect((await tracker.current()).number).toBe(1);
    now += 1;
    expect((await tracker.current()).number).toBe(2);
    expect(reads).toBe(2);
  });

  it("tells listeners about a new head before handing it out", async () => {
    let now = 0;
    let number = 10;
    const tracker = new ChainHeadTracker(async () => block(number), 100, () => now);
    const seen: [number | undefined, number][] = [];
    tracker.onNewHead(async (previous, next) => {
      seen.push([previous?.number, next.number]);
    });
    await tracker.current();
    now += 200;
    await tracker.current();
    number = 11;
    now += 200;
    await tracker.current();
    expect(seen).toEqual([
      [undefined, 10],
      [10, 11],
    ]);
  });

  it("reads once more for a caller that joined a read which then failed", async () => {
    let failNext = true;
    let release: () => void = () => {};
    const tracker = new ChainHeadTracker(async () => {
      if (failNext) {
        failNext = false;
        await new Promise<void>((resolve) => (release = resolve));
        throw new Error("node down");
      }
      return block(5);
    }, 0);
    const starter = tracker.current();
    const joiner = tracker.current();
    release();
    await expect(starter).rejects.toThrow("node down");
    expect((await joiner).number).toBe(5);
  });

  it("keeps the higher head when a lagging backend answers with a lower one (lag is no reorganisation)", async () => {
    let now = 0;
    const answers = [block(20), block(19), block(21)];
    const tracker = new ChainHeadTracker(async () => answers.shift() ?? block(21), 100, () => now);
    const seen: number[] = [];
    tracker.onNewHead(async (_previous, next) => {
      seen.push(next.number);
    });
    expect((await tracker.current()).number).toBe(20);
    now += 200;
    expect((await tracker.current()).number).toBe(20);
    now += 200;
    expect((await tracker.current()).number).toBe(21);
    expect(seen).toEqual([20, 21]);
  });
});
