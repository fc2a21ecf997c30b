/**
 * The daily fee budget: the wallets' spend over the last 24 hours (a day's window moving with the samples),
 * against FEE_BUDGET_PER_DAY, told in the log once as it passes 80 % and once as it passes all of it.
 */
import { Writable } from "node:stream";
import { parseEther } from "ethers";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/logger.js";
import { FEE_SAMPLE_INTERVAL_MS, FeeBudget } from "../../src/network/fee-budget.js";

const HOUR = 3_600_000;

function budgetOf(budgetEther: string | undefined) {
  let now = 1_000_000;
  let spent = 0n;
  const lines: { level: number; msg: string }[] = [];
  const log = createLogger("info", {}, new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(chunk.toString())), done()) }));
  const budget = new FeeBudget(budgetEther === undefined ? undefined : parseEther(budgetEther), () => spent, log, () => now);
  return {
    budget,
    lines,
    spend: (ether: string) => (spent += parseEther(ether)),
    after: (ms: number) => {
      // Sampled every interval as the service does, through `ms`.
      for (let waited = 0; waited < ms; waited += FEE_SAMPLE_INTERVAL_MS) {
        now += Math.min(FEE_SAMPLE_INTERVAL_MS, ms - waited);
        budget.sample();
      }
    },
  };
}

describe("the daily fee budget", () => {
  it("counts what was spent in the last 24 hours, forgetting what is older", () => {
    const day = budgetOf("1");
    day.spend("0.3");
    day.after(2 * HOUR);
    day.spend("0.2");
    day.after(HOUR);
    expect(day.budget.spentTodayWei()).toBe(parseEther("0.5"));
    // A day after the first spend it has left the window; the second is still in it.
    day.after(22 * HOUR);
    expect(day.budget.spentTodayWei()).toBe(parseEther("0.2"));
    day.after(3 * HOUR);
    expect(day.budget.spentTodayWei()).toBe(0n);
  });

  it("tells once as spending passes 80 %, once as it passes the budget, and again after it fell back under 80 %", () => {
    const day = budgetOf("1");
    day.spend("0.5");
    day.after(HOUR);
    day.spend("0.35");
    day.after(HOUR);
    day.after(HOUR);
    day.spend("0.2");
    day.after(HOUR);
    expect(day.lines.map((line) => [line.level, line.msg.split(":")[0]])).toEqual([
      [40, "the fee budget is nearly spent"],
      [50, "FEE BUDGET SPENT"],
    ]);
    // A day later it is all out of the window; a new crossing is told again.
    day.after(25 * HOUR);
    day.spend("0.9");
    day.after(HOUR);
    expect(day.lines.filter((line) => line.level === 40)).toHaveLength(2);
  });

  it("counts without a budget, and tells nothing", () => {
    const day = budgetOf(undefined);
    day.spend("5");
    day.after(HOUR);
    expect([day.budget.spentTodayWei(), day.lines]).toEqual([parseEther("5"), []]);
  });
});
