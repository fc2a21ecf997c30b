/**
 * What the service offers to pay for gas. The tip is a percentile of what recent blocks' transactions paid
 * (eth_feeHistory), never below a floor; maxFeePerGas is twice the base fee plus the tip, which stays
 * valid through several blocks of rising base fee; neither ever goes above the operator's caps.
 */

export interface FeePolicy {
  /** Which percentile of each recent block's tips to follow (0 to 100). */
  tipPercentile: number;
  /** The least tip offered, wei: recent blocks may be empty (no tips at all). */
  minTip: bigint;
  /** Caps, wei; none when undefined. No transaction goes above them. */
  maxFeePerGas?: bigint;
  maxTip?: bigint;
}

/** How many recent blocks the tip is read from. */
export const FEE_HISTORY_BLOCKS = 5;

/** The fees a transaction is signed with. */
export interface OfferedFees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * On a chain without EIP-1559 (no base fee), the gas price of a legacy transaction: the node's
 * eth_gasPrice, within the fee cap. Both fields carry it, so that what one gas may cost reads the same.
 */
export function offeredLegacyFees(gasPrice: bigint, policy: FeePolicy): OfferedFees {
  const capped = policy.maxFeePerGas !== undefined && gasPrice > policy.maxFeePerGas ? policy.maxFeePerGas : gasPrice;
  return { maxFeePerGas: capped, maxPriorityFeePerGas: capped };
}

/**
 * The tip recent blocks call for: the median of each block's `tipPercentile` reward (eth_feeHistory's
 * `reward`, one array per block), at least the policy's floor.
 */
export function tipFromFeeHistory(rewards: readonly (readonly string[])[], policy: FeePolicy): bigint {
  const perBlock = rewards.map((block) => BigInt(block[0] ?? "0x0")).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const median = perBlock.length === 0 ? 0n : perBlock[Math.floor(perBlock.length / 2)];
  return median > policy.minTip ? median : policy.minTip;
}

/** The fees to sign with for a base fee and a tip, within the caps. */
export function offeredFees(baseFeePerGas: bigint, tip: bigint, policy: FeePolicy): OfferedFees {
  const maxPriorityFeePerGas = policy.maxTip !== undefined && tip > policy.maxTip ? policy.maxTip : tip;
  const wanted = 2n * baseFeePerGas + maxPriorityFeePerGas;
  const maxFeePerGas = policy.maxFeePerGas !== undefined && wanted > policy.maxFeePerGas ? policy.maxFeePerGas : wanted;
  // A tip above the fee cap is refused by every node: the cap wins.
  return { maxFeePerGas, maxPriorityFeePerGas: maxPriorityFeePerGas > maxFeePerGas ? maxFeePerGas : maxPriorityFeePerGas };
}
