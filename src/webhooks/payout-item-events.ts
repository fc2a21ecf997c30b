/**
 * The webhook events of each item of a payout batch: made beside the batch's own events (a batch is a
 * transfer to the payout contract), one per item the batch pays, in the same turn and so the same commit.
 */
import { randomUUID } from "node:crypto";
import { steadyWallClockNow } from "../clock.js";
import { formatTokenAmount } from "../domain/token-amount.js";
import type { JournalEntry, PayoutItemEventType, PayoutOrder, TransferEventType, WebhookEventRecord } from "../journal/transfer-journal.js";
import { tokenAt } from "../network-settings/network-choice.js";
import { BATCH_FAILED, failedItems } from "../node/payout-batch.js";
import type { EventSource, MinedFacts } from "./transfer-events.js";

/** What became of one item the batch paid. */
export interface ItemFate {
  state: "paid" | "failed";
  reason: string | null;
}

/** A receipt as the watcher reads it. */
export interface ReceiptLogs {
  status: string;
  logs: { address: string; topics: string[]; data: string }[];
}

/**
 * The fate of each item the batch pays (in the order of the call: duplicates left out), from its outcome
 * and the mined attempt's receipt (null when none was mined: the nonce went to another transaction).
 */
export function itemFatesOf(entry: JournalEntry & { payout: PayoutOrder }, outcome: TransferEventType, receipt: ReceiptLogs | null): ItemFate[] {
  const paid = entry.payout.items.filter((item) => item.duplicateOf === undefined);
  const allFailed = (reason: string) => paid.map(() => ({ state: "failed" as const, reason }));
  if (outcome === "transfer.cancelled") return allFailed(BATCH_FAILED.cancelled);
  if (!receipt) return allFailed(BATCH_FAILED.replaced);
  if (receipt.status !== "0x1") return allFailed(BATCH_FAILED.reverted);
  const failed = failedItems(receipt.logs, entry.payout.contract, entry.lane);
  // A batch reported failed moved no tokens (its token logged no Transfer): no item of it was paid.
  const unpaid = outcome === "transfer.failed";
  return paid.map((_item, index) => {
    const reason = failed.get(index) ?? (unpaid ? "the batch moved no tokens: the token logged no Transfer for it" : undefined);
    return reason === undefined ? { state: "paid", reason: null } : { state: "failed", reason };
  });
}

/**
 * One event of `type` per item the batch pays: with `fates` (paid, failed, finalized) each item's own
 * outcome; without (reorged) the items are pending again.
 */
export function payoutItemEvents(
  type: PayoutItemEventType,
  entry: JournalEntry & { payout: PayoutOrder },
  hash: string,
  source: EventSource,
  mined: MinedFacts,
  fates?: readonly ItemFate[],
): WebhookEventRecord[] {
  const token = tokenAt(source.tokens, entry.token);
  const paid = entry.payout.items.filter((item) => item.duplicateOf === undefined);
  const timestamp = new Date(steadyWallClockNow()).toISOString();
  return paid.flatMap((item, index) => {
    const fate = fates?.[index] ?? { state: "pending" as const, reason: null };
    // Only the events of what happened: "paid" and "failed" each for its own items.
    if ((type === "payout.item.paid" && fate.state !== "paid") || (type === "payout.item.failed" && fate.state !== "failed")) return [];
    const data = {
      payoutId: entry.id,
      itemId: item.id,
      toAddress: item.recipient,
      amount: item.units.toString(),
      amountInTokens: token ? formatTokenAmount(item.units, token.decimals) : null,
      state: fate.state,
      reason: fate.reason,
      transferHash: entry.hash,
      hash,
      network: source.network.name,
      chainId: Number(source.network.chainId),
      token: token?.address ?? entry.token,
      tokenSymbol: token?.symbol ?? entry.token,
      apiKeyId: entry.apiKeyId ?? null,
      idempotencyKey: entry.idempotencyKey && entry.apiKeyId ? entry.idempotencyKey.slice(entry.apiKeyId.length + 1) : null,
      blockNumber: mined.blockNumber,
      blockHash: mined.blockHash,
      confirmations: mined.confirmations,
    };
    return [{ id: `msg_${randomUUID().replaceAll("-", "")}`, type, entryId: entry.id, body: JSON.stringify({ type, timestamp, data }) }];
  });
}
