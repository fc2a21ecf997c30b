/** The wallet: each lane's balances, gas runway and state; first, a pause or spends the service never made. */
import type { Balance, Lane, Outflow, Wallet } from "../api-types.js";
import { button, byId, element, row, table } from "../dom.js";
import { ether, inTokens, runway, tokenName, withTokenName } from "../figures.js";
import { confirmThen } from "../page-actions.js";
import type { ViewContext } from "../view-context.js";

export async function showWallet(context: ViewContext): Promise<void> {
  const { session } = context;
  const target = byId("wallet");
  if (!session.admin) {
    target.replaceChildren(element("p", "The wallet is shown to admin keys only."));
    return;
  }
  const report = await session.get<Wallet>("/wallet?snapshot=true");
  const wallet = (report.networks ?? [report]).find((network) => session.network === undefined || network.network === session.network);
  if (!wallet) {
    target.replaceChildren(element("p", `Network ${session.network} has not been reached since the service started: its wallet is not known yet.`));
    return;
  }
  const lanes: Lane[] = wallet.lanes ?? [{ ...wallet, state: wallet.jammed ? "jammed" : "open", heldBecause: wallet.jammed ? "jammed" : null }];
  const lanesTable = table(["Wallet", "ETH", "Tokens", "Gas runway", "In flight", "State"]);
  for (const lane of lanes) {
    row(lanesTable, [
      element("code", lane.address),
      ether(lane.ethBalance),
      // The native coin has its own column.
      lane.balances
        ? lane.balances
            .filter((balance) => balance.address !== "native")
            .map((balance) => `${balance.balanceInTokens} ${tokenName(balance.symbol) ?? balance.symbol}`)
            .join(", ")
        : withTokenName(lane.tokenBalanceInTokens, wallet.token.address),
      runway(lane.gasRunwayHours),
      lane.transfersInFlight,
      // A pause holds every lane, whatever each one's own state.
      report.signingPaused
        ? element("span", "paused: signs nothing", "warn")
        : element("span", lane.heldBecause ? `held: ${lane.heldBecause}` : lane.state, lane.heldBecause ? "warn" : ""),
    ]);
  }
  target.replaceChildren(...pauseWarning(context, report), ...outflowWarning(wallet), lanesTable);
}

// The service signs nothing: said first, with the one action that ends it.
function pauseWarning(context: ViewContext, report: Wallet): HTMLElement[] {
  const paused = report.signingPaused;
  if (!paused) return [];
  const warning = element("div", undefined, "alert");
  warning.setAttribute("role", "alert");
  const since = paused.outflows > 1 ? ` ${paused.outflows} outflows reported in all, the latest in transaction ${paused.latestHash}.` : "";
  warning.append(element("strong", `Signing is paused since ${new Date(paused.since).toLocaleString()}: ${paused.reason}.${since} New transfers are refused (503 SIGNING_PAUSED) until an admin resumes.`));
  // Names the latest outflow shown here: one reported after this page read it makes the resume a 409.
  const resume = button("Resume signing", "Resume signing", () =>
    void confirmThen(
      context,
      "Resume signing? Do so once the outflow is explained or the key is replaced: new transfers are signed and sent again.",
      "POST",
      `/wallet/resume?latestHash=${paused.latestHash ?? "none"}`,
    ),
  );
  warning.append(" ", resume);
  return [warning];
}

// Spends the service never made: said first, in words, with each transaction.
function outflowWarning(wallet: Wallet): HTMLElement[] {
  const outflows = wallet.unexpectedOutflows ?? [];
  if (outflows.length === 0) return [];
  const warning = element("div", undefined, "alert");
  warning.setAttribute("role", "alert");
  warning.append(element("strong", `${outflows.length} unexpected outflow${outflows.length === 1 ? "" : "s"} from this network's wallets: transactions this service never made. Is the key used elsewhere, or compromised?`));
  const list = element("ul");
  for (const outflow of outflows) {
    const to = outflow.code ? "" : ` to ${outflow.to ?? "?"}`;
    list.append(element("li", `${new Date(outflow.detectedAt).toLocaleString()}: ${outflowWhat(outflow, wallet.balances ?? [])} from ${outflow.wallet}${to} in ${outflow.hash}`));
  }
  warning.append(list);
  return [warning];
}

// What an unexpected outflow moved, as people write it: code at the wallet, an amount of a token the wallet
// holds (its symbol, base units beside), or the transaction's value.
function outflowWhat(outflow: Outflow, tokens: readonly Balance[]): string {
  if (outflow.code) return `code set at the wallet (${outflow.code.length > 50 ? `${outflow.code.slice(0, 50)}…` : outflow.code}: an EIP-7702 delegation or a contract, which can move funds with no nonce and no log)`;
  if (outflow.token) {
    const token = tokens.find((candidate) => candidate.address.toLowerCase() === outflow.token?.toLowerCase());
    if (token && outflow.amount !== null) return `${inTokens(outflow.amount, token.decimals)} ${tokenName(token.symbol) ?? "tokens"} (${outflow.amount} base units)`;
    return `${outflow.amount ?? "?"} base units of ${outflow.token}${outflow.otherToken ? " (a contract this network does not pay in)" : ""}`;
  }
  return `a transaction (nonce ${outflow.nonce}, ${outflow.amount === null ? "value unknown" : ether(outflow.amount)})`;
}
