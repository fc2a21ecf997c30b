/** Figures and names as people read them: amounts in tokens and ether, a token's name, ages, what a row pays. */
import type { HistoryItem } from "./api-types.js";
import { element } from "./dom.js";

export function shortHash(hash: string | null): string {
  return hash ? `${hash.slice(0, 10)}…${hash.slice(-6)}` : "—";
}

export function ether(wei: string): string {
  const value = BigInt(wei);
  const whole = value / 10n ** 18n;
  const fraction = (value % 10n ** 18n).toString().padStart(18, "0").slice(0, 4);
  return `${whole}.${fraction} ETH`;
}

export function etherOf(wei: string | null): number | null {
  return wei === null ? null : Number(BigInt(wei)) / 1e18;
}

// The tokens' names for people by lowercase address, from GET /networks: without NETWORKS_FILE a token's
// symbol is its address, and its contract's own symbol() (displaySymbol) names it here.
const displaySymbols = new Map<string, string>();

/** Learns a token's name for people (GET /networks' displaySymbol). */
export function rememberDisplaySymbol(address: string, displaySymbol: string): void {
  displaySymbols.set(address.toLowerCase(), displaySymbol);
}

/** How a token is named on the page: its symbol, or for an address its contract's symbol(); undefined when neither is known. */
export function tokenName(symbol: string): string | undefined {
  return symbol.startsWith("0x") ? displaySymbols.get(symbol.toLowerCase()) : symbol;
}

/** Base units as whole tokens, without trailing zeros. */
export function inTokens(units: string, decimals: number): string {
  const digits = units.padStart(decimals + 1, "0");
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return `${digits.slice(0, digits.length - decimals)}${fraction ? `.${fraction}` : ""}`;
}

export function withTokenName(figure: string, symbol: string): string {
  const name = tokenName(symbol);
  return name ? `${figure} ${name}` : figure;
}

export function runway(hours: number | null): string {
  if (hours === null) return "no recent spend";
  return hours >= 48 ? `${Math.round(hours / 24)} days` : `${hours} h`;
}

export function ageSeconds(createdAt: string): number {
  return Math.max(0, Math.round((Date.now() - Date.parse(createdAt)) / 1000));
}

// An amount with its token's name (tokenName; left out when none is known).
function amountOf(item: HistoryItem): string {
  const { amountInTokens, amount, tokenSymbol } = item.transfer;
  return withTokenName(amountInTokens ?? `${amount} base units`, tokenSymbol);
}

/** What a row moves: a transfer's amount; a payout batch's total and how many it pays; else its kind. */
export function whatItMoves(item: HistoryItem): string {
  if (item.kind === "transfer") return amountOf(item);
  if (item.kind === "payout") {
    const count = item.items?.length ?? 0;
    return `${amountOf(item)} to ${count} recipient${count === 1 ? "" : "s"} (payout ${item.id})`;
  }
  return item.kind;
}

/** A payout item's amount as the batch's token writes it. */
export function itemAmountOf(item: HistoryItem, payoutItem: NonNullable<HistoryItem["items"]>[number]): string {
  return withTokenName(payoutItem.amountInTokens ?? `${payoutItem.amount} base units`, item.transfer.tokenSymbol);
}

/** Who a row pays: a transfer's recipient; a payout batch's every recipient and amount (not the contract). */
export function recipientsOf(item: HistoryItem): HTMLElement {
  if (item.kind !== "payout") return element("code", item.transfer.to);
  const list = element("ul", undefined, "recipients");
  for (const payoutItem of item.items ?? []) {
    const line = element("li");
    line.append(element("code", payoutItem.toAddress), ` ${itemAmountOf(item, payoutItem)}`);
    list.append(line);
  }
  return list;
}
