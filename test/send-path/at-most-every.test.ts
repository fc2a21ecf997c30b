/** The rate limit of something told again and again: the first time, then once an interval has passed. */
import { describe, expect, it } from "vitest";
import { atMostEvery } from "../../src/send-path/at-most-every.js";

describe("atMostEvery", () => {
  it("tells the first time, drops what comes within the interval, and tells again once it has passed", () => {
    let now = 1_000;
    const tellAtMostEvery = atMostEvery(600_000, () => now);
    const told: number[] = [];
    const tell = () => tellAtMostEvery(() => told.push(now));

    tell();
    now += 1;
    tell();
    now += 599_998;
    tell();
    expect(told).toEqual([1_000]);
    now += 1;
    tell();
    tell();
    expect(told).toEqual([1_000, 601_000]);
    now += 600_000;
    tell();
    expect(told).toEqual([1_000, 601_000, 1_201_000]);
  });
});
