/**
 * What the service offers to pay for gas. The tip is a percentile of what recent blocks' transactions paid
 * (eth_feeHistory), never below a floor; maxFeePerGas is twice the base fee plus the tip, which stays
 * valid through several blocks of rising base fee; neither ever goes above the operator's caps.
 */
import { parseUnits } from "ethers";

export interface FeePolicy {
  /** Which percentile of each recent block's tips to follow (0 to 100). */
  tipPercentile: number;
  /** The least tip offered, wei: recent blocks may be empty (no tips at all). */
  minTip: bigint;
  /** Caps, wei; none when undefined. No transaction goes above them. */
  maxFeePerGas?: bigint;
  maxTip?: bigint;
}

/**
 * With no MAX_FEE_PER_GAS, no transaction offers more per gas than this, by chain id (gwei): what fee spikes
 * there have reached, with room, so that a market gone wild (or an endpoint that says it has) cannot have a
 * first attempt burn the wallet's ETH; the 10x ceiling bounds its re-pricings. An operator raises (or
 * lowers) it with MAX_FEE_PER_GAS. A chain not named has none: its fees' magnitude is not known here (some
 * price gas in tens of thousands of gwei), and a cap below its market would stop every transfer.
 */
const FEE_CEILING_GWEI_BY_CHAIN = new Map<bigint, string>([
  // Ethereum and its testnets.
  [1n, "2000"],
  [11155111n, "2000"],
  [17000n, "2000"],
  [560048n, "2000"],
  // Rollups: their base fees are a small fraction of a gwei, their spikes a few gwei.
  [8453n, "100"],
  [84532n, "100"],
  [10n, "100"],
  [11155420n, "100"],
  [42161n, "100"],
  [42170n, "100"],
  [421614n, "100"],
  // Polygon PoS counts fees in POL, whose spikes have passed 1,000 gwei.
  [137n, "30000"],
  [80002n, "30000"],
  [56n, "1000"],
  [97n, "1000"],
]);
/** The most per gas any transaction offers on `chainId` without MAX_FEE_PER_GAS, wei; undefined for a chain not named. */
export function defaultFeeCeilingWei(chainId: bigint): bigint | undefined {
  const gwei = FEE_CEILING_GWEI_BY_CHAIN.get(chainId);
  return gwei === undefined ? undefined : parseUnits(gwei, "gwei");
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
