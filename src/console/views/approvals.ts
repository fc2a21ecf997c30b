/**
 * Transfers above APPROVAL_ABOVE that wait for a second admin key, the soonest to expire first, with both
 * decisions for an admin (the service refuses the key that asked: the outcome line then says so).
 */
import type { HistoryItem, TransferList } from "../api-types.js";
import { button, byId, element, row, table } from "../dom.js";
import { itemAmountOf, recipientsOf, whatItMoves } from "../figures.js";
import { confirmThen } from "../page-actions.js";
import type { ViewContext } from "../view-context.js";

export async function showApprovals(context: ViewContext): Promise<void> {
  const { session } = context;
  const { transfers } = await session.get<TransferList>(`/transfers?state=awaiting_approval&limit=100${session.onNetwork()}`);
  const target = byId("approvals");
  if (transfers.length === 0) {
    target.replaceChildren(element("p", "Nothing awaits approval."));
    return;
  }
  transfers.sort((a, b) => (a.approval?.expiresAt ?? "").localeCompare(b.approval?.expiresAt ?? ""));
  const awaiting = table(["Id", "To", "Amount", "Asked by", "Key", "Expires", ...(session.admin ? ["Decide"] : [])]);
  for (const item of transfers) {
    const decide = element("span", undefined, "actions");
    if (session.admin) decide.append(approvalButton(context, "Approve", item), approvalButton(context, "Reject", item));
    const expires = item.approval ? new Date(item.approval.expiresAt).toLocaleString() : "—";
    const added = row(awaiting, [item.id, recipientsOf(item), whatItMoves(item), item.apiKeyId ?? "—", item.idempotencyKey ?? "—", expires, ...(session.admin ? [decide] : [])]);
    added.dataset.id = String(item.id);
  }
  target.replaceChildren(awaiting);
}

function approvalButton(context: ViewContext, label: "Approve" | "Reject", item: HistoryItem): HTMLButtonElement {
  // Who is paid, every one of them: an approver decides on the recipients, not on a contract and a total.
  const what = item.kind === "payout" ? `${whatItMoves(item)}: ${(item.items ?? []).map((payoutItem) => `${payoutItem.toAddress} ${itemAmountOf(item, payoutItem)}`).join(", ")}` : `${whatItMoves(item)} to ${item.transfer.to}`;
  const question =
    label === "Approve"
      ? `Approve transfer ${item.id} (${what})? It is signed and sent now.`
      : `Reject transfer ${item.id} (${what})? It is never sent, and its client is told so.`;
  return button(label, `${label} transfer ${item.id}`, () => void confirmThen(context, question, "POST", `/transfers/${item.id}/${label.toLowerCase()}`));
}
