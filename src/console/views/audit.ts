/**
 * The audit log (admin): the latest entries first, a page at a time, live while the newest page is shown;
 * Older and Newer page through it, and Download CSV saves the log, oldest first, as GET /audit exports it
 * (each entry with its hash and the one before it; entries archived by retention are not in it).
 */
import type { AuditEntry, AuditPage } from "../api-types.js";
import { byId, element, row, table } from "../dom.js";
import type { ViewContext } from "../view-context.js";

const PAGE = 20;
/** Details longer than this (the settings a process started with) are folded: the rest shows on opening. */
const DETAIL_SHOWN = 80;

/** A page of the log: where it starts (undefined: the newest), and the cursor of the page below it (null: none). */
interface LogPage {
  before: string | undefined;
  older: string | null;
}

export class AuditView {
  // The pages from the newest to the one shown, which is the last; each knows the one below it.
  readonly #pages: LogPage[] = [{ before: undefined, older: null }];
  // The entries drawn, as JSON: the table is drawn again only when they change.
  #drawn = "";
  // Reads started: only the latest draws (a poll's read of the newest page may end after a click's).
  #reads = 0;
  // While a click's read is in flight the buttons wait: a second click would page from a cursor not yet known.
  #paging = false;

  async show(context: ViewContext): Promise<void> {
    const { admin } = context.session;
    byId("audit-controls").hidden = !admin;
    if (!admin) {
      byId("audit").replaceChildren(element("p", "Shown to admin keys only."));
      return;
    }
    // An older page does not change: only the newest is read again at each poll.
    if (this.#pages.length === 1 || this.#drawn === "") await this.#read(context);
  }

  older(context: ViewContext): Promise<void> {
    const below = this.#shown().older;
    if (below === null) return Promise.resolve();
    return this.#turn(context, () => this.#pages.push({ before: below, older: null }), () => this.#pages.pop());
  }

  newer(context: ViewContext): Promise<void> {
    if (this.#pages.length === 1) return Promise.resolve();
    const left = this.#shown();
    return this.#turn(context, () => this.#pages.pop(), () => this.#pages.push(left));
  }

  /** The next key starts at the newest page, with no control shown until its role is known. */
  reset(): void {
    this.#pages.splice(0, this.#pages.length, { before: undefined, older: null });
    this.#drawn = "";
    this.#reads++;
    this.#paging = false;
    byId("audit-controls").hidden = true;
    byId("audit").replaceChildren();
  }

  #shown(): LogPage {
    return this.#pages[this.#pages.length - 1];
  }

  // A page turned: read it; if the read fails, the page shown stays the one before, and the operator is told.
  async #turn(context: ViewContext, turn: () => void, undo: () => void): Promise<void> {
    if (this.#paging) return;
    this.#paging = true;
    turn();
    this.#enableButtons();
    try {
      await this.#read(context);
    } catch (error) {
      undo();
      byId("outcome").textContent = `The audit log was not read: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      this.#paging = false;
      this.#enableButtons();
    }
  }

  #enableButtons(): void {
    byId<HTMLButtonElement>("audit-older").disabled = this.#paging || this.#shown().older === null;
    byId<HTMLButtonElement>("audit-newer").disabled = this.#paging || this.#pages.length === 1;
  }

  async #read(context: ViewContext): Promise<void> {
    const page = this.#shown();
    const read = ++this.#reads;
    const answer = await context.session.get<AuditPage>(`/audit?order=newest&limit=${PAGE}${page.before === undefined ? "" : `&before=${page.before}`}`);
    if (read !== this.#reads) return;
    page.older = answer.nextBefore;
    this.#enableButtons();
    // Drawn again only when an entry changed: a detail an operator unfolded stays open.
    const drawn = JSON.stringify(answer.entries);
    if (drawn === this.#drawn) return;
    this.#drawn = drawn;
    const target = byId("audit");
    if (answer.entries.length === 0) {
      target.replaceChildren(element("p", "No entries."));
      return;
    }
    const listed = table(["Entry", "When", "What", "Transfer", "By", "Detail"]);
    for (const entry of answer.entries) {
      const added = row(listed, [entry.seq, new Date(entry.at).toLocaleString(), element("code", entry.kind), entry.transferId, entry.actor ?? "the service", detailOf(entry)]);
      added.dataset.seq = String(entry.seq);
    }
    target.replaceChildren(listed);
  }
}

function detailOf(entry: AuditEntry): HTMLElement {
  const text = JSON.stringify(entry.detail);
  if (text.length <= DETAIL_SHOWN) return element("code", text);
  const folded = element("details");
  folded.append(element("summary", `${text.slice(0, DETAIL_SHOWN)}…`), element("code", text));
  return folded;
}

/** Saves the log, oldest first, as the service exports it, under the name it gives the file. */
export async function downloadAudit(context: ViewContext): Promise<void> {
  const outcome = byId("outcome");
  try {
    const { name, blob } = await context.session.file("/audit", "text/csv");
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = name;
    link.click();
    // The download has its own copy once it started; the page's is let go a minute later.
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    outcome.textContent = `Saved the audit log as ${name}.`;
  } catch (error) {
    outcome.textContent = `The audit log was not saved: ${error instanceof Error ? error.message : String(error)}`;
  }
}
