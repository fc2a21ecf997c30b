/** A payout batch's items, as a transfer's page shows them: each recipient, amount, state and reason. */
import type { Payout } from "../api-types.js";
import { element, row, table } from "../dom.js";

/** The facts' line of a payout: how many items, how many paid and failed. */
export function payoutSummary(payoutId: number, payout: Payout): string {
  const count = (state: string) => payout.items.filter((item) => item.state === state).length;
  return `${payoutId}: ${payout.items.length} items, ${count("paid")} paid, ${count("failed")} failed`;
}

export function payoutItems(payout: Payout): HTMLElement[] {
  const items = table(["Item", "To", "Amount", "State", "Reason"]);
  for (const item of payout.items) {
    const state = item.duplicateOf === null ? item.state : `${item.state} (paid by payout ${item.duplicateOf}, not this one)`;
    const amount = `${item.amount} ${payout.token.startsWith("0x") ? "" : payout.token}`.trim();
    const added = row(items, [item.id, element("code", item.toAddress), amount, element("span", state, `state-${item.state}`), item.reason ?? "—"]);
    added.dataset.item = item.id;
  }
  return [element("h3", "Payout items"), items];
}
