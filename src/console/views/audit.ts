/**
 * The audit log (admin): the latest entries first, a page at a time, live while the newest page is shown;
 * Older and Newer page through it, and Download CSV saves the whole log, oldest first, as GET /audit exports
 * it (each entry with its hash and the one before it).
 */
import type { AuditEntry, AuditPage } from "../api-types.js";
import { byId, element, row, table } from "../dom.js";
import type { ViewContext } from "../view-context.js";

const PAGE = 20;
/** Details longer than this (the settings a process started with) are folded: the rest shows on opening. */
const DETAIL_SHOWN = 80;

export class AuditView {
  // The `before` cursor of each page from the newest (undefined) to the one shown, which is the last.
  readonly #pages: (string | undefined)[] = [undefined];
  // The cursor of the page below the one shown; null: it is the oldest.
  #older: string | null = null;
  // The entries drawn, as JSON: the table is drawn again only when they change.
  #drawn = "";
  // Reads started: only the latest draws (a poll's read of the newest page may end after a click's).
  #reads = 0;

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

  async older(context: ViewContext): Promise<void> {
    if (this.#older === null) return;
    this.#pages.push(this.#older);
    await this.#read(context);
  }

  async newer(context: ViewContext): Promise<void> {
    if (this.#pages.length === 1) return;
    this.#pages.pop();
    await this.#read(context);
  }

  /** The next key starts at the newest page. */
  reset(): void {
    this.#pages.splice(1);
    this.#older = null;
    this.#drawn = "";
    this.#reads++;
    byId("audit").replaceChildren();
  }

  async #read(context: ViewContext): Promise<void> {
    const before = this.#pages[this.#pages.length - 1];
    const read = ++this.#reads;
    const page = await context.session.get<AuditPage>(`/audit?order=newest&limit=${PAGE}${before === undefined ? "" : `&before=${before}`}`);
    if (read !== this.#reads) return;
    this.#older = page.nextBefore;
    byId<HTMLButtonElement>("audit-older").disabled = this.#older === null;
    byId<HTMLButtonElement>("audit-newer").disabled = this.#pages.length === 1;
    // Drawn again only when an entry changed: a detail an operator unfolded stays open.
    const drawn = JSON.stringify(page.entries);
    if (drawn === this.#drawn) return;
    this.#drawn = drawn;
    const target = byId("audit");
    if (page.entries.length === 0) {
      target.replaceChildren(element("p", "No entries."));
      return;
    }
    const listed = table(["Entry", "When", "What", "Transfer", "By", "Detail"]);
    for (const entry of page.entries) {
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

/** Saves the whole log, oldest first, as the service exports it, under the name it gives the file. */
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
