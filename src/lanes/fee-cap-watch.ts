/**
 * Says when the chain's fees near the fee cap (MAX_FEE_PER_GAS, or the chain's default ceiling): past it,
 * transfers are signed at the cap and wait unmined, every later one behind them. Told before, not after:
 * once every WARN_EVERY_MS at most while the fees stay there.
 */
import type { FastifyBaseLogger } from "fastify";
import { formatUnits } from "ethers";
import { monotonicNow } from "../clock.js";

/** What a transaction needs (twice the base fee plus the tip) as a share of the cap that is told. */
const NEAR = 0.8;
const WARN_EVERY_MS = 600_000;

export class FeeCapWatch {
  #toldAt: number | undefined;

  constructor(
    /** The cap on maxFeePerGas, wei; undefined: none (nothing to tell). */
    private readonly capWei: bigint | undefined,
    /** Whether the cap is the chain's default (MAX_FEE_PER_GAS unset), for the words. */
    private readonly isDefault: boolean,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = monotonicNow,
  ) {}

  /** A block's base fee and the tip offered: told when what a transaction needs nears the cap. */
  note(baseFeePerGas: bigint, tip: bigint): void {
    if (this.capWei === undefined) return;
    const needed = 2n * baseFeePerGas + tip;
    if (Number(needed) < NEAR * Number(this.capWei)) return;
    if (this.#toldAt !== undefined && this.now() - this.#toldAt < WARN_EVERY_MS) return;
    this.#toldAt = this.now();
    const which = this.isDefault ? "the chain's default fee ceiling (MAX_FEE_PER_GAS is unset; set it to raise it)" : "MAX_FEE_PER_GAS";
    this.log.warn(
      { neededGwei: formatUnits(needed, "gwei"), capGwei: formatUnits(this.capWei, "gwei"), baseFeeGwei: formatUnits(baseFeePerGas, "gwei") },
      `the chain's fees near the fee cap, ${which}: transfers signed above it wait unmined at the cap, and every later one behind them`,
    );
  }
}
