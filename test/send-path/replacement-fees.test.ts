import { describe, expect, it } from "vitest";
import { FEE_CEILING_MULTIPLE, belowBaseFee, capsUnderCeiling, isUnderpriced, neededFees, replacementFees } from "../../src/send-path/replacement-fees.js";

const GWEI = 1_000_000_000n;
const previous = { type: 2 as const, maxFeePerGas: 30n * GWEI, maxPriorityFeePerGas: 2n * GWEI };

describe("replacement fees", () => {
  it("calls fees underpriced only when they cannot be mined in this market, not when they could merely ride out fewer rises", () => {
    expect(isUnderpriced(previous, { baseFeePerGas: 20n * GWEI, tip: 2n * GWEI })).toBe(false);
    // The base fee rose above what the fee cap leaves for the tip.
    expect(isUnderpriced(previous, { baseFeePerGas: 29n * GWEI, tip: 2n * GWEI })).toBe(true);
    // Recent blocks pay more tip than this offers.
    expect(isUnderpriced(previous, { baseFeePerGas: 10n * GWEI, tip: 3n * GWEI })).toBe(true);
    expect(isUnderpriced({ type: 0, gasPrice: 5n * GWEI }, { baseFeePerGas: null, tip: 6n * GWEI })).toBe(true);
    expect(isUnderpriced({ type: 0, gasPrice: 5n * GWEI }, { baseFeePerGas: null, tip: 5n * GWEI })).toBe(false);
    // Below the base fee a node refuses them outright; a tip below the market's only waits.
    expect(belowBaseFee(previous, { baseFeePerGas: 31n * GWEI, tip: 1n })).toBe(true);
    expect(belowBaseFee(previous, { baseFeePerGas: 29n * GWEI, tip: 3n * GWEI })).toBe(false);
  });

  it("raises each field to what the chain needs now when that is more than 12.5%, keeping the fee cap above 2 x base fee + tip", () => {
    const market = { baseFeePerGas: 90n * GWEI, tip: 3n * GWEI };
    expect(replacementFees(previous, market, {})).toEqual({ outcome: "raised", fees: { type: 2, maxFeePerGas: 183n * GWEI, maxPriorityFeePerGas: 3n * GWEI } });
    expect(neededFees(market)).toEqual({ type: 2, maxFeePerGas: 183n * GWEI, maxPriorityFeePerGas: 3n * GWEI });
  });

  it("raises each field by at least 12.5% (rounded up) over the previous attempt, which geth needs (10%) to take a replacement", () => {
    const odd = { type: 2 as const, maxFeePerGas: 1_000_000_001n, maxPriorityFeePerGas: 9n };
    const repricing = replacementFees(odd, { baseFeePerGas: 1n, tip: 1n }, {});
    expect(repricing).toEqual({ outcome: "raised", fees: { type: 2, maxFeePerGas: 1_125_000_002n, maxPriorityFeePerGas: 11n } });
  });

  it("never goes above the caps, and is at the cap when the caps allow less than a 10% raise", () => {
    const market = { baseFeePerGas: 90n * GWEI, tip: 3n * GWEI };
    expect(replacementFees(previous, market, { maxFeePerGas: 40n * GWEI, maxTip: 5n * GWEI })).toEqual({
      outcome: "raised",
      fees: { type: 2, maxFeePerGas: 40n * GWEI, maxPriorityFeePerGas: 3n * GWEI },
    });
    expect(replacementFees(previous, market, { maxFeePerGas: 32n * GWEI })).toEqual({
      outcome: "at-cap",
      needed: { type: 2, maxFeePerGas: 183n * GWEI, maxPriorityFeePerGas: 3n * GWEI },
    });
    // The tip cap binds: the tip cannot rise by 10%.
    expect(replacementFees(previous, market, { maxTip: 2n * GWEI })).toMatchObject({ outcome: "at-cap" });
  });

  it("stays under the ceiling without caps configured: re-priced again and again, no attempt offers more than 10x the first's fee cap, nor a legacy one's price", () => {
    for (const first of [{ type: 2 as const, maxFeePerGas: 21n * GWEI, maxPriorityFeePerGas: GWEI }, { type: 0 as const, gasPrice: 20n * GWEI }]) {
      const caps = capsUnderCeiling(first, {});
      let previous: Parameters<typeof replacementFees>[0] = first;
      let raised = 0;
      for (let index = 0; index < 100; index++) {
        const repricing = replacementFees(previous, { baseFeePerGas: first.type === 2 ? 10n * GWEI : null, tip: GWEI }, caps);
        if (repricing.outcome === "at-cap") break;
        previous = repricing.fees;
        raised++;
      }
      const firstPrice = first.type === 2 ? first.maxFeePerGas : first.gasPrice;
      const lastPrice = previous.type === 2 ? previous.maxFeePerGas : previous.gasPrice;
      expect(raised).toBeGreaterThan(15);
      expect(lastPrice).toBeLessThanOrEqual(FEE_CEILING_MULTIPLE * firstPrice);
      expect(lastPrice).toBeGreaterThan(8n * firstPrice);
    }
    // A first attempt priced at zero (a private chain) can still be re-priced, up to the floor of 1 gwei.
    expect(capsUnderCeiling({ type: 2, maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, {}).maxFeePerGas).toBe(GWEI);
    // Caps below the ceiling stay the caps.
    expect(capsUnderCeiling({ type: 2, maxFeePerGas: 21n * GWEI, maxPriorityFeePerGas: GWEI }, { maxFeePerGas: 30n * GWEI, maxTip: 2n * GWEI })).toEqual({ maxFeePerGas: 30n * GWEI, maxTip: 2n * GWEI });
  });

  it("re-prices a legacy transaction's gas price the same way", () => {
    const legacy = { type: 0 as const, gasPrice: 8n * GWEI };
    expect(replacementFees(legacy, { baseFeePerGas: null, tip: 20n * GWEI }, {})).toEqual({ outcome: "raised", fees: { type: 0, gasPrice: 20n * GWEI } });
    expect(replacementFees(legacy, { baseFeePerGas: null, tip: 8n * GWEI }, {})).toEqual({ outcome: "raised", fees: { type: 0, gasPrice: 9n * GWEI } });
    expect(replacementFees(legacy, { baseFeePerGas: null, tip: 20n * GWEI }, { maxFeePerGas: 8n * GWEI })).toEqual({ outcome: "at-cap", needed: { type: 0, gasPrice: 20n * GWEI } });
  });
});
