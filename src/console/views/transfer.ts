/** A transfer's page: its state and confirmations (from the node), its attempts, payout items and webhook deliveries. */
import type { Delivery, Payout, TransferStatus } from "../api-types.js";
import { byId, element, row, table } from "../dom.js";
import { tokenName } from "../figures.js";
import type { ViewContext } from "../view-context.js";
import { payoutItems, payoutSummary } from "./payout.js";
import type { WebhooksView } from "./webhooks.js";

export async function showTransfer(context: ViewContext, webhooks: WebhooksView, hash: string): Promise<void> {
  const { session } = context;
  const status = await session.get<TransferStatus>(`/transactions/${hash}`);
  const payout = status.payoutId === undefined ? undefined : await session.get<Payout>(`/payouts/${status.payoutId}`);
  const deliveries = await webhooks.deliveriesOf(context, hash);
  const facts = element("dl");
  const fact = (term: string, value: string | number) => facts.append(element("dt", term), element("dd", value));
  fact("Hash", hash);
  fact("State", status.state);
  fact("Confirmations", status.confirmations);
  fact("Network", status.network);
  if (status.transfer) fact("To", `${status.transfer.to} (${status.transfer.amountInTokens ?? "?"} ${(status.transfer.tokenSymbol && tokenName(status.transfer.tokenSymbol)) ?? "tokens"})`);
  if (status.carriedBy) fact("Carried by", status.carriedBy);
  if (payout && status.payoutId !== undefined) fact("Payout", payoutSummary(status.payoutId, payout));
  const attempts = table(["Attempt", "Kind", "Signed at block", "Max fee (wei)", "Fate"]);
  for (const attempt of status.attempts ?? []) row(attempts, [element("code", attempt.hash), attempt.kind, attempt.signedAtBlock, attempt.maxFeePerGas ?? attempt.gasPrice ?? "—", attempt.fate]);
  byId("detail-body").replaceChildren(
    facts,
    ...(payout ? payoutItems(payout) : []),
    element("h3", "Attempts"),
    (status.attempts ?? []).length > 0 ? attempts : element("p", "Not one of this service's transfers: no attempts."),
    element("h3", "Webhook deliveries"),
    deliveries.length > 0 ? deliveriesTable(deliveries) : element("p", session.admin ? "None." : "Shown to admin keys only."),
  );
  const detail = byId("detail");
  if (detail.hidden) {
    detail.hidden = false;
    byId("detail-title").focus();
  }
}

export function closeTransfer(): void {
  byId("detail").hidden = true;
  byId<HTMLInputElement>("search").focus();
}

function deliveriesTable(deliveries: Delivery[]): HTMLTableElement {
  const sent = table(["Webhook event", "State", "Tries", "Last answer"]);
  for (const delivery of deliveries) row(sent, [delivery.type, delivery.state, delivery.attempts, delivery.lastStatus ?? "—"]);
  return sent;
}
