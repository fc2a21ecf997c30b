/**
 * The operator's console, in the browser: plain TypeScript on the DOM, compiled by the project's own tsc into
 * ES modules, one per view (no framework, no bundler, no runtime dependency, nothing fetched from elsewhere).
 * This module is the page: sign-in and sign-out, the network switcher, and the 2 s poll that reads every view
 * again. It calls the service's own API with the key the operator enters, kept in this tab's session storage
 * only, and polls routes that are answered from the service's memory and journal, never from the node.
 */
import type { ServedNetwork } from "./api-types.js";
import { byId, element } from "./dom.js";
import { rememberDisplaySymbol, tokenName } from "./figures.js";
import { ConsoleSession } from "./session.js";
import type { ViewContext } from "./view-context.js";
import { ActivityView } from "./views/activity.js";
import { addToAddressBook, showAddressBook } from "./views/address-book.js";
import { AuditView, downloadAudit } from "./views/audit.js";
import { showApprovals } from "./views/approvals.js";
import { closeTransfer, showTransfer } from "./views/transfer.js";
import { TransfersView } from "./views/transfers.js";
import { showWallet } from "./views/wallet.js";
import { WebhooksView } from "./views/webhooks.js";

const POLL_MS = 2_000;

class ConsolePage {
  readonly #session = new ConsoleSession();
  readonly #activity = new ActivityView();
  readonly #transfers = new TransfersView();
  readonly #webhooks = new WebhooksView();
  readonly #audit = new AuditView();
  readonly #context: ViewContext = {
    session: this.#session,
    refresh: () => this.#refresh(),
    openTransfer: (hash) => showTransfer(this.#context, this.#webhooks, hash),
  };
  #timer: number | undefined;

  start(): void {
    byId<HTMLFormElement>("sign-in-form").addEventListener("submit", (event) => {
      event.preventDefault();
      void this.#signIn(byId<HTMLInputElement>("api-key").value.trim());
    });
    byId("sign-out").addEventListener("click", () => this.#signOut());
    byId<HTMLFormElement>("search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const query = byId<HTMLInputElement>("search").value.trim();
      if (query === "") this.#transfers.search = undefined;
      void (query === "" ? this.#refresh() : this.#transfers.find(this.#context, query));
    });
    byId("clear-search").addEventListener("click", () => {
      byId<HTMLInputElement>("search").value = "";
      this.#transfers.search = undefined;
      void this.#refresh();
    });
    byId("close-detail").addEventListener("click", () => closeTransfer());
    byId<HTMLFormElement>("address-book-form").addEventListener("submit", (event) => {
      event.preventDefault();
      void addToAddressBook(this.#context);
    });
    byId("audit-older").addEventListener("click", () => void this.#audit.older(this.#context));
    byId("audit-newer").addEventListener("click", () => void this.#audit.newer(this.#context));
    byId("audit-download").addEventListener("click", () => void downloadAudit(this.#context));
    byId<HTMLSelectElement>("network").addEventListener("change", (event) => {
      this.#session.network = (event.target as HTMLSelectElement).value;
      void this.#refresh();
    });
    if (this.#session.key) void this.#signIn(this.#session.key);
  }

  async #signIn(key: string): Promise<void> {
    const session = this.#session;
    const error = byId("sign-in-error");
    error.textContent = "";
    session.key = key;
    const probe = await session.call<unknown>("GET", "/transfers?limit=1").catch(() => undefined);
    if (!probe || probe.status !== 200) {
      session.forget();
      error.textContent = probe ? `Not signed in: ${probe.body.code ?? probe.status} ${probe.body.message ?? ""}` : "The service did not answer.";
      return;
    }
    session.keep(key);
    // Only an admin key may read the wallet; the buttons that change something are for admins too.
    session.admin = (await session.call<unknown>("GET", "/wallet?snapshot=true")).status === 200;
    byId("sign-in").hidden = true;
    byId("app").hidden = false;
    byId("sign-out").hidden = false;
    byId("role").textContent = session.admin ? "admin key" : "read key: no changes, no wallet";
    byId("address-book-form").hidden = !session.admin;
    await this.#showNetworks();
    byId<HTMLInputElement>("search").focus();
    await this.#refresh();
    this.#timer = window.setInterval(() => void this.#refresh(), POLL_MS);
  }

  #signOut(): void {
    window.clearInterval(this.#timer);
    // The next key may not see every client's counts, nor the audit log: both are asked for again at its sign-in.
    this.#activity.reset();
    this.#audit.reset();
    this.#session.forget();
    byId<HTMLInputElement>("api-key").value = "";
    byId("app").hidden = true;
    byId("sign-out").hidden = true;
    byId("sign-in").hidden = false;
    byId("api-key").focus();
  }

  /** With several networks, the switcher: every list and the wallet show the chosen network's. */
  async #showNetworks(): Promise<void> {
    const session = this.#session;
    const { networks } = await session.get<{ networks: ServedNetwork[] }>("/networks");
    for (const token of networks.flatMap((network) => network.tokens)) if (token.displaySymbol) rememberDisplaySymbol(token.address, token.displaySymbol);
    const choice = byId("network-choice");
    choice.hidden = networks.length < 2;
    if (networks.length < 2) {
      session.network = undefined;
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
    if (!networks.some((network) => network.name === session.network)) session.network = networks[0].name;
    select.value = session.network as string;
  }

  async #refresh(): Promise<void> {
    const context = this.#context;
    try {
      // A transfer's page is read when opened (its status comes from the node); the lists come from the journal.
      await Promise.all([
        showWallet(context),
        showApprovals(context),
        showAddressBook(context),
        this.#activity.show(context),
        this.#transfers.showInFlight(context),
        this.#transfers.showRecent(context),
        this.#webhooks.show(context),
        this.#audit.show(context),
      ]);
      byId("updated").textContent = `Updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      byId("updated").textContent = `Not updated: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
}

new ConsolePage().start();
