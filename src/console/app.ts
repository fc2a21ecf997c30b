/**
 * The operator's console, in the browser: plain TypeScript on the DOM, compiled by the project's own tsc
 * into one ES module (no framework, no runtime dependency, nothing fetched from elsewhere). It calls the
 * service's own API with the key the operator enters, kept in this tab's session storage only, and polls
 * every 2 s routes that are answered from the service's memory and journal, never from the node.
 */

const KEY_STORAGE = "token-transfer-console-key";
const POLL_MS = 2_000;
/** The charts' figures: what was made since the service's last tally is counted every 2 s; asked for as often. */
const ACTIVITY_POLL_MS = 2_000;
const RECENT_LIMIT = 25;
const SVG_NS = "http://www.w3.org/2000/svg";
/** As the service counts a transfer stuck: over this long unmined. */
const STUCK_AFTER_SECONDS = 120;

interface Attempt {
  hash: string;
  kind: string;
  signedAtBlock: number;
  maxFeePerGas: string | null;
  gasPrice: string | null;
  fate: string;
}

interface HistoryItem {
  id: number;
  hash: string | null;
  state: string;
  kind: string;
  transfer: { from: string; to: string; amount: string; amountInTokens: string | null; tokenSymbol: string };
  carriedBy: string | null;
  nonce: number | null;
  idempotencyKey: string | null;
  refusal: { code: string; message: string } | null;
  attempts: Attempt[];
  createdAt: string;
  apiKeyId: string | null;
  /** A payout batch's items it pays: each recipient and amount (base units, and in tokens when the decimals are known). */
  items?: { id: string; toAddress: string; amount: string; amountInTokens: string | null }[];
  /** Set for a transfer above APPROVAL_ABOVE: until when it waits for a second admin key. */
  approval?: { expiresAt: string; decidedBy: string | null; decidedAt: string | null };
}

/** An item of GET /payouts/:id. */
interface PayoutItem {
  id: string;
  toAddress: string;
  amount: string;
  state: string;
  reason: string | null;
  duplicateOf: number | null;
}

/** An entry of GET /address-book. */
interface AddressBookEntry {
  address: string;
  label: string | null;
  addedBy: string;
  effectiveAt: string;
  effective: boolean;
}

/** GET /address-book. */
interface AddressBook {
  enforced: boolean;
  coolingOffHours: number;
  entries: AddressBookEntry[];
}

/** A token balance of GET /wallet. */
interface Balance {
  symbol: string;
  address: string;
  decimals: number;
  balanceInTokens: string;
}

interface Lane {
  address: string;
  ethBalance: string;
  tokenBalanceInTokens: string;
  balances?: Balance[];
  transfersInFlight: number;
  gasRunwayHours: number | null;
  state: string;
  heldBecause: string | null;
}

interface Wallet extends Omit<Lane, "state" | "heldBecause"> {
  network: string;
  token: { address: string };
  lanes?: Lane[];
  /** Several networks: each one's wallet, the default (the document's own) first. */
  networks?: Wallet[];
  jammed: boolean;
  stuckAtFeeCap: { hash: string }[];
  /** Set while the service signs nothing (PAUSE_ON_UNEXPECTED_OUTFLOW). */
  signingPaused?: { since: string; reason: string; hash: string | null; latestHash: string | null; outflows: number } | null;
  /** Transactions and token transfers out of the wallets that the service never made, newest first. */
  unexpectedOutflows: Outflow[];
}

/** An unexpected outflow of GET /wallet. */
interface Outflow {
  wallet: string;
  hash: string;
  nonce: number | null;
  token: string | null;
  to: string | null;
  amount: string | null;
  code: string | null;
  otherToken: boolean;
  detectedAt: string;
}

interface Delivery {
  id: number;
  type: string;
  endpoint: string;
  state: string;
  attempts: number;
  lastStatus: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

/** One hour of GET /transfers/activity. */
interface ActivityHour {
  start: string;
  sent: number;
  mined: number;
  failed: number;
  gasSpentWei: string | null;
}

/** One series of a bar chart: its name (the legend), its colour (a class) and its value in an hour (null: no data). */
interface Series {
  name: string;
  className: string;
  value: (hour: ActivityHour) => number | null;
}

/** What the service answered a call: its status, and the JSON body (an error envelope when not 2xx). */
interface Answer<T> {
  status: number;
  body: T & { code?: string; message?: string };
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** An element with text content only: nothing the service returns is ever parsed as HTML. */
function element(tag: string, text?: string | number | null, className?: string): HTMLElement {
  const created = document.createElement(tag);
  if (text !== undefined && text !== null) created.textContent = String(text);
  if (className) created.className = className;
  return created;
}

function shortHash(hash: string | null): string {
  return hash ? `${hash.slice(0, 10)}…${hash.slice(-6)}` : "—";
}

function ether(wei: string): string {
  const value = BigInt(wei);
  const whole = value / 10n ** 18n;
  const fraction = (value % 10n ** 18n).toString().padStart(18, "0").slice(0, 4);
  return `${whole}.${fraction} ETH`;
}

// The tokens' names for people by lowercase address, from GET /networks: without NETWORKS_FILE a token's
// symbol is its address, and its contract's own symbol() (displaySymbol) names it here.
const displaySymbols = new Map<string, string>();

// How a token is named on the page: its symbol, or for an address its contract's symbol(); undefined when neither is known.
function tokenName(symbol: string): string | undefined {
  return symbol.startsWith("0x") ? displaySymbols.get(symbol.toLowerCase()) : symbol;
}

// Base units as whole tokens, without trailing zeros.
function inTokens(units: string, decimals: number): string {
  const digits = units.padStart(decimals + 1, "0");
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return `${digits.slice(0, digits.length - decimals)}${fraction ? `.${fraction}` : ""}`;
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

function runway(hours: number | null): string {
  if (hours === null) return "no recent spend";
  return hours >= 48 ? `${Math.round(hours / 24)} days` : `${hours} h`;
}

function svg(tag: string, attributes: Record<string, string | number>, text?: string): SVGElement {
  const created = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) created.setAttribute(name, String(value));
  if (text !== undefined) created.textContent = text;
  return created;
}

function hourLabel(hour: ActivityHour): string {
  return new Date(hour.start).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function etherOf(wei: string | null): number | null {
  return wei === null ? null : Number(BigInt(wei)) / 1e18;
}

/**
 * A small bar chart of the hours, drawn by the page (SVG, no library): a group of bars per hour, side by
 * side for each series, scaled to the highest; hovering an hour shows its figures. An hour without data is
 * a flat mark. Below it, the same figures as text, newest hour first, for keyboards, touch screens and
 * screen readers, which cannot hover.
 */
function barChart(label: string, hours: ActivityHour[], series: Series[], describe: (hour: ActivityHour) => string): HTMLElement {
  const width = 240;
  const height = 64;
  const slot = width / Math.max(1, hours.length);
  const barWidth = (slot - 1) / series.length;
  const highest = Math.max(Number.MIN_VALUE, ...hours.flatMap((hour) => series.map((one) => one.value(hour) ?? 0)));
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height + 12}`, role: "img", "aria-label": label, class: "chart" });
  chart.append(svg("title", {}, label), svg("rect", { x: 0, y: height, width, height: 0.5, class: "chart-axis" }));
  hours.forEach((hour, index) => {
    const group = svg("g", { class: "chart-hour" });
    group.append(svg("title", {}, describe(hour)));
    series.forEach((one, position) => {
      const value = one.value(hour);
      const x = index * slot + position * barWidth;
      const barHeight = value === null ? 1 : highest > 0 ? (value / highest) * height : 0;
      group.append(svg("rect", { x, y: height - barHeight, width: Math.max(barWidth - 0.3, 0.3), height: barHeight, class: value === null ? "bar-none" : one.className }));
    });
    group.append(svg("rect", { x: index * slot, y: 0, width: slot, height, class: "bar-hit" }));
    chart.append(group);
  });
  if (hours.length > 0) {
    chart.append(
      svg("text", { x: 0, y: height + 10, class: "chart-label" }, `${hours.length} h ago`),
      svg("text", { x: width, y: height + 10, "text-anchor": "end", class: "chart-label" }, "now"),
    );
  }
  const legend = element("p", undefined, "legend");
  for (const one of series) {
    const key = element("span");
    key.append(element("span", undefined, `swatch ${one.className}`), one.name);
    legend.append(key);
  }
  const figures = element("details", undefined, "hours");
  const list = element("ol");
  for (const hour of [...hours].reverse()) list.append(element("li", describe(hour)));
  figures.append(element("summary", "Hour by hour"), list);
  const figure = element("figure");
  figure.append(chart, legend, figures);
  return figure;
}

// An amount with its token's name (tokenName; left out when none is known).
function amountOf(item: HistoryItem): string {
  const { amountInTokens, amount, tokenSymbol } = item.transfer;
  return withTokenName(amountInTokens ?? `${amount} base units`, tokenSymbol);
}

function withTokenName(figure: string, symbol: string): string {
  const name = tokenName(symbol);
  return name ? `${figure} ${name}` : figure;
}

// What a row moves: a transfer's amount; a payout batch's total and how many it pays; else its kind.
function whatItMoves(item: HistoryItem): string {
  if (item.kind === "transfer") return amountOf(item);
  if (item.kind === "payout") {
    const count = item.items?.length ?? 0;
    return `${amountOf(item)} to ${count} recipient${count === 1 ? "" : "s"} (payout ${item.id})`;
  }
  return item.kind;
}

// A payout item's amount as the batch's token writes it.
function itemAmountOf(item: HistoryItem, payoutItem: NonNullable<HistoryItem["items"]>[number]): string {
  return withTokenName(payoutItem.amountInTokens ?? `${payoutItem.amount} base units`, item.transfer.tokenSymbol);
}

// Who a row pays: a transfer's recipient; a payout batch's every recipient and amount (not the contract).
function recipientsOf(item: HistoryItem): HTMLElement {
  if (item.kind !== "payout") return element("code", item.transfer.to);
  const list = element("ul", undefined, "recipients");
  for (const payoutItem of item.items ?? []) {
    const line = element("li");
    line.append(element("code", payoutItem.toAddress), ` ${itemAmountOf(item, payoutItem)}`);
    list.append(line);
  }
  return list;
}

function ageSeconds(createdAt: string): number {
  return Math.max(0, Math.round((Date.now() - Date.parse(createdAt)) / 1000));
}

class Console {
  #key: string | undefined = sessionStorage.getItem(KEY_STORAGE) ?? undefined;
  #admin = false;
  #timer: number | undefined;
  #search: string | undefined;
  // A service without WEBHOOK_URL answers 404 to every deliveries request: asked once, not every poll.
  #webhooksOff = false;
  // Cancels and re-prices the service accepted (202) for transfers still in flight: their row says so.
  readonly #requested = new Map<string, string>();
  // When the charts were last drawn (ms): the service tallies their figures once a minute.
  #activityShownAt = 0;
  #activityFigures = "";
  // The network the wallet and the lists show (the switcher's choice); undefined: the default, with one network.
  #network: string | undefined;

  start(): void {
    byId<HTMLFormElement>("sign-in-form").addEventListener("submit", (event) => {
      event.preventDefault();
      void this.#signIn(byId<HTMLInputElement>("api-key").value.trim());
    });
    byId("sign-out").addEventListener("click", () => this.#signOut());
    byId<HTMLFormElement>("search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const query = byId<HTMLInputElement>("search").value.trim();
      if (query === "") this.#search = undefined;
      void (query === "" ? this.#refresh() : this.#find(query));
    });
    byId("clear-search").addEventListener("click", () => {
      byId<HTMLInputElement>("search").value = "";
      this.#search = undefined;
      void this.#refresh();
    });
    byId("close-detail").addEventListener("click", () => this.#closeDetail());
    byId<HTMLFormElement>("address-book-form").addEventListener("submit", (event) => {
      event.preventDefault();
      void this.#addToAddressBook();
    });
    byId<HTMLSelectElement>("network").addEventListener("change", (event) => {
      this.#network = (event.target as HTMLSelectElement).value;
      void this.#refresh();
    });
    if (this.#key) void this.#signIn(this.#key);
  }

  async #call<T>(method: string, path: string, payload?: object): Promise<Answer<T>> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#key ?? ""}`, accept: "application/json", ...(payload && { "content-type": "application/json" }) };
    const response = await fetch(path, { method, headers, ...(payload && { body: JSON.stringify(payload) }) });
    const body = (await response.json().catch(() => ({}))) as Answer<T>["body"];
    return { status: response.status, body };
  }

  async #get<T>(path: string): Promise<T> {
    const answer = await this.#call<T>("GET", path);
    if (answer.status >= 400) throw new ApiError(answer.status, answer.body.code ?? "ERROR", answer.body.message ?? `HTTP ${answer.status}`);
    return answer.body;
  }

  async #signIn(key: string): Promise<void> {
    const error = byId("sign-in-error");
    error.textContent = "";
    this.#key = key;
    const probe = await this.#call<unknown>("GET", "/transfers?limit=1").catch(() => undefined);
    if (!probe || probe.status !== 200) {
      this.#key = undefined;
      sessionStorage.removeItem(KEY_STORAGE);
      error.textContent = probe ? `Not signed in: ${probe.body.code ?? probe.status} ${probe.body.message ?? ""}` : "The service did not answer.";
      return;
    }
    sessionStorage.setItem(KEY_STORAGE, key);
    // Only an admin key may read the wallet; the buttons that change something are for admins too.
    this.#admin = (await this.#call<unknown>("GET", "/wallet?snapshot=true")).status === 200;
    byId("sign-in").hidden = true;
    byId("app").hidden = false;
    byId("sign-out").hidden = false;
    byId("role").textContent = this.#admin ? "admin key" : "read key: no changes, no wallet";
    byId("address-book-form").hidden = !this.#admin;
    await this.#showNetworks();
    byId<HTMLInputElement>("search").focus();
    await this.#refresh();
    this.#timer = window.setInterval(() => void this.#refresh(), POLL_MS);
  }

  #signOut(): void {
    window.clearInterval(this.#timer);
    // The next key may not see every client's counts: the charts are asked for again at its sign-in.
    this.#activityShownAt = 0;
    this.#activityFigures = "";
    byId("activity").replaceChildren();
    sessionStorage.removeItem(KEY_STORAGE);
    this.#key = undefined;
    byId<HTMLInputElement>("api-key").value = "";
    byId("app").hidden = true;
    byId("sign-out").hidden = true;
    byId("sign-in").hidden = false;
    byId("api-key").focus();
  }

  /** With several networks, the switcher: every list and the wallet show the chosen network's. */
  async #showNetworks(): Promise<void> {
    const { networks } = await this.#get<{ networks: { name: string; chainId: number; running: boolean; tokens: { symbol: string; address: string; displaySymbol: string | null }[] }[] }>("/networks");
    for (const token of networks.flatMap((network) => network.tokens)) if (token.displaySymbol) displaySymbols.set(token.address.toLowerCase(), token.displaySymbol);
    const choice = byId("network-choice");
    choice.hidden = networks.length < 2;
    if (networks.length < 2) {
      this.#network = undefined;
      return;
    }
    const select = byId<HTMLSelectElement>("network");
    select.replaceChildren(
      ...networks.map((network) => {
        const option = element("option", `${network.name} (chain ${network.chainId}: ${network.tokens.map((token) => tokenName(token.symbol) ?? token.symbol).join(", ")})${network.running ? "" : ", not reached"}`);
        (option as HTMLOptionElement).value = network.name;
        return option;
      }),
    );
    if (!networks.some((network) => network.name === this.#network)) this.#network = networks[0].name;
    select.value = this.#network as string;
  }

  // The list filter of the chosen network (none with one network).
  #onNetwork(): string {
    return this.#network === undefined ? "" : `&network=${encodeURIComponent(this.#network)}`;
  }

  async #refresh(): Promise<void> {
    try {
      // A transfer's page is read when opened (its status comes from the node); the lists come from the journal.
      await Promise.all([this.#showWallet(), this.#showApprovals(), this.#showAddressBook(), this.#showActivity(), this.#showInFlight(), this.#showRecent(), this.#showDeliveries()]);
      byId("updated").textContent = `Updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      byId("updated").textContent = `Not updated: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  async #showWallet(): Promise<void> {
    const target = byId("wallet");
    if (!this.#admin) {
      target.replaceChildren(element("p", "The wallet is shown to admin keys only."));
      return;
    }
    const report = await this.#get<Wallet>("/wallet?snapshot=true");
    const wallet = (report.networks ?? [report]).find((network) => this.#network === undefined || network.network === this.#network);
    if (!wallet) {
      target.replaceChildren(element("p", `Network ${this.#network} has not been reached since the service started: its wallet is not known yet.`));
      return;
    }
    const lanes: Lane[] = wallet.lanes ?? [{ ...wallet, state: wallet.jammed ? "jammed" : "open", heldBecause: wallet.jammed ? "jammed" : null }];
    const table = this.#table(["Wallet", "ETH", "Tokens", "Gas runway", "In flight", "State"]);
    for (const lane of lanes) {
      this.#row(table, [
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
    target.replaceChildren(...this.#pauseWarning(report), ...this.#outflowWarning(wallet), table);
  }

  // The service signs nothing: said first, with the one action that ends it.
  #pauseWarning(report: Wallet): HTMLElement[] {
    const paused = report.signingPaused;
    if (!paused) return [];
    const warning = element("div", undefined, "alert");
    warning.setAttribute("role", "alert");
    const since = paused.outflows > 1 ? ` ${paused.outflows} outflows reported in all, the latest in transaction ${paused.latestHash}.` : "";
    warning.append(element("strong", `Signing is paused since ${new Date(paused.since).toLocaleString()}: ${paused.reason}.${since} New transfers are refused (503 SIGNING_PAUSED) until an admin resumes.`));
    const resume = element("button", "Resume signing") as HTMLButtonElement;
    resume.type = "button";
    // Names the latest outflow shown here: one reported after this page read it makes the resume a 409.
    resume.addEventListener("click", () =>
      void this.#confirmThen(
        "Resume signing? Do so once the outflow is explained or the key is replaced: new transfers are signed and sent again.",
        "POST",
        `/wallet/resume?latestHash=${paused.latestHash ?? "none"}`,
      ),
    );
    warning.append(" ", resume);
    return [warning];
  }

  // Spends the service never made: said first, in words, with each transaction.
  #outflowWarning(wallet: Wallet): HTMLElement[] {
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

  /**
   * Transfers above APPROVAL_ABOVE that wait for a second admin key, the soonest to expire first, with both
   * decisions for an admin (the service refuses the key that asked: the outcome line then says so).
   */
  async #showApprovals(): Promise<void> {
    const { transfers } = await this.#get<{ transfers: HistoryItem[] }>(`/transfers?state=awaiting_approval&limit=100${this.#onNetwork()}`);
    const target = byId("approvals");
    if (transfers.length === 0) {
      target.replaceChildren(element("p", "Nothing awaits approval."));
      return;
    }
    transfers.sort((a, b) => (a.approval?.expiresAt ?? "").localeCompare(b.approval?.expiresAt ?? ""));
    const table = this.#table(["Id", "To", "Amount", "Asked by", "Key", "Expires", ...(this.#admin ? ["Decide"] : [])]);
    for (const item of transfers) {
      const decide = element("span", undefined, "actions");
      if (this.#admin) decide.append(this.#approvalButton("Approve", item), this.#approvalButton("Reject", item));
      const expires = item.approval ? new Date(item.approval.expiresAt).toLocaleString() : "—";
      const row = this.#row(table, [item.id, recipientsOf(item), whatItMoves(item), item.apiKeyId ?? "—", item.idempotencyKey ?? "—", expires, ...(this.#admin ? [decide] : [])]);
      row.dataset.id = String(item.id);
    }
    target.replaceChildren(table);
  }

  /** The recipients paid without approval (ADDRESS_BOOK), each from when, with an admin's Remove. */
  async #showAddressBook(): Promise<void> {
    const { enforced, coolingOffHours, entries } = await this.#get<AddressBook>("/address-book");
    const target = byId("address-book");
    const rule = enforced
      ? `Transfers and payouts to any other recipient wait for an admin's approval. A new entry pays without approval ${coolingOffHours} h after it was added.`
      : "ADDRESS_BOOK is off: every recipient is paid without approval; entries take effect once it is set.";
    if (entries.length === 0) {
      target.replaceChildren(element("p", rule), element("p", "The address book is empty."));
      return;
    }
    const table = this.#table(["Address", "Label", "Added by", "Pays without approval", ...(this.#admin ? ["Remove"] : [])]);
    for (const entry of entries) {
      const from = entry.effective ? `since ${new Date(entry.effectiveAt).toLocaleString()}` : `from ${new Date(entry.effectiveAt).toLocaleString()} (cooling off)`;
      const remove = element("button", "Remove") as HTMLButtonElement;
      remove.type = "button";
      remove.setAttribute("aria-label", `Remove ${entry.address}`);
      remove.addEventListener("click", () => void this.#confirmThen(`Remove ${entry.address}${entry.label ? ` (${entry.label})` : ""} from the address book? Transfers to it wait for approval again.`, "DELETE", `/address-book/${entry.address}`));
      this.#row(table, [element("code", entry.address), entry.label, entry.addedBy, from, ...(this.#admin ? [remove] : [])]);
    }
    target.replaceChildren(element("p", rule), table);
  }

  async #addToAddressBook(): Promise<void> {
    const address = byId<HTMLInputElement>("address-book-address").value.trim();
    const label = byId<HTMLInputElement>("address-book-label").value.trim();
    const answer = await this.#call<AddressBookEntry>("POST", "/address-book", { address, ...(label && { label }) });
    const outcome = byId("outcome");
    if (answer.status === 201) {
      outcome.textContent = `Added ${answer.body.address} to the address book: paid without approval from ${new Date(answer.body.effectiveAt).toLocaleString()}`;
      byId<HTMLFormElement>("address-book-form").reset();
    } else {
      outcome.textContent = `POST /address-book: ${answer.status} ${answer.body.code ?? ""}: ${answer.body.message ?? ""}`;
    }
    await this.#refresh();
  }

  #approvalButton(label: "Approve" | "Reject", item: HistoryItem): HTMLButtonElement {
    const button = element("button", label) as HTMLButtonElement;
    button.type = "button";
    button.setAttribute("aria-label", `${label} transfer ${item.id}`);
    // Who is paid, every one of them: an approver decides on the recipients, not on a contract and a total.
    const what = item.kind === "payout" ? `${whatItMoves(item)}: ${(item.items ?? []).map((payoutItem) => `${payoutItem.toAddress} ${itemAmountOf(item, payoutItem)}`).join(", ")}` : `${whatItMoves(item)} to ${item.transfer.to}`;
    const question =
      label === "Approve"
        ? `Approve transfer ${item.id} (${what})? It is signed and sent now.`
        : `Reject transfer ${item.id} (${what})? It is never sent, and its client is told so.`;
    button.addEventListener("click", () => void this.#confirmThen(question, "POST", `/transfers/${item.id}/${label.toLowerCase()}`));
    return button;
  }

  /** The last 24 hours as two charts: transfers (sent, mined, failed) and gas spent, hour by hour. */
  async #showActivity(): Promise<void> {
    if (Date.now() - this.#activityShownAt < ACTIVITY_POLL_MS) return;
    this.#activityShownAt = Date.now();
    const target = byId("activity");
    const answer = await this.#call<{ hours: ActivityHour[] }>("GET", "/transfers/activity");
    if (answer.status === 403) {
      target.replaceChildren(element("p", "Shown to read and admin keys."));
      return;
    }
    if (answer.status !== 200) throw new ApiError(answer.status, answer.body.code ?? "ERROR", answer.body.message ?? `HTTP ${answer.status}`);
    const { hours } = answer.body;
    // Drawn again only when a figure changed: an unfolded hour-by-hour list stays open.
    const figures = JSON.stringify(hours);
    if (figures === this.#activityFigures) return;
    this.#activityFigures = figures;
    const total = (pick: (hour: ActivityHour) => number) => hours.reduce((sum, hour) => sum + pick(hour), 0);
    const transfers = barChart(
      `Transfers in the last 24 hours: ${total((hour) => hour.sent)} sent, ${total((hour) => hour.mined)} mined, ${total((hour) => hour.failed)} failed`,
      hours,
      [
        { name: "sent", className: "bar-sent", value: (hour) => hour.sent },
        { name: "mined", className: "bar-mined", value: (hour) => hour.mined },
        { name: "failed", className: "bar-failed", value: (hour) => hour.failed },
      ],
      (hour) => `${hourLabel(hour)}: ${hour.sent} sent, ${hour.mined} mined, ${hour.failed} failed`,
    );
    const spent = hours.reduce((sum, hour) => sum + BigInt(hour.gasSpentWei ?? "0"), 0n);
    const gas = barChart(
      `Gas spent in the last 24 hours: ${ether(spent.toString())} (since this service started)`,
      hours,
      [{ name: "ETH spent", className: "bar-gas", value: (hour) => etherOf(hour.gasSpentWei) }],
      (hour) => `${hourLabel(hour)}: ${hour.gasSpentWei === null ? "no figure (before this service started)" : ether(hour.gasSpentWei)}`,
    );
    // Drawn again every minute: hour-by-hour lists an operator opened stay open.
    const opened = [...target.querySelectorAll<HTMLDetailsElement>("details.hours")].map((details) => details.open);
    target.replaceChildren(transfers, gas);
    target.querySelectorAll<HTMLDetailsElement>("details.hours").forEach((details, index) => (details.open = opened[index] ?? false));
  }

  async #showInFlight(): Promise<void> {
    const { transfers } = await this.#get<{ transfers: HistoryItem[] }>(`/transfers?state=pending,sending&limit=100${this.#onNetwork()}`);
    const target = byId("in-flight");
    if (transfers.length === 0) {
      target.replaceChildren(element("p", "Nothing in flight."));
      return;
    }
    // A request is shown while its transfer is in flight, and forgotten once it is not.
    for (const hash of this.#requested.keys()) if (!transfers.some((item) => item.hash === hash)) this.#requested.delete(hash);
    const table = this.#table(["Transfer", "To", "Amount", "Nonce", "Waiting", ...(this.#admin ? ["Actions"] : [])]);
    for (const item of transfers) {
      const age = ageSeconds(item.createdAt);
      const stuck = age > STUCK_AFTER_SECONDS;
      const actions = element("span", undefined, "actions");
      const requested = item.hash ? this.#requested.get(item.hash) : undefined;
      if (requested) actions.append(element("span", requested, "muted"));
      else if (this.#admin && item.hash) {
        actions.append(this.#actionButton("Re-price", item.hash, "reprice"), this.#actionButton("Cancel", item.hash, "cancel"));
      }
      const row = this.#row(table, [this.#transferLink(item.hash), element("code", item.transfer.to), whatItMoves(item), item.nonce, element("span", stuck ? `${age} s, stuck` : `${age} s`, stuck ? "warn" : ""), ...(this.#admin ? [actions] : [])]);
      row.dataset.hash = item.hash ?? "";
    }
    target.replaceChildren(table);
  }

  /** The recent transfers, or those the search names (a recipient, an Idempotency-Key), kept live. */
  async #showRecent(): Promise<void> {
    const query = this.#search;
    if (query === undefined) {
      const { transfers } = await this.#get<{ transfers: HistoryItem[] }>(`/transfers?limit=${RECENT_LIMIT}${this.#onNetwork()}`);
      this.#showTransfers(transfers, "No transfers yet.");
      return;
    }
    // An address is a recipient; anything else is an Idempotency-Key or a payout item's id.
    const filters = /^0x[0-9a-fA-F]{40}$/.test(query) ? [`recipient=${query}`] : [`idempotencyKey=${encodeURIComponent(query)}`, `payoutItemId=${encodeURIComponent(query)}`];
    const found = await Promise.all(filters.map(async (filter) => (await this.#get<{ transfers: HistoryItem[] }>(`/transfers?${filter}&limit=100${this.#onNetwork()}`)).transfers));
    const unique = new Map(found.flat().map((item) => [item.id, item]));
    this.#showTransfers([...unique.values()].sort((a, b) => b.id - a.id), `Nothing found for ${query}.`);
  }

  /** A hash opens that transfer's page; an address lists its transfers; anything else is an Idempotency-Key or a payout item id. */
  async #find(query: string): Promise<void> {
    try {
      if (/^0x[0-9a-fA-F]{64}$/.test(query)) {
        await this.#showTransfer(query);
        return;
      }
      this.#search = query;
      await this.#showRecent();
    } catch (error) {
      byId("outcome").textContent = `Not found: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  #showTransfers(transfers: HistoryItem[], empty: string): void {
    const target = byId("recent");
    if (transfers.length === 0) {
      target.replaceChildren(element("p", empty));
      return;
    }
    const table = this.#table(["Transfer", "State", "To", "Amount", "Key", "Made"]);
    for (const item of transfers) {
      const row = this.#row(table, [
        this.#transferLink(item.hash),
        element("span", item.refusal ? `${item.state}: ${item.refusal.code}` : item.state, `state-${item.state}`),
        element("code", item.transfer.to),
        whatItMoves(item),
        item.idempotencyKey ?? "—",
        new Date(item.createdAt).toLocaleString(),
      ]);
      row.dataset.hash = item.hash ?? "";
    }
    target.replaceChildren(table);
  }

  async #showTransfer(hash: string): Promise<void> {
    const status = await this.#get<{
      network: string;
      state: string;
      confirmations: number;
      carriedBy?: string;
      attempts?: Attempt[];
      payoutId?: number;
      transfer: { to: string; amountInTokens: string | null; tokenSymbol: string | null } | null;
    }>(`/transactions/${hash}`);
    const payout = status.payoutId === undefined ? undefined : await this.#get<{ token: string; items: PayoutItem[] }>(`/payouts/${status.payoutId}`);
    const deliveries =
      this.#admin && !this.#webhooksOff
        ? await this.#get<{ deliveries: Delivery[] }>(`/webhooks/deliveries?transfer=${hash}`).catch(() => ({ deliveries: [] as Delivery[] }))
        : { deliveries: [] };
    const body = byId("detail-body");
    const facts = element("dl");
    const fact = (term: string, value: string | number) => facts.append(element("dt", term), element("dd", value));
    fact("Hash", hash);
    fact("State", status.state);
    fact("Confirmations", status.confirmations);
    fact("Network", status.network);
    if (status.transfer) fact("To", `${status.transfer.to} (${status.transfer.amountInTokens ?? "?"} ${(status.transfer.tokenSymbol && tokenName(status.transfer.tokenSymbol)) ?? "tokens"})`);
    if (status.carriedBy) fact("Carried by", status.carriedBy);
    if (payout) fact("Payout", `${status.payoutId}: ${payout.items.length} items, ${payout.items.filter((item) => item.state === "paid").length} paid, ${payout.items.filter((item) => item.state === "failed").length} failed`);
    const attempts = this.#table(["Attempt", "Kind", "Signed at block", "Max fee (wei)", "Fate"]);
    for (const attempt of status.attempts ?? []) this.#row(attempts, [element("code", attempt.hash), attempt.kind, attempt.signedAtBlock, attempt.maxFeePerGas ?? attempt.gasPrice ?? "—", attempt.fate]);
    const sent = this.#table(["Webhook event", "State", "Tries", "Last answer"]);
    for (const delivery of deliveries.deliveries) this.#row(sent, [delivery.type, delivery.state, delivery.attempts, delivery.lastStatus ?? "—"]);
    const payoutItems: HTMLElement[] = [];
    if (payout) {
      const items = this.#table(["Item", "To", "Amount", "State", "Reason"]);
      for (const item of payout.items) {
        const state = item.duplicateOf === null ? item.state : `${item.state} (paid by payout ${item.duplicateOf}, not this one)`;
        const row = this.#row(items, [item.id, element("code", item.toAddress), `${item.amount} ${payout.token.startsWith("0x") ? "" : payout.token}`.trim(), element("span", state, `state-${item.state}`), item.reason ?? "—"]);
        row.dataset.item = item.id;
      }
      payoutItems.push(element("h3", "Payout items"), items);
    }
    body.replaceChildren(
      facts,
      ...payoutItems,
      element("h3", "Attempts"),
      (status.attempts ?? []).length > 0 ? attempts : element("p", "Not one of this service's transfers: no attempts."),
      element("h3", "Webhook deliveries"),
      deliveries.deliveries.length > 0 ? sent : element("p", this.#admin ? "None." : "Shown to admin keys only."),
    );
    const detail = byId("detail");
    if (detail.hidden) {
      detail.hidden = false;
      byId("detail-title").focus();
    }
  }

  #closeDetail(): void {
    byId("detail").hidden = true;
    byId<HTMLInputElement>("search").focus();
  }

  async #showDeliveries(): Promise<void> {
    const target = byId("deliveries");
    if (!this.#admin) {
      target.replaceChildren(element("p", "Shown to admin keys only."));
      return;
    }
    if (this.#webhooksOff) return;
    let failed: Delivery[];
    let pending: Delivery[];
    try {
      [failed, pending] = await Promise.all(["failed", "pending"].map(async (state) => (await this.#get<{ deliveries: Delivery[] }>(`/webhooks/deliveries?state=${state}`)).deliveries));
    } catch (error) {
      if (error instanceof ApiError && error.code === "WEBHOOKS_NOT_CONFIGURED") {
        this.#webhooksOff = true;
        target.replaceChildren(element("p", "Webhooks are not configured (WEBHOOK_URL)."));
        return;
      }
      throw error;
    }
    if (failed.length + pending.length === 0) {
      target.replaceChildren(element("p", "No failed or pending deliveries."));
      return;
    }
    const table = this.#table(["Delivery", "Event", "Endpoint", "State", "Tries", "Last answer", "Actions"]);
    for (const delivery of [...failed, ...pending]) {
      const retry = element("button", "Retry") as HTMLButtonElement;
      retry.type = "button";
      retry.setAttribute("aria-label", `Retry delivery ${delivery.id}`);
      retry.addEventListener("click", () => void this.#confirmThen(`Deliver ${delivery.type} (delivery ${delivery.id}) again now?`, "POST", `/webhooks/deliveries/${delivery.id}/retry`));
      this.#row(table, [delivery.id, delivery.type, delivery.endpoint, delivery.state, delivery.attempts, delivery.lastStatus ?? "—", retry]);
    }
    target.replaceChildren(table);
  }

  #actionButton(label: string, hash: string, action: "reprice" | "cancel"): HTMLButtonElement {
    const button = element("button", label) as HTMLButtonElement;
    button.type = "button";
    button.setAttribute("aria-label", `${label} ${hash}`);
    const question =
      action === "cancel"
        ? `Cancel transfer ${shortHash(hash)}? A 0-value transaction to the wallet itself takes its nonce; the recipient gets nothing if it wins.`
        : `Re-price transfer ${shortHash(hash)} now? The same transfer is sent again at a higher fee.`;
    button.addEventListener("click", () => void this.#confirmThen(question, "POST", `/transactions/${hash}/${action}`, () => this.#requested.set(hash, action === "cancel" ? "cancel requested" : "re-price requested")));
    return button;
  }

  /** Asks first; then calls, and shows what the service answered. */
  async #confirmThen(question: string, method: string, path: string, onAccepted: () => void = () => {}): Promise<void> {
    const dialog = byId<HTMLDialogElement>("confirm");
    byId("confirm-text").textContent = question;
    dialog.returnValue = "";
    dialog.showModal();
    const confirmed = await new Promise<boolean>((resolve) => dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true }));
    if (!confirmed) return;
    const outcome = byId("outcome");
    outcome.textContent = `${method} ${path}…`;
    const answer = await this.#call<{ state?: string; message?: string }>(method, path);
    if (answer.status === 202) onAccepted();
    outcome.textContent =
      answer.status < 400
        ? `${method} ${path}: ${answer.status}${answer.body.state ? `, state ${answer.body.state}` : ""}${answer.body.message ? `: ${answer.body.message}` : ""}`
        : `${method} ${path}: ${answer.status} ${answer.body.code ?? ""}: ${answer.body.message ?? ""}`;
    await this.#refresh();
  }

  #transferLink(hash: string | null): HTMLElement {
    if (!hash) return element("span", "—");
    const button = element("button", shortHash(hash), "link") as HTMLButtonElement;
    button.type = "button";
    button.title = hash;
    button.setAttribute("aria-label", `Open transfer ${hash}`);
    button.addEventListener("click", () => void this.#showTransfer(hash));
    return button;
  }

  #table(headings: string[]): HTMLTableElement {
    const table = document.createElement("table");
    const head = table.createTHead().insertRow();
    for (const heading of headings) {
      const cell = element("th", heading);
      cell.setAttribute("scope", "col");
      head.append(cell);
    }
    table.createTBody();
    return table;
  }

  #row(table: HTMLTableElement, cells: (string | number | null | HTMLElement)[]): HTMLTableRowElement {
    const row = table.tBodies[0].insertRow();
    const headings = [...(table.tHead?.rows[0].cells ?? [])].map((cell) => cell.textContent ?? "");
    cells.forEach((content, index) => {
      const cell = row.insertCell();
      // On a narrow screen each cell shows its column's name (see the CSS).
      cell.dataset.label = headings[index];
      if (content instanceof HTMLElement) cell.append(content);
      else cell.textContent = content === null ? "—" : String(content);
    });
    return row;
  }
}

new Console().start();
