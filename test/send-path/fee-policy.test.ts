import { parseUnits } from "ethers";
import { describe, expect, it } from "vitest";
import { type FeePolicy, offeredFees, tipFromFeeHistory } from "../../src/send-path/fee-policy.js";
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

  it("is the chain's default ceiling where the table names the chain, which MAX_FEE_PER_GAS replaces (higher or lower); a first attempt never offers more", () => {
    expect(feePolicyOf(settings, 1n).maxFeePerGas).toBe(parseUnits("2000", "gwei"));
    expect(feePolicyOf(settings, 8453n).maxFeePerGas).toBe(parseUnits("100", "gwei"));
    // A chain the table does not name has none: its fees' magnitude is not known.
    expect(feePolicyOf(settings, 31337n).maxFeePerGas).toBeUndefined();
    expect(feePolicyOf({ ...settings, maxFeePerGas: "5000" }, 8453n).maxFeePerGas).toBe(parseUnits("5000", "gwei"));
    // A base fee of 400 gwei reported on Base (a wild market, or an endpoint that says so): offered at the cap.
    expect(offeredFees(parseUnits("400", "gwei"), parseUnits("1", "gwei"), feePolicyOf(settings, 8453n)).maxFeePerGas).toBe(parseUnits("100", "gwei"));
  });
});

describe("the fee cap watch", () => {
  it("warns when what a transaction needs nears the cap, once every ten minutes while it stays there; never without a cap", async () => {
    const { Writable } = await import("node:stream");
    const { createLogger } = await import("../../src/logger.js");
    const { FeeCapWatch } = await import("../../src/lanes/fee-cap-watch.js");
    const lines: string[] = [];
    const log = createLogger("info", {}, new Writable({ write: (chunk, _encoding, done) => (lines.push(chunk.toString()), done()) }));
    let now = 0;
    const watch = new FeeCapWatch(gwei("100"), true, log, () => now);
    watch.note(gwei("30"), gwei("1"));
    watch.note(gwei("40"), gwei("1"));
    watch.note(gwei("45"), gwei("1"));
    now += 600_000;
    watch.note(gwei("45"), gwei("1"));
    new FeeCapWatch(undefined, false, log, () => now).note(gwei("1000"), gwei("1"));
    expect(lines.map((line) => JSON.parse(line).neededGwei)).toEqual(["81.0", "91.0"]);
  });
});
