/** The recipients paid without approval (ADDRESS_BOOK), each from when, with an admin's Add and Remove. */
import type { AddressBook, AddressBookEntry } from "../api-types.js";
import { button, byId, element, row, table } from "../dom.js";
import { confirmThen } from "../page-actions.js";
import type { ViewContext } from "../view-context.js";

export async function showAddressBook(context: ViewContext): Promise<void> {
  const { session } = context;
  const { enforced, coolingOffHours, entries } = await session.get<AddressBook>("/address-book");
  const target = byId("address-book");
  const rule = enforced
    ? `Transfers and payouts to any other recipient wait for an admin's approval. A new entry pays without approval ${coolingOffHours} h after it was added.`
    : "ADDRESS_BOOK is off: every recipient is paid without approval; entries take effect once it is set.";
  if (entries.length === 0) {
    target.replaceChildren(element("p", rule), element("p", "The address book is empty."));
    return;
  }
  const book = table(["Address", "Label", "Added by", "Pays without approval", ...(session.admin ? ["Remove"] : [])]);
  for (const entry of entries) {
    const from = entry.effective ? `since ${new Date(entry.effectiveAt).toLocaleString()}` : `from ${new Date(entry.effectiveAt).toLocaleString()} (cooling off)`;
    const question = `Remove ${entry.address}${entry.label ? ` (${entry.label})` : ""} from the address book? Transfers to it wait for approval again.`;
    const remove = button("Remove", `Remove ${entry.address}`, () => void confirmThen(context, question, "DELETE", `/address-book/${entry.address}`));
    row(book, [element("code", entry.address), entry.label, entry.addedBy, from, ...(session.admin ? [remove] : [])]);
  }
  target.replaceChildren(element("p", rule), book);
}

/** The form's address and label, added; the outcome line says what the service answered. */
export async function addToAddressBook(context: ViewContext): Promise<void> {
  const address = byId<HTMLInputElement>("address-book-address").value.trim();
  const label = byId<HTMLInputElement>("address-book-label").value.trim();
  const answer = await context.session.call<AddressBookEntry>("POST", "/address-book", { address, ...(label && { label }) });
  const outcome = byId("outcome");
  if (answer.status === 201) {
    outcome.textContent = `Added ${answer.body.address} to the address book: paid without approval from ${new Date(answer.body.effectiveAt).toLocaleString()}`;
    byId<HTMLFormElement>("address-book-form").reset();
  } else {
    outcome.textContent = `POST /address-book: ${answer.status} ${answer.body.code ?? ""}: ${answer.body.message ?? ""}`;
  }
  await context.refresh();
}
