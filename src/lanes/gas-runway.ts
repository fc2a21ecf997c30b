/**
 * How long a lane's gas lasts at its recent spend: its ETH balance over what its balance went down by in
 * the last hour (or since the service started, if that is shorter), as the console and /wallet show it.
 * The same figure as the LaneGasRunwayShort alert, without Prometheus.
 */
import { monotonicNow } from "../clock.js";

const WINDOW_MS = 3_600_000;

export class GasRunway {
  // Running totals of the gas spent (wei), with when each was reached; the first one is the window's start.
  readonly #samples: { at: number; spent: bigint }[] = [{ at: monotonicNow(), spent: 0n }];

  /** The lane's running total of gas spent, read with each of its snapshots. */
  record(spent: bigint): void {
    const now = monotonicNow();
    if (spent !== this.#samples.at(-1)?.spent) this.#samples.push({ at: now, spent });
    // Keep one sample at or before the window's start, so the window is always covered.
    while (this.#samples.length > 2 && this.#samples[1].at <= now - WINDOW_MS) this.#samples.shift();
  }

  /** Hours `balance` lasts at the spend of the window; null when nothing was spent in it. */
  hours(balance: bigint): number | null {
    const now = monotonicNow();
    const [start] = this.#samples;
    const spent = (this.#samples.at(-1)?.spent ?? 0n) - start.spent;
    const elapsedMs = Math.min(now - start.at, WINDOW_MS);
    if (spent <= 0n || elapsedMs <= 0) return null;
    const perHour = (Number(spent) * 3_600_000) / elapsedMs;
    return Math.round((Number(balance) / perHour) * 10) / 10;
  }
}
