/** The mined nonce count is read only while transfers wait, soon after progress, ever more slowly without. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { FAST_MS, MinedNonceWatch, STALLED_AFTER_MS } from "../../src/lanes/mined-nonce-watch.js";

describe("MinedNonceWatch", () => {
  let watch: MinedNonceWatch | undefined;
  afterEach(async () => {
    await watch?.stop();
    vi.useRealTimers();
  });

  function watchOf(state: { wanted: boolean; count: number; sent?: number }) {
    const reads: number[] = [];
    const stalls: number[] = [];
    const counts: number[] = [];
    watch = new MinedNonceWatch({
      readMinedNonceCount: async () => {
        reads.push(Date.now());
        return state.count;
      },
      highestNonceSent: () => state.sent ?? 0,
      onCount: (count) => counts.push(count),
      isWanted: () => state.wanted,
      onError: () => {},
      onStalled: async (count) => (stalls.push(count), false),
      slowestMs: 1_000,
    });
    return { reads, counts, stalls };
  }

  it("reads nothing until woken, and nothing once nobody waits", async () => {
    vi.useFakeTimers();
    const state = { wanted: false, count: 5 };
    const { reads } = watchOf(state);
    await vi.advanceTimersByTimeAsync(5_000);
    watch?.wake();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(reads).toHaveLength(0);
    state.wanted = true;
    watch?.wake();
    await vi.advanceTimersByTimeAsync(1);
    expect(reads).toHaveLength(1);
    state.wanted = false;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(reads).toHaveLength(1);
  });

  it("reads again FAST_MS after progress, and backs off to the slowest pace while nothing is mined", async () => {
    vi.useFakeTimers({ now: 0 });
    const state = { wanted: true, count: 5 };
    const { reads, counts } = watchOf(state);
    watch?.wake();
    // Mining as fast as it reads: every read shows progress.
    for (let step = 0; step < 5; step++) {
      await vi.advanceTimersByTimeAsync(FAST_MS);
      state.count++;
    }
    expect(reads.length).toBeGreaterThanOrEqual(5);
    expect(counts.at(-1)).toBeGreaterThanOrEqual(9);
    // Nothing more mined for 5 s: 20, 40, ... (and one read when the stall is due, not up to twice as late),
    // then one read a second.
    const before = reads.length;
    await vi.advanceTimersByTimeAsync(5_000);
    const gaps = reads.slice(before).map((at, index, all) => (index === 0 ? 0 : at - all[index - 1]));
    expect(reads.length - before).toBeLessThanOrEqual(12);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(1_000);
    expect(gaps.slice(-2)).toEqual([1_000, 1_000]);
  });

  it("reads again FAST_MS later when the lane sent more since the last read, mined or not", async () => {
    vi.useFakeTimers({ now: 0 });
    const state = { wanted: true, count: 5, sent: 10 };
    const { reads } = watchOf(state);
    watch?.wake();
    await vi.advanceTimersByTimeAsync(1_000);
    const before = reads.length;
    state.sent = 11;
    await vi.advanceTimersByTimeAsync(1_000);
    const after = reads.slice(before);
    // The read after the send comes within the slowest pause, and the one after it FAST_MS later.
    expect(after.length).toBeGreaterThanOrEqual(2);
    expect(after[1] - after[0]).toBe(FAST_MS);
  });

  it("tells the lane once per count that nothing was mined for STALLED_AFTER_MS while transfers wait", async () => {
    vi.useFakeTimers({ now: 0 });
    const state = { wanted: true, count: 5, sent: 20 };
    const { stalls } = watchOf(state);
    watch?.wake();
    await vi.advanceTimersByTimeAsync(STALLED_AFTER_MS - 50);
    expect(stalls).toEqual([]);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(stalls).toEqual([5]);
    // Mined one more, then stuck again: told again, about the new count.
    state.count = 6;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(stalls).toEqual([5, 6]);
  });

  it("on a chain that mines as fast as it is read, tells the lane after STALLED_AFTER_MS; on one it has not seen mine, after the slowest pace", async () => {
    vi.useFakeTimers({ now: 0 });
    const state = { wanted: true, count: 5, sent: 100 };
    const { stalls } = watchOf(state);
    watch?.wake();
    // A block every read (an automining node), long enough to be the chain's usual pace.
    for (let step = 0; step < 40; step++) {
      await vi.advanceTimersByTimeAsync(FAST_MS);
      state.count++;
    }
    const stuckAt = state.count;
    await vi.advanceTimersByTimeAsync(STALLED_AFTER_MS + 200);
    expect(stalls).toEqual([stuckAt]);
  });

  it("tells a stall when it is due, not at the next read of its backing off; reads again soon once the lane has sent a replacement", async () => {
    vi.useFakeTimers({ now: 0 });
    const state = { wanted: true, count: 5, sent: 100 };
    const reads: number[] = [];
    const stalls: number[] = [];
    watch = new MinedNonceWatch({
      readMinedNonceCount: async () => (reads.push(Date.now()), state.count),
      highestNonceSent: () => state.sent,
      onCount: () => undefined,
      isWanted: () => state.wanted,
      onError: () => undefined,
      // The lane replaced the held transaction: the node mines it at once.
      onStalled: async (count) => {
        stalls.push(Date.now());
        state.count = count + 1;
        return true;
      },
      slowestMs: 1_000,
    });
    watch.wake();
    // Not seen the chain mine: the stall is due after the slowest pace, 1 s (reads at 10, 30, ... 630 ms).
    await vi.advanceTimersByTimeAsync(1_100);
    expect(stalls).toEqual([1_000]);
    // Read again FAST_MS after the replacement, where backing off would have waited 740 ms.
    expect(reads.filter((at) => at > 1_000 && at <= 1_000 + FAST_MS)).toHaveLength(1);
  });

  it("learns the chain's pace only while transfers wait: a pause between bursts is not a gap of the chain's", async () => {
    vi.useFakeTimers({ now: 0 });
    const state = { wanted: true, count: 5, sent: 100 };
    const { stalls } = watchOf(state);
    // Bursts of an automining node's blocks, each ended by a second with nobody waiting (blocks mined meanwhile).
    for (let burst = 0; burst < 8; burst++) {
      state.wanted = true;
      watch?.wake();
      for (let step = 0; step < 5; step++) {
        await vi.advanceTimersByTimeAsync(FAST_MS);
        state.count++;
      }
      state.wanted = false;
      await vi.advanceTimersByTimeAsync(1_000);
      state.count += 3;
    }
    state.wanted = true;
    watch?.wake();
    await vi.advanceTimersByTimeAsync(FAST_MS);
    const stuckAt = state.count;
    // Well before the slowest pace (1 s), where it would stand had the pauses counted as gaps.
    await vi.advanceTimersByTimeAsync(800);
    expect(stalls).toEqual([stuckAt]);
  });

  it("does not tell a lane whose count stands still for less than the slowest pace before it has seen the chain mine", async () => {
    vi.useFakeTimers({ now: 0 });
    const state = { wanted: true, count: 5, sent: 20 };
    const { stalls } = watchOf(state);
    watch?.wake();
    await vi.advanceTimersByTimeAsync(900);
    expect(stalls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_200);
    expect(stalls).toEqual([5]);
  });

  it("does not take one quick rise (a lagging backend, then one ahead) for a fast chain", async () => {
    vi.useFakeTimers({ now: 0 });
    const state = { wanted: true, count: 5, sent: 100 };
    const { stalls } = watchOf(state);
    watch?.wake();
    await vi.advanceTimersByTimeAsync(FAST_MS);
    state.count = 7;
    await vi.advanceTimersByTimeAsync(FAST_MS);
    state.count = 8;
    await vi.advanceTimersByTimeAsync(600);
    expect(stalls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(stalls).toEqual([8]);
  });
});
