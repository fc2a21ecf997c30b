/** One block read serves every lane that asks within its own pace; concurrent asks are one read. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SharedFeeBlock } from "../../src/lanes/shared-fee-block.js";
import type { FeeBlock } from "../../src/send-path/wallet-snapshot.js";

const blockAt = (number: number): FeeBlock => ({ number, hash: `0x${number}`, parentHash: `0x${number - 1}`, baseFeePerGas: 1n });

describe("SharedFeeBlock", () => {
  afterEach(() => vi.useRealTimers());

  it("answers from the last read while it is young enough for the asker, and reads again once it is not", async () => {
    vi.useFakeTimers();
    let head = 1;
    let reads = 0;
    const shared = new SharedFeeBlock(async () => (reads++, blockAt(head)));
    expect((await shared.latest(5_000)).block.number).toBe(1);
    head = 2;
    await vi.advanceTimersByTimeAsync(3_000);
    // Four lanes asking at their idle pace: the one read serves them all.
    for (let lane = 0; lane < 4; lane++) expect((await shared.latest(5_000)).block.number).toBe(1);
    expect(reads).toBe(1);
    // A busy lane wants a block at most 1 s old.
    const busy = await shared.latest(1_000);
    expect([busy.block.number, reads]).toEqual([2, 2]);
  });

  it("makes one read of asks that come together", async () => {
    let reads = 0;
    const shared = new SharedFeeBlock(async () => (reads++, blockAt(7)));
    const answers = await Promise.all([0, 0, 0].map((maxAge) => shared.latest(maxAge)));
    expect(answers.map((answer) => answer.block.number)).toEqual([7, 7, 7]);
    expect(reads).toBe(1);
  });
});
