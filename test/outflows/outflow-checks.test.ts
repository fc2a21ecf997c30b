/** The outflow checks' pace: every interval while the service sends, every IDLE_CHECKS_SLOWER_BY intervals while it sends nothing. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { IDLE_CHECKS_SLOWER_BY, runOutflowChecks } from "../../src/outflows/outflow-checks.js";

afterEach(() => vi.useRealTimers());

describe("the outflow checks' pace", () => {
  it("checks every interval while busy, every IDLE_CHECKS_SLOWER_BY intervals while idle, and is back to the busy pace within an interval of work", async () => {
    vi.useFakeTimers();
    let checks = 0;
    let idle = false;
    const running = runOutflowChecks({ check: async () => void checks++ }, 1_000, () => idle, () => undefined);
    await vi.advanceTimersByTimeAsync(10);
    expect(checks).toBe(1);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(checks).toBe(5);
    idle = true;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(checks).toBe(5);
    await vi.advanceTimersByTimeAsync((IDLE_CHECKS_SLOWER_BY - 1) * 1_000);
    expect(checks).toBe(6);
    await vi.advanceTimersByTimeAsync(IDLE_CHECKS_SLOWER_BY * 1_000 * 3);
    expect(checks).toBe(9);
    idle = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(checks).toBe(10);
    await running.stop();
  });
});
