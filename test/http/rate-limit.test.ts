/** The per-key rate limit's counting: fixed windows per client, bounded memory. */
import { describe, expect, it } from "vitest";
import { FixedWindowCounter } from "../../src/http/fixed-window-counter.js";

describe("FixedWindowCounter", () => {
  it("allows max requests per window from a client's first request, then counts from zero again", () => {
    const counter = new FixedWindowCounter(3, 60_000);
    expect(counter.count("key_a", 1_000)).toEqual({ left: 2, resetInMs: 60_000 });
    expect(counter.count("key_a", 2_000)).toEqual({ left: 1, resetInMs: 59_000 });
    expect(counter.count("key_a", 3_000)).toEqual({ left: 0, resetInMs: 58_000 });
    expect(counter.count("key_a", 4_000)).toEqual({ left: -1, resetInMs: 57_000 });
    // Another client has its own window.
    expect(counter.count("key_b", 4_000)).toEqual({ left: 2, resetInMs: 60_000 });
    // The window ends 60 s after its first request, not after the last one.
    expect(counter.count("key_a", 61_000)).toEqual({ left: 2, resetInMs: 60_000 });
  });

  it("keeps at most 10,000 clients: ended windows go first, then the client first seen longest ago", () => {
    const counter = new FixedWindowCounter(2, 1_000);
    for (let client = 0; client < 10_000; client++) counter.count(`ip-${client}`, 0);
    counter.count("ip-0", 0); // ip-0 has used its two requests
    // Every window is still open: the oldest client goes to make room, and starts again when it comes back.
    expect(counter.count("newcomer", 500).left).toBe(1);
    expect(counter.count("ip-0", 500).left).toBe(1);
    // ip-1 was next oldest and went for ip-0; the others kept their counts.
    expect(counter.count("ip-2", 500).left).toBe(0);
    expect(counter.count("ip-1", 500).left).toBe(1);
    // Once the windows have ended, a newcomer clears them all instead of one.
    expect(counter.count("late", 2_000).left).toBe(1);
    expect(counter.size).toBe(1);
    expect(counter.count("ip-9999", 2_000).left).toBe(1);
    expect(counter.count("ip-2", 2_000).left).toBe(1);
  });
});
