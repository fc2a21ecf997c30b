/**
 * A network's daily fee budget (FEE_BUDGET_PER_DAY): what its wallets' ETH went down by in the last 24 hours
 * (gas, as the lanes count it from one snapshot to the next), against the budget, for the metrics and their
 * alerts, with a log line when spending passes 80 % of it and when it passes all of it. A signal, not a stop:
 * what stops a key from burning fees is the ceiling on each transfer's re-pricing (replacement-fees.ts).
 */
import type { FastifyBaseLogger } from "fastify";
import { formatEther } from "ethers";
import { steadyWallClockNow } from "../clock.js";

const DAY_MS = 86_400_000;
/** How often the spending is sampled: the day's window moves by this much at a time. */
export const FEE_SAMPLE_INTERVAL_MS = 300_000;
/** Spending past this share of the budget is told once (and the alert FeeBudgetNearlySpent fires). */
const NEARLY = 0.8;
const LEVELS = ["none", "nearly", "spent"] as const;

export class FeeBudget {
  // The wallets' cumulative spend at each sample, oldest first: a day and one sample of them at most.
  readonly #samples: { at: number; spent: bigint }[] = [];
  #told: (typeof LEVELS)[number] = "none";

  constructor(
    /** The budget, wei; undefined: none set (the spend is still counted). */
    readonly budgetWei: bigint | undefined,
    /** What the network's wallets spent since the process started, wei (counted up, never down). */
    private readonly spentSinceStart: () => bigint,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = steadyWallClockNow,
  ) {
    this.#samples.push({ at: this.now(), spent: 0n });
  }

  /** Spent in the last 24 hours (since the process started, when that is less): wei. */
  spentTodayWei(): bigint {
    const now = this.now();
    const dayAgo = now - DAY_MS;
    // The latest sample at or before a day ago is where the window starts (the first, at 0, before a day has passed).
    let start = this.#samples[0];
    for (const sample of this.#samples) if (sample.at <= dayAgo) start = sample;
    return this.spentSinceStart() - start.spent;
  }

  /** Takes a sample, forgets those older than the window needs, and tells when spending crossed 80 % or all of the budget. */
  sample(): void {
    const now = this.now();
    this.#samples.push({ at: now, spent: this.spentSinceStart() });
    while (this.#samples.length > 2 && this.#samples[1].at <= now - DAY_MS) this.#samples.shift();
    this.#tell();
  }

  #tell(): void {
    if (this.budgetWei === undefined || this.budgetWei === 0n) return;
    const spent = this.spentTodayWei();
    const level = spent >= this.budgetWei ? "spent" : Number(spent) >= NEARLY * Number(this.budgetWei) ? "nearly" : "none";
    // Each crossing upwards is told once; back under 80 %, the next crossing is told again.
    const rising = LEVELS.indexOf(level) > LEVELS.indexOf(this.#told);
    if (rising || level === "none") this.#told = level;
    if (!rising) return;
    const detail = { spentWei: spent.toString(), budgetWei: this.budgetWei.toString() };
    const words = `the wallets spent ${formatEther(spent)} in fees in the last 24 hours, of FEE_BUDGET_PER_DAY ${formatEther(this.budgetWei)}`;
    if (level === "spent") this.log.error(detail, `FEE BUDGET SPENT: ${words}; look at what was re-priced (GET /transactions/:hash) and who asked (GET /audit)`);
    else this.log.warn(detail, `the fee budget is nearly spent: ${words}`);
  }
}

/** Samples the budget every FEE_SAMPLE_INTERVAL_MS until stopped. */
export function runFeeSampling(budget: FeeBudget, intervalMs = FEE_SAMPLE_INTERVAL_MS): { stop(): void } {
  const timer = setInterval(() => budget.sample(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
