/** The transfers in flight (with an admin's Re-price and Cancel) and the recent ones, or those a search names. */
import type { TransferList, HistoryItem } from "../api-types.js";
import { button, byId, element, row, table } from "../dom.js";
import { ageSeconds, shortHash, whatItMoves } from "../figures.js";
import { confirmThen, transferLink } from "../page-actions.js";
import type { ViewContext } from "../view-context.js";

const RECENT_LIMIT = 25;
/** As the service counts a transfer stuck: over this long unmined. */
const STUCK_AFTER_SECONDS = 120;

export class TransfersView {
  // Cancels and re-prices the service accepted (202) for transfers still in flight: their row says so.
  readonly #requested = new Map<string, string>();
  // What the search box names (a recipient, an Idempotency-Key, a payout item id); undefined: the recent ones.
  search: string | undefined;

  async showInFlight(context: ViewContext): Promise<void> {
    const { session } = context;
    const { transfers } = await session.get<TransferList>(`/transfers?state=pending,sending&limit=100${session.onNetwork()}`);
    const target = byId("in-flight");
    if (transfers.length === 0) {
      target.replaceChildren(element("p", "Nothing in flight."));
      return;
    }
    // A request is shown while its transfer is in flight, and forgotten once it is not.
    for (const hash of this.#requested.keys()) if (!transfers.some((item) => item.hash === hash)) this.#requested.delete(hash);
    const inFlight = table(["Transfer", "To", "Amount", "Nonce", "Waiting", ...(session.admin ? ["Actions"] : [])]);
    for (const item of transfers) {
      const age = ageSeconds(item.createdAt);
      const stuck = age > STUCK_AFTER_SECONDS;
      const actions = element("span", undefined, "actions");
      const requested = item.hash ? this.#requested.get(item.hash) : undefined;
      if (requested) actions.append(element("span", requested, "muted"));
      else if (session.admin && item.hash) actions.append(this.#actionButton(context, "Re-price", item.hash, "reprice"), this.#actionButton(context, "Cancel", item.hash, "cancel"));
      const waiting = element("span", stuck ? `${age} s, stuck` : `${age} s`, stuck ? "warn" : "");
      const added = row(inFlight, [transferLink(context, item.hash), element("code", item.transfer.to), whatItMoves(item), item.nonce, waiting, ...(session.admin ? [actions] : [])]);
      added.dataset.hash = item.hash ?? "";
    }
    target.replaceChildren(inFlight);
  }

  /** The recent transfers, or those the search names (a recipient, an Idempotency-Key), kept live. */
  async showRecent(context: ViewContext): Promise<void> {
    const { session } = context;
    const query = this.search;
    if (query === undefined) {
      const { transfers } = await session.get<TransferList>(`/transfers?limit=${RECENT_LIMIT}${session.onNetwork()}`);
      showTransfers(context, transfers, "No transfers yet.");
      return;
    }
    // An address is a recipient; anything else is an Idempotency-Key or a payout item's id.
    const filters = /^0x[0-9a-fA-F]{40}$/.test(query) ? [`recipient=${query}`] : [`idempotencyKey=${encodeURIComponent(query)}`, `payoutItemId=${encodeURIComponent(query)}`];
    const found = await Promise.all(filters.map(async (filter) => (await session.get<TransferList>(`/transfers?${filter}&limit=100${session.onNetwork()}`)).transfers));
    const unique = new Map(found.flat().map((item) => [item.id, item]));
    showTransfers(context, [...unique.values()].sort((a, b) => b.id - a.id), `Nothing found for ${query}.`);
  }

  /** A hash opens that transfer's page; an address lists its transfers; anything else is an Idempotency-Key or a payout item id. */
  async find(context: ViewContext, query: string): Promise<void> {
    try {
      if (/^0x[0-9a-fA-F]{64}$/.test(query)) {
        await context.openTransfer(query);
        return;
      }
      this.search = query;
      await this.showRecent(context);
    } catch (error) {
      byId("outcome").textContent = `Not found: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  #actionButton(context: ViewContext, label: string, hash: string, action: "reprice" | "cancel"): HTMLButtonElement {
    const question =
      action === "cancel"
        ? `Cancel transfer ${shortHash(hash)}? A 0-value transaction to the wallet itself takes its nonce; the recipient gets nothing if it wins.`
        : `Re-price transfer ${shortHash(hash)} now? The same transfer is sent again at a higher fee.`;
    const accepted = () => this.#requested.set(hash, action === "cancel" ? "cancel requested" : "re-price requested");
    return button(label, `${label} ${hash}`, () => void confirmThen(context, question, "POST", `/transactions/${hash}/${action}`, accepted));
  }
}

function showTransfers(context: ViewContext, transfers: HistoryItem[], empty: string): void {
  const target = byId("recent");
  if (transfers.length === 0) {
    target.replaceChildren(element("p", empty));
    return;
  }
  const listed = table(["Transfer", "State", "To", "Amount", "Key", "Made"]);
  for (const item of transfers) {
    const added = row(listed, [
      transferLink(context, item.hash),
      element("span", item.refusal ? `${item.state}: ${item.refusal.code}` : item.state, `state-${item.state}`),
      element("code", item.transfer.to),
      whatItMoves(item),
      item.idempotencyKey ?? "—",
      new Date(item.createdAt).toLocaleString(),
    ]);
    added.dataset.hash = item.hash ?? "";
  }
  target.replaceChildren(listed);
}
