import { parseUnits } from "ethers";
import { describe, expect, it } from "vitest";
import { DEFAULT_FEE_CEILING_GWEI, type FeePolicy, offeredFees, tipFromFeeHistory } from "../../src/send-path/fee-policy.js";
import { type LaneConfig, feePolicyOf } from "../../src/lanes/start-lane.js";

const gwei = (value: string) => parseUnits(value, "gwei");
const POLICY: FeePolicy = { tipPercentile: 50, minTip: gwei("0.001") };

describe("the fee policy", () => {
  it("takes the median of recent blocks' percentile tips", () => {
    const rewards = [["0x3b9aca00"], ["0x77359400"], ["0x0"], ["0xb2d05e00"], ["0x3b9aca00"]];
    expect(tipFromFeeHistory(rewards, POLICY)).toBe(gwei("1"));
  });

  it("never offers less than the floor, also after empty blocks", () => {
    expect(tipFromFeeHistory([["0x0"], ["0x0"]], POLICY)).toBe(gwei("0.001"));
    expect(tipFromFeeHistory([], POLICY)).toBe(gwei("0.001"));
  });

  it("offers twice the base fee plus the tip", () => {
    expect(offeredFees(gwei("10"), gwei("2"), POLICY)).toEqual({ maxFeePerGas: gwei("22"), maxPriorityFeePerGas: gwei("2") });
  });

  it("never goes above the caps, and keeps the tip within the fee cap", () => {
    const capped = { ...POLICY, maxFeePerGas: gwei("15"), maxTip: gwei("1.5") };
    expect(offeredFees(gwei("10"), gwei("2"), capped)).toEqual({ maxFeePerGas: gwei("15"), maxPriorityFeePerGas: gwei("1.5") });
    expect(offeredFees(gwei("10"), gwei("20"), { ...POLICY, maxFeePerGas: gwei("5") })).toEqual({ maxFeePerGas: gwei("5"), maxPriorityFeePerGas: gwei("5") });
    expect(offeredFees(gwei("1"), gwei("1"), capped)).toEqual({ maxFeePerGas: gwei("3"), maxPriorityFeePerGas: gwei("1") });
  });
});

describe("the fee cap without MAX_FEE_PER_GAS", () => {
  const settings = { feeTipPercentile: 50, minPriorityFeePerGas: "0.001", maxFeePerGas: undefined, maxPriorityFeePerGas: undefined } as unknown as LaneConfig;

  it("is the chain's default ceiling, which MAX_FEE_PER_GAS replaces (higher or lower); a first attempt never offers more", () => {
    expect(feePolicyOf(settings, 1n).maxFeePerGas).toBe(parseUnits("2000", "gwei"));
    expect(feePolicyOf(settings, 8453n).maxFeePerGas).toBe(parseUnits("100", "gwei"));
    expect(feePolicyOf(settings, 31337n).maxFeePerGas).toBe(parseUnits(DEFAULT_FEE_CEILING_GWEI, "gwei"));
    expect(feePolicyOf({ ...settings, maxFeePerGas: "5000" }, 8453n).maxFeePerGas).toBe(parseUnits("5000", "gwei"));
    // A base fee of 400 gwei reported on Base (a wild market, or an endpoint that says so): offered at the cap.
    expect(offeredFees(parseUnits("400", "gwei"), parseUnits("1", "gwei"), feePolicyOf(settings, 8453n)).maxFeePerGas).toBe(parseUnits("100", "gwei"));
  });
});
