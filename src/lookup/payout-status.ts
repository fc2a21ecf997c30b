/**
 * What became of a payout batch and of each of its items: the batch is a transaction of the wallet like a
 * transfer (its status document says what became of it), and each item's fate is in the mined receipt:
 * the payout contract reports every item it could not pay, with the token's reason.
 */
import { formatTokenAmount } from "../domain/token-amount.js";
import type { JournalEntry, PayoutOrder } from "../journal/transfer-journal.js";
import { BATCH_FAILED, failedItems } from "../node/payout-batch.js";
import type { TransactionLookup } from "./transaction-lookup.js";
import type { TransactionState, TransactionStatus, TransactionStatusReader } from "./transaction-status.js";

/**
 * pending: its batch is not mined (or mined, and its receipt not read yet), or the item failed in a block
 * not final yet (reason says how: a reorganisation may still change it); paid: the batch was mined and the
 * contract paid it; failed, for good: the item's transfer failed in a final block (reason), or the batch
 * reverted, was cancelled or lost its nonce in a final block, or was never sent.
 */
export type PayoutItemState = "pending" | "paid" | "failed";

export interface PayoutItemStatus {
  id: string;
  toAddress: string;
  /** In whole tokens ("12.5"), and in base units. */
  amount: string;
  units: string;
  state: PayoutItemState;
  /** Why it failed, in words; null unless failed. */
  reason: string | null;
  /** Set when an earlier batch (this id) holds the item's id: this batch did not pay it, and `state` is that batch's. */
  duplicateOf: number | null;
}

export interface PayoutStatus {
  /** The batch's id: its journal entry's (as GET /transfers lists it). */
  id: number;
  /** The payout contract that pays it. */
  contract: string;
  /** The status document of the batch's transaction (its state, confirmations, attempts, finality). */
  transaction: TransactionStatus;
  items: PayoutItemStatus[];
}

/** Why every item of a batch that will never pay failed. */
const BATCH_FAILURES: Partial<Record<TransactionState, string>> = {
  failed: BATCH_FAILED.reverted,
  cancelled: BATCH_FAILED.cancelled,
  replaced: BATCH_FAILED.replaced,
  rejected: BATCH_FAILED.rejected,
};

export class PayoutStatusReader {
  constructor(
    private readonly statuses: TransactionStatusReader,
    private readonly lookup: TransactionLookup,
    /** The decimals of the token the batch pays in. */
    private readonly decimalsOf: (token: string) => number | undefined,
  ) {}

  /** The status of a payout batch's journal entry (one with `payout`, signed); item ids an earlier batch holds are described by `earlier`. */
  async read(entry: JournalEntry & { payout: PayoutOrder }, earlier: (batchId: number, itemId: string) => Promise<PayoutItemStatus | undefined>): Promise<PayoutStatus> {
    const transaction = await this.statuses.read((entry.hash as string).toLowerCase());
    const fates = await this.#fatesOfPaidItems(entry.payout, entry.lane, transaction);
    const decimals = this.decimalsOf(entry.token);
    let paidIndex = 0;
    const items: PayoutItemStatus[] = [];
    for (const item of entry.payout.items) {
      const amount = decimals === undefined ? item.units.toString() : formatTokenAmount(item.units, decimals);
      const described = { id: item.id, toAddress: item.recipient, amount, units: item.units.toString() };
      if (item.duplicateOf !== undefined) {
        const first = await earlier(item.duplicateOf, item.id).catch(() => undefined);
        items.push({ ...described, ...(first ? { state: first.state, reason: first.reason } : unreadEarlier(item.duplicateOf)), duplicateOf: item.duplicateOf });
        continue;
      }
      items.push({ ...described, ...fates(paidIndex++), duplicateOf: null });
    }
    return { id: entry.id, contract: entry.payout.contract, transaction, items };
  }

  // What became of the batch's n-th paid item (its index in the contract call). A failure is reported as
  // such only once final: a client pays a failed item again, and a reorganisation could still mine the batch
  // (a cancel's block taken away) or mine it anew with another outcome.
  async #fatesOfPaidItems(payout: PayoutOrder, wallet: string, transaction: TransactionStatus): Promise<(paidIndex: number) => { state: PayoutItemState; reason: string | null }> {
    const failure = (reason: string) => (transaction.finalized || transaction.state === "rejected" ? { state: "failed" as const, reason } : { state: "pending" as const, reason: `${reason} (not final yet: the block may still be reorganised)` });
    const batchFailure = BATCH_FAILURES[transaction.state];
    if (batchFailure) return () => failure(batchFailure);
    if (transaction.state !== "confirmed" || !transaction.carriedBy) return () => ({ state: "pending", reason: null });
    const receipt = await this.lookup.receipt(transaction.carriedBy.toLowerCase());
    // A receipt index lagging its head proves nothing, and one of another block than the status read (a
    // reorganisation between the two reads) describes another outcome: the items wait.
    if (!receipt || String(receipt.blockHash).toLowerCase() !== String(transaction.blockHash).toLowerCase()) return () => ({ state: "pending", reason: null });
    const failed = failedItems((receipt.logs ?? []) as { address: string; topics: string[]; data: string }[], payout.contract, wallet);
    return (paidIndex) => {
      const reason = failed.get(paidIndex);
      return reason === undefined ? { state: "paid", reason: null } : failure(reason);
    };
  }
}

/** A duplicate whose earlier batch cannot be described now (a read that failed, or a batch retention archived). */
export function unreadEarlier(batchId: number): { state: "pending"; reason: string } {
  return { state: "pending", reason: `not paid by this batch: batch ${batchId} holds the id, and its outcome could not be read now (GET /payouts/${batchId})` };
}
