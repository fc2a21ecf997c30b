/**
 * The unexpected outflows this process has seen, on every network: the latest for /wallet and the console,
 * and a count per wallet for the metrics. Bounded: an attacker holding the key makes as many as it pays gas for.
 */
import type { UnexpectedOutflow } from "./outflow-watch.js";

/** An outflow as reported: where, and when it was noticed. */
export interface ReportedOutflow extends UnexpectedOutflow {
  /** The network's name. */
  network: string;
  chainId: number;
  /** When the service noticed it (ISO time). */
  detectedAt: string;
}

/** How many outflows are kept to show, per network (a flood on one hides none of another's); older ones are only counted. */
const KEPT = 100;

export class UnexpectedOutflows {
  readonly #recent = new Map<string, ReportedOutflow[]>();
  readonly #counts = new Map<string, { network: string; wallet: string; count: number }>();

  record(outflow: ReportedOutflow): void {
    const kept = this.#recent.get(outflow.network) ?? [];
    kept.push(outflow);
    if (kept.length > KEPT) kept.shift();
    this.#recent.set(outflow.network, kept);
    const key = `${outflow.network}/${outflow.wallet}`;
    const counted = this.#counts.get(key) ?? { network: outflow.network, wallet: outflow.wallet, count: 0 };
    counted.count++;
    this.#counts.set(key, counted);
  }

  /** The latest of one network, newest first, at most `limit`. */
  recent(network: string, limit: number): ReportedOutflow[] {
    return (this.#recent.get(network) ?? []).slice(-limit).reverse();
  }

  /** How many each wallet had on each network since the process started. */
  counts(): { network: string; wallet: string; count: number }[] {
    return [...this.#counts.values()];
  }
}
