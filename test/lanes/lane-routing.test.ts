import { describe, expect, it } from "vitest";
import { type LaneFigures, chooseLane, laneHold } from "../../src/lanes/lane-routing.js";

const GWEI = 1_000_000_000n;
const MAX_IN_FLIGHT = 16;

/** A lane that can take transfers: plenty of tokens and gas, nothing in flight. */
function lane(address: string, figures: Partial<LaneFigures> = {}): LaneFigures {
  return {
    address,
    unmined: 0,
    stuck: false,
    jammed: false,
    tokensAvailable: 1_000n,
    gasAvailable: 1_000_000n * GWEI,
    gasPerTransfer: 100_000n * GWEI,
    gasFloor: 200_000n * GWEI,
    ...figures,
  };
}

function chosen(lanes: LaneFigures[], units = 10n): string | undefined {
  const route = chooseLane(lanes, units, MAX_IN_FLIGHT);
  return "lane" in route ? route.lane.address : undefined;
}

describe("lane routing", () => {
  it("sends from the lane with the fewest unmined transactions; a tie goes to the earlier lane", () => {
    expect(chosen([lane("a", { unmined: 3 }), lane("b", { unmined: 1 }), lane("c", { unmined: 2 })])).toBe("b");
    expect(chosen([lane("a", { unmined: 2 }), lane("b", { unmined: 2 })])).toBe("a");
  });

  it("passes over a lane that is jammed, stuck, below its gas floor or at the in-flight limit, until it clears", () => {
    const busy = lane("busy", { unmined: 5 });
    for (const [held, hold] of [
      [lane("a", { jammed: true, stuck: true }), "jammed"],
      [lane("a", { stuck: true }), "stuck"],
      [lane("a", { gasAvailable: 150_000n * GWEI }), "gas-below-floor"],
      [lane("a", { unmined: MAX_IN_FLIGHT }), "in-flight-limit"],
    ] as const) {
      expect(laneHold(held, MAX_IN_FLIGHT)).toBe(hold);
      expect(chosen([held, busy])).toBe("busy");
    }
    expect(laneHold(lane("a", { unmined: MAX_IN_FLIGHT - 1 }), MAX_IN_FLIGHT)).toBeUndefined();
    expect(chosen([lane("a", { unmined: MAX_IN_FLIGHT - 1 }), lane("b", { unmined: MAX_IN_FLIGHT })])).toBe("a");
  });

  it("sends from a lane that can pay, counting what is in flight, even when an idler one cannot", () => {
    expect(chosen([lane("idle-no-tokens", { tokensAvailable: 9n }), lane("busy", { unmined: 4 })], 10n)).toBe("busy");
    // Above its floor, yet short of this transfer's gas at today's fees.
    const shortOfGas = lane("idle-short", { gasFloor: 0n, gasAvailable: 99_999n * GWEI });
    expect(chosen([shortOfGas, lane("busy", { unmined: 4 })])).toBe("busy");
  });

  it("names the pool's real shortage when no lane can take the transfer", () => {
    const route = (lanes: LaneFigures[], units = 10n) => chooseLane(lanes, units, MAX_IN_FLIGHT);
    // No lane holds the tokens, held or not: what is in flight spends the rest, so a retry does not help.
    expect(route([lane("a", { tokensAvailable: 5n }), lane("b", { tokensAvailable: 9n, stuck: true })])).toEqual({ refusal: "INSUFFICIENT_TOKEN_BALANCE" });
    expect(route([])).toEqual({ refusal: "INSUFFICIENT_TOKEN_BALANCE" });
    // The tokens are there, but no lane holding them can pay the gas.
    expect(route([lane("a", { gasFloor: 0n, gasAvailable: 1n }), lane("b", { tokensAvailable: 0n })])).toEqual({ refusal: "INSUFFICIENT_FUNDS" });
    // Every lane that holds them is out of gas: that stays so until someone pays, no reason to retry.
    expect(route([lane("a", { gasAvailable: 0n }), lane("b", { gasAvailable: 0n }), lane("c", { tokensAvailable: 0n, unmined: MAX_IN_FLIGHT })])).toEqual({ refusal: "INSUFFICIENT_FUNDS" });
    // The lanes that could pay are held for now (stuck, jammed, full): a retry may find one free.
    expect(route([lane("a", { stuck: true }), lane("b", { gasAvailable: 0n }), lane("c", { unmined: MAX_IN_FLIGHT })])).toEqual({ refusal: "NO_LANE_AVAILABLE" });
    expect(route([lane("a", { jammed: true }), lane("b", { tokensAvailable: 0n })])).toEqual({ refusal: "NO_LANE_AVAILABLE" });
  });

  it("with one lane, takes or refuses exactly as that lane's own checks would", () => {
    expect(chosen([lane("only", { unmined: MAX_IN_FLIGHT - 1 })])).toBe("only");
    expect(chooseLane([lane("only", { tokensAvailable: 1n })], 2n, MAX_IN_FLIGHT)).toEqual({ refusal: "INSUFFICIENT_TOKEN_BALANCE" });
  });
});
