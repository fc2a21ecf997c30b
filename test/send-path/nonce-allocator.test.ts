import { describe, expect, it, vi } from "vitest";
import { COUNT_STALE_AFTER_MS, NonceAllocator } from "../../src/send-path/nonce-allocator.js";

describe("NonceAllocator", () => {
  it("reads the chain once, then hands out consecutive nonces synchronously", async () => {
    let reads = 0;
    const allocator = new NonceAllocator(async () => {
      reads++;
      return 7;
    });
    await Promise.all([allocator.ready(), allocator.ready(), allocator.ready()]);
    expect([allocator.take(), allocator.take(), allocator.take()]).toEqual([7, 8, 9]);
    expect(reads).toBe(1);
  });

  it("reuses a given-back nonce first, so no gap remains", async () => {
    const allocator = new NonceAllocator(async () => 0);
    await allocator.ready();
    const taken = [allocator.take(), allocator.take(), allocator.take()];
    allocator.release(taken[1]);
    allocator.release(taken[0]);
    expect([allocator.take(), allocator.take(), allocator.take()]).toEqual([0, 1, 3]);
  });

  it("moves past nonces another sender used, dropping given-back ones they took", async () => {
    let chainPending = 0;
    const allocator = new NonceAllocator(async () => chainPending);
    await allocator.ready();
    allocator.take();
    allocator.take();
    allocator.release(1);
    chainPending = 5;
    await allocator.catchUpWithChain();
    expect(allocator.take()).toBe(5);
  });

  it("keeps a given-back nonce the chain has not mined, though the pending count passed it (a node counting what waits behind a gap)", async () => {
    let pending = 0;
    const allocator = new NonceAllocator(
      async () => pending,
      async () => 5,
    );
    await allocator.ready();
    for (let nonce = 0; nonce < 9; nonce++) allocator.take();
    allocator.release(5);
    // Nonces 6 to 8 wait behind the gap at 5, and this node counts them as pending.
    pending = 9;
    await allocator.catchUpWithChain();
    expect(allocator.take()).toBe(5);
    expect(allocator.take()).toBe(9);
  });

  it("never gives back the nonce of the transaction the node called used, though the chain does not count it: that transaction holds it", async () => {
    const allocator = new NonceAllocator(async () => 3);
    await allocator.ready();
    const calledUsed = allocator.take();
    allocator.take();
    await allocator.catchUpWithChain();
    expect(allocator.take()).toBe(calledUsed + 2);
  });

  it("changes nothing when the chain's counts cannot be read", async () => {
    let readable = true;
    const allocator = new NonceAllocator(async () => {
      if (!readable) throw new Error("node down");
      return 3;
    });
    await allocator.ready();
    allocator.take();
    allocator.take();
    allocator.release(4);
    readable = false;
    await allocator.catchUpWithChain();
    expect([allocator.take(), allocator.take()]).toEqual([4, 5]);
  });

  it("starts new nonces at the mined count the wallet snapshot shows, dropping given-back nonces below it", async () => {
    const allocator = new NonceAllocator(async () => 0);
    await allocator.ready();
    for (let nonce = 0; nonce < 4; nonce++) allocator.take();
    allocator.release(2);
    allocator.passMined(3);
    allocator.passMined(1);
    expect([allocator.take(), allocator.take()]).toEqual([4, 5]);
    allocator.passMined(9);
    expect(allocator.take()).toBe(9);
  });

  it("reads the chain's pending count again before a nonce once no fresh count was known for COUNT_STALE_AFTER_MS, once for concurrent callers; not while snapshots keep it fresh", async () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    try {
      let reads = 0;
      let chainPending = 0;
      const allocator = new NonceAllocator(async () => {
        reads++;
        return chainPending;
      });
      await allocator.ready();
      expect(allocator.take()).toBe(0);
      // Busy: the lane's snapshots note the chain's count; handing out nonces alone keeps nothing fresh.
      for (let tick = 0; tick < 5; tick++) {
        vi.advanceTimersByTime(COUNT_STALE_AFTER_MS - 1);
        allocator.noteChainCount(1);
        await allocator.ready();
        allocator.take();
      }
      expect(reads).toBe(1);
      // Another sender of the key uses nonces 6 to 9 while no count is read.
      chainPending = 10;
      vi.advanceTimersByTime(COUNT_STALE_AFTER_MS + 1);
      await Promise.all([allocator.ready(), allocator.ready()]);
      // One read of the pending count for both.
      expect(reads).toBe(2);
      expect(allocator.take()).toBe(10);
    } finally {
      vi.useRealTimers();
    }
  });

  it("hands a given-back nonce to the gap filler only once it has waited long enough, and then to nobody else", async () => {
    const allocator = new NonceAllocator(async () => 10);
    await allocator.ready();
    const refused = allocator.take();
    allocator.take();
    allocator.release(refused);
    expect(allocator.takeGivenBackBefore(performance.now() - 60_000)).toBeUndefined();
    expect(allocator.takeGivenBackBefore(performance.now() + 1)).toBe(refused);
    expect(allocator.take()).toBe(12);
  });

  it("refuses to hand out a nonce before the chain was read", () => {
    expect(() => new NonceAllocator(async () => 0).take()).toThrow(/before ready/);
  });
});
