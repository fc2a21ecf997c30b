/** Stored timestamps do not follow a step of the system clock while the service runs. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { monotonicNow, steadyWallClockNow } from "../src/clock.js";

describe("the service's clocks", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("keep counting evenly when the system clock jumps an hour ahead or back", () => {
    const steady = steadyWallClockNow();
    const monotonic = monotonicNow();
    const realNow = Date.now();
    for (const step of [3_600_000, -3_600_000]) {
      vi.spyOn(Date, "now").mockReturnValue(realNow + step);
      expect(Math.abs(steadyWallClockNow() - steady)).toBeLessThan(1_000);
      expect(monotonicNow() - monotonic).toBeGreaterThanOrEqual(0);
      expect(monotonicNow() - monotonic).toBeLessThan(1_000);
      vi.restoreAllMocks();
    }
  });

  it("start from the wall clock", () => {
    expect(Math.abs(steadyWallClockNow() - Date.now())).toBeLessThan(60_000);
  });
});
