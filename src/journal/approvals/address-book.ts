/**
 * The address book (ADDRESS_BOOK): the recipients the service pays without an admin's approval. A transfer
 * or payout to an address not on it waits for one; an entry added takes effect only after a cooling-off
 * period, so that whoever adds a thief's address (a stolen admin key) is seen before it pays. Kept in the
 * journal (every change audited, in its commit), held in memory for the request path.
 */

/** An address on the book, and from when it is paid without approval. */
export interface AddressBookEntry {
  /** Checksummed. */
  address: string;
  label: string | null;
  /** The admin key that added it. */
  addedBy: string;
  /** ms, wall clock. */
  addedAt: number;
  effectiveAt: number;
}

/** The most entries the book holds: every one is held in memory and listed. */
export const ADDRESS_BOOK_MAX = 10_000;

/** The book is full: nothing was added. */
export class AddressBookFullError extends Error {
  override name = "AddressBookFullError";
}

/** The journal's address book: its entries, and each change written (and audited) in the journal's next commit. */
export interface AddressBook {
  /** Every entry, in the order added. */
  entries(): AddressBookEntry[];
  /** The entry of `address` (checksummed), if on the book. */
  entryOf(address: string): AddressBookEntry | undefined;
  /** Adds the entry; false when the address is on the book already (nothing changed). Throws AddressBookFullError. */
  add(entry: AddressBookEntry): boolean;
  /** Removes the address, entered as `by`'s; the entry removed, or undefined when it was not on the book. */
  remove(address: string, by: string, at: number): AddressBookEntry | undefined;
  /** The addresses of rows kept but ignored: with AUDIT_KEY_FILE, rows the service did not write with the key. */
  readonly ignored: readonly string[];
}

/** Whether the book pays `address` without approval at `now`: on it, and past its cooling-off. */
export function paysWithoutApproval(book: Pick<AddressBook, "entryOf">, address: string, now: number): boolean {
  const entry = book.entryOf(address);
  return entry !== undefined && entry.effectiveAt <= now;
}
