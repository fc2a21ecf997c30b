/**
 * The fees of a replacement: raised field by field to the larger of what the chain needs now and the
 * previous attempt's value plus 12.5%, never above the operator's caps, nor (without an admin's explicit
 * say) above FEE_CEILING_MULTIPLE times the fee cap of the transaction's first attempt. geth (and most pools after it)
 * refuses a replacement unless every fee field rose by at least 10%, so a cap that allows less than that
 * means the transfer is at its cap: nothing more can be done for it but wait.
 */
import { Transaction } from "ethers";
import type { JournalEntry } from "../journal/transfer-journal.js";
import type { FeePolicy } from "./fee-policy.js";
import { type AttemptFees, feesOf, maxPricePerGas } from "./wallet-transaction.js";

/** What the chain asks for now: the latest base fee (null without EIP-1559) and the tip recent blocks paid (or, without a base fee, the gas price). */
export interface FeeMarket {
  baseFeePerGas: bigint | null;
  tip: bigint;
}

export type Repricing = { outcome: "raised"; fees: AttemptFees } | { outcome: "at-cap"; needed: AttemptFees };

/**
 * No attempt offers more per gas than this many times its transaction's first attempt: a ceiling that
 * exists whatever the configuration, so that re-pricing (a client's, the background's) cannot burn the
 * wallet's ETH. A market that moves further leaves the transfer waiting at it, for an admin to decide.
 */
export const FEE_CEILING_MULTIPLE = 10n;

/** The ceiling is never below this per gas (1 gwei): a first attempt priced at zero or near it (a quiet L2) can still be re-priced. */
export const FEE_CEILING_FLOOR = 1_000_000_000n;

/** The fees of a transfer's first attempt, which its ceiling is counted from. */
export function firstFeesOf({ attempts }: Pick<JournalEntry, "attempts">): AttemptFees {
  return feesOf(Transaction.from(attempts[0].rawTransaction));
}

/** The caps a re-pricing of a transaction first signed with `first` stays within: the policy's, and the ceiling. */
export function capsUnderCeiling(first: AttemptFees, policy: Pick<FeePolicy, "maxFeePerGas" | "maxTip">): Pick<FeePolicy, "maxFeePerGas" | "maxTip"> {
  const tenfold = FEE_CEILING_MULTIPLE * maxPricePerGas(first);
  const ceiling = tenfold > FEE_CEILING_FLOOR ? tenfold : FEE_CEILING_FLOOR;
  return { maxFeePerGas: policy.maxFeePerGas !== undefined && policy.maxFeePerGas < ceiling ? policy.maxFeePerGas : ceiling, maxTip: policy.maxTip };
}

/** What a transaction needs to be mined soon, before any cap: the policy's own price for this market. */
export function neededFees({ baseFeePerGas, tip }: FeeMarket): AttemptFees {
  return baseFeePerGas === null ? { type: 0, gasPrice: tip } : { type: 2, maxFeePerGas: 2n * baseFeePerGas + tip, maxPriorityFeePerGas: tip };
}

/**
 * True when these fees cannot get the transaction mined in this market: below the base fee plus the tip
 * recent blocks paid, or a tip below theirs (legacy: a gas price below the node's). Fees that merely
 * could not ride out more base fee rises are not underpriced: the transaction is only queued.
 */
export function isUnderpriced(fees: AttemptFees, market: FeeMarket): boolean {
  // Legacy transactions carry one price; an EIP-1559 one in a legacy market is judged by its fee cap.
  if (fees.type === 0 || market.baseFeePerGas === null) return maxPricePerGas(fees) < market.tip;
  return fees.maxPriorityFeePerGas < market.tip || fees.maxFeePerGas < market.baseFeePerGas + market.tip;
}

/** True when a node would refuse these fees outright: a fee cap below the latest base fee. */
export function belowBaseFee(fees: AttemptFees, market: FeeMarket): boolean {
  return market.baseFeePerGas !== null && maxPricePerGas(fees) < market.baseFeePerGas;
}

/** The replacement fees for `previous` in `market` within `policy`'s caps, or at-cap with what the chain needs. */
export function replacementFees(previous: AttemptFees, market: FeeMarket, policy: Pick<FeePolicy, "maxFeePerGas" | "maxTip">): Repricing {
  const needed = neededFees(market);
  if (previous.type === 0 || needed.type === 0) {
    const before = maxPricePerGas(previous);
    const gasPrice = atMost(max(maxPricePerGas(needed), bumped(before)), policy.maxFeePerGas);
    return gasPrice < raisedEnough(before) ? { outcome: "at-cap", needed } : { outcome: "raised", fees: { type: 0, gasPrice } };
  }
  let tip = atMost(max(needed.maxPriorityFeePerGas, bumped(previous.maxPriorityFeePerGas)), policy.maxTip);
  // The fee cap must still cover twice the base fee plus the new tip.
  const maxFeePerGas = atMost(max(2n * (market.baseFeePerGas as bigint) + tip, bumped(previous.maxFeePerGas)), policy.maxFeePerGas);
  if (tip > maxFeePerGas) tip = maxFeePerGas;
  if (tip < raisedEnough(previous.maxPriorityFeePerGas) || maxFeePerGas < raisedEnough(previous.maxFeePerGas)) return { outcome: "at-cap", needed };
  return { outcome: "raised", fees: { type: 2, maxFeePerGas, maxPriorityFeePerGas: tip } };
}

/** +12.5%, rounded up. */
function bumped(value: bigint): bigint {
  return value + (value + 7n) / 8n;
}

/** The least a replacement must offer to be taken by geth: +10%, rounded up. */
function raisedEnough(value: bigint): bigint {
  return value + (value + 9n) / 10n;
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

function atMost(value: bigint, cap: bigint | undefined): bigint {
  return cap !== undefined && value > cap ? cap : value;
}
