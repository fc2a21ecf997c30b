/** A transfer's approval as the API answers it, shared by the routes that make, list and decide one. */
import { formatTokenAmount } from "../domain/token-amount.js";
import type { JournalEntry } from "../journal/transfer-journal.js";
import type { Approval } from "./schemas.js";
import type { TransferNetwork } from "./transfer-network.js";

/** A transfer's approval as the API answers it: the 202 of POST /transfer and /payouts, and a rejection's answer. */
export function describeApproval(entry: JournalEntry, network: Pick<TransferNetwork, "network" | "token" | "tokenDecimals">): Approval {
  const approval = entry.approval ?? { expiresAt: entry.createdAt, decidedBy: null, decidedAt: null };
  const state = entry.state === "awaiting-approval" ? "awaiting_approval" : entry.refusal?.code === "APPROVAL_EXPIRED" ? "expired" : "rejected";
  return {
    id: entry.id,
    state,
    network: network.network.name,
    token: network.token.symbol,
    toAddress: entry.recipient,
    amount: formatTokenAmount(entry.units, network.tokenDecimals),
    units: entry.units.toString(),
    payoutItems: entry.payout ? entry.payout.items.filter((item) => item.duplicateOf === undefined).length : null,
    apiKeyId: entry.apiKeyId ?? null,
    expiresAt: new Date(approval.expiresAt).toISOString(),
    decidedBy: approval.decidedBy,
    decidedAt: approval.decidedAt === null ? null : new Date(approval.decidedAt).toISOString(),
  };
}
