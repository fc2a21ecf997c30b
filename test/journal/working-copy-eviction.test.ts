/** The working copy's passes: a slice a commit, until a slice comes back short or the pass's limit. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { steadyWallClockNow } from "../../src/clock.js";
import { HELD_WINDOW_MS } from "../../src/journal/postgres-journal-store.js";
import { startWorkingCopyEviction } from "../../src/journal/working-copy-eviction.js";

/** A journal whose walks come back as given: how many looked at and forgotten, or undefined (held back). */
function fakeJournal(slices: ({ examined: number; forgotten: number } | undefined)[]) {
  const asked: { before: number; limit: number }[] = [];
  let flushes = 0;
  return {
    asked,
    flushes: () => flushes,
    forgetSettledForGood: (before: number, limit: number) => (asked.push({ before, limit }), slices.length > 0 ? slices.shift() : { examined: 0, forgotten: 0 }),
    flushed: async () => void flushes++,
  };
}

/** Runs the interval's next pass, `intervalMs` on, and each of its slices (a 0 ms timer each) after it. */
async function passAfter(intervalMs: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(intervalMs);
  for (let step = 0; step < 20; step++) await vi.advanceTimersByTimeAsync(1);
}

describe("working copy eviction", () => {
  afterEach(() => vi.useRealTimers());

  it("walks a slice a commit until a slice comes back short, tries a held-back slice again, and tells the total", async () => {
    vi.useFakeTimers();
    const slice = (examined: number, forgotten: number) => ({ examined, forgotten });
    const journal = fakeJournal([slice(3, 3), undefined, slice(3, 1), slice(1, 0), slice(3, 3), slice(0, 0)]);
    const forgotten: number[] = [];
    const eviction = startWorkingCopyEviction(journal, { forgotten: (count) => forgotten.push(count), failed: (error) => expect.fail(String(error)) }, { intervalMs: 1_000, sliceSize: 3, maxSlices: 10 });
    await passAfter(1_000);
    expect(forgotten).toEqual([4]);
    expect(journal.asked.map(({ limit }) => limit)).toEqual([3, 3, 3, 3]);
    for (const { before } of journal.asked) expect(Math.abs(before - (steadyWallClockNow() - HELD_WINDOW_MS))).toBeLessThan(2_000);
    // A slice held back commits nothing.
    expect(journal.flushes()).toBe(3);
    // The next pass walks on; a pass that forgets nothing says nothing.
    await passAfter(1_000);
    await passAfter(1_000);
    expect(forgotten).toEqual([4, 3]);
    await eviction.stop();
  });

  it("takes at most maxSlices a pass, and reports a failed pass without stopping", async () => {
    vi.useFakeTimers();
    const journal = fakeJournal([0, 1, 2, 3, 4].map(() => ({ examined: 2, forgotten: 2 })));
    const forgotten: number[] = [];
    const failures: unknown[] = [];
    const eviction = startWorkingCopyEviction(journal, { forgotten: (count) => forgotten.push(count), failed: (error) => failures.push(error) }, { intervalMs: 1_000, sliceSize: 2, maxSlices: 2 });
    await passAfter(1_000);
    expect(forgotten).toEqual([4]);
    journal.flushed = async () => {
      throw new Error("journal unavailable");
    };
    await passAfter(1_000);
    expect(failures).toHaveLength(1);
    await eviction.stop();
  });
});
