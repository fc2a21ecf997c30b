/** The runway /wallet and the console show: the balance over the last hour's spend. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { GasRunway } from "../../src/lanes/gas-runway.js";

const ETHER = 10n ** 18n;
const MINUTE = 60_000;

describe("gas runway", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("is null before anything is spent, then the balance over the spend rate of the last hour", () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const runway = new GasRunway();
    expect(runway.hours(10n * ETHER)).toBeNull();
    // 0.1 ETH in the first 30 minutes: 0.2 ETH an hour.
    vi.advanceTimersByTime(30 * MINUTE);
    runway.record(ETHER / 10n);
    expect(runway.hours(ETHER)).toBe(5);
    // Two hours on, 0.3 ETH more in the last hour only: the first half hour's spend is out of the window.
    vi.advanceTimersByTime(90 * MINUTE);
    runway.record((ETHER * 2n) / 10n);
    vi.advanceTimersByTime(30 * MINUTE);
    runway.record((ETHER * 4n) / 10n);
    expect(runway.hours((ETHER * 3n) / 10n)).toBe(1);
  });
});
