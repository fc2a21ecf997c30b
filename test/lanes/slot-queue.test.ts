/** New transfers waiting for room: first come, first served, never more let in than there is room for, never longer than allowed without room freeing. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_WAITING, MOVING_WAIT_LIMIT, SlotQueue } from "../../src/lanes/slot-queue.js";

/** Room for `free` more; each take uses one. */
function room(free: number) {
  const state = { free };
  return { state, take: () => (state.free > 0 ? (state.free--, true) : false) };
}

describe("SlotQueue", () => {
  afterEach(() => vi.useRealTimers());

  it("takes at once while there is room and nobody waits", async () => {
    const queue = new SlotQueue();
    const { take, state } = room(2);
    expect(await queue.take(take, 1000)).toBe(true);
    expect(await queue.take(take, 1000)).toBe(true);
    expect(state.free).toBe(0);
    expect(queue.size).toBe(0);
  });

  it("lets waiters in first come, first served, as room frees; several freed at once go to the front ones only", async () => {
    const queue = new SlotQueue();
    const { take, state } = room(0);
    const order: number[] = [];
    const waits = [0, 1, 2, 3].map((index) => queue.take(take, 10_000).then((took) => took && order.push(index)));
    expect(queue.size).toBe(4);
    state.free = 1;
    queue.wake();
    await Promise.resolve();
    state.free += 2;
    queue.wake();
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([0, 1, 2]);
    expect(state.free).toBe(0);
    expect(queue.size).toBe(1);
    // A newcomer does not pass the one still waiting: room free when it comes goes to the one ahead.
    state.free = 1;
    const newcomer = queue.take(take, 10_000);
    await Promise.all(waits);
    expect(order).toEqual([0, 1, 2, 3]);
    expect(queue.size).toBe(1);
    state.free = 1;
    queue.wake();
    expect(await newcomer).toBe(true);
  });

  it("a waiter that cannot use the room does not hold up the ones behind it", async () => {
    vi.useFakeTimers();
    const queue = new SlotQueue();
    const state = { free: 0 };
    // The first wants two slots at once (a pool's transfer only a fuller lane could pay), the second one.
    const needsTwo = queue.take(() => state.free >= 2 && ((state.free -= 2), true), 2000);
    const needsOne = queue.take(() => state.free >= 1 && (state.free--, true), 2000);
    state.free = 1;
    queue.wake();
    expect(await needsOne).toBe(true);
    expect(queue.size).toBe(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(await needsTwo).toBe(false);
  });

  it("waits on while the queue moves (others take room), gives up once no room freed for the time allowed, and never past its limit", async () => {
    vi.useFakeTimers();
    const queue = new SlotQueue();
    const { take, state } = room(0);
    const first = queue.take(take, 2000);
    const last = queue.take(take, 2000);
    vi.advanceTimersByTime(1500);
    state.free = 1;
    queue.wake();
    expect(await first).toBe(true);
    // 2.5 s in line, but room freed 1 s ago: still waiting; given up 2 s after that room.
    vi.advanceTimersByTime(1000);
    expect(queue.size).toBe(1);
    vi.advanceTimersByTime(999);
    expect(queue.size).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await last).toBe(false);

    // One that no room fits, behind a queue that keeps moving: given up at MOVING_WAIT_LIMIT x 2 s.
    const needsTwo = queue.take(() => state.free >= 2 && ((state.free -= 2), true), 2000);
    let given: boolean | undefined;
    void needsTwo.then((took) => (given = took));
    for (let second = 1; second < MOVING_WAIT_LIMIT * 2; second++) {
      vi.advanceTimersByTime(1000);
      state.free = 0;
      const other = queue.take(take, 2000);
      state.free = 1;
      queue.wake();
      expect(await other).toBe(true);
      await Promise.resolve();
      expect(given, `after ${second} s`).toBeUndefined();
    }
    vi.advanceTimersByTime(1000);
    expect(await needsTwo).toBe(false);
  });

  it("gives up after the time allowed, and then takes no room", async () => {
    vi.useFakeTimers();
    const queue = new SlotQueue();
    const { take, state } = room(0);
    const waiting = queue.take(take, 2000);
    vi.advanceTimersByTime(1999);
    expect(queue.size).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await waiting).toBe(false);
    expect(queue.size).toBe(0);
    state.free = 1;
    queue.wake();
    expect(state.free).toBe(1);
  });

  it("does not wait when not allowed to, nor behind too many", async () => {
    vi.useFakeTimers();
    const queue = new SlotQueue();
    const { take } = room(0);
    expect(await queue.take(take, 0)).toBe(false);
    for (let index = 0; index < MAX_WAITING; index++) void queue.take(take, 60_000);
    expect(await queue.take(take, 60_000)).toBe(false);
    expect(queue.size).toBe(MAX_WAITING);
  });
});
