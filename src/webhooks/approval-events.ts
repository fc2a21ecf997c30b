/** The webhook events of a transfer's two-person approval: it waits for an admin, or it will never be sent. */
import { randomUUID } from "node:crypto";
import { steadyWallClockNow } from "../clock.js";
import { formatTokenAmount } from "../domain/token-amount.js";
import type { ApprovalEventType, JournalEntry, RecordedRefusal, WebhookEventRecord } from "../journal/transfer-journal.js";
import { tokenAt } from "../network-settings/network-choice.js";
import type { EventSource } from "./transfer-events.js";

/**
 * transfer.awaiting_approval when it is journaled; transfer.rejected, with the reason, when an admin rejected
 * it, it expired, or it was refused when approved (417). Its `id` is the one GET /transfers lists and
 * POST /transfers/{id}/approve takes. Nothing of it was signed: there is no hash.
 */
export function approvalEvent(type: ApprovalEventType, entry: JournalEntry, source: EventSource, reason: RecordedRefusal | null = null): WebhookEventRecord {
  const token = tokenAt(source.tokens, entry.token);
  const data = {
    id: entry.id,
    network: source.network.name,
    chainId: Number(source.network.chainId),
    token: token?.address ?? entry.token,
    tokenSymbol: token?.symbol ?? entry.token,
    recipient: entry.recipient,
    amount: entry.units.toString(),
    amountInTokens: token ? formatTokenAmount(entry.units, token.decimals) : null,
    payoutItems: entry.payout ? entry.payout.items.filter((item) => item.duplicateOf === undefined).length : null,
    apiKeyId: entry.apiKeyId ?? null,
    // The journal keys idempotency per API key ("<key id>/<client's key>"); the client knows its own part.
    idempotencyKey: entry.idempotencyKey && entry.apiKeyId ? entry.idempotencyKey.slice(entry.apiKeyId.length + 1) : null,
    expiresAt: entry.approval ? new Date(entry.approval.expiresAt).toISOString() : null,
    decidedBy: entry.approval?.decidedBy ?? null,
    reason,
  };
  const body = JSON.stringify({ type, timestamp: new Date(steadyWallClockNow()).toISOString(), data });
  return { id: `msg_${randomUUID().replaceAll("-", "")}`, type, entryId: entry.id, body };
}
