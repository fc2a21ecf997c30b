/**
 * The address book in the SQLite journal (or a leader's working copy, which ships its rows to PostgreSQL):
 * one row per address, every change entered in the audit log by the same write. Held in memory, read once.
 */
import type Database from "better-sqlite3";
import { ADDRESS_BOOK_MAX, type AddressBook, type AddressBookEntry, AddressBookFullError } from "./address-book.js";

/** The table; made at every open (IF NOT EXISTS). */
export const ADDRESS_BOOK_SCHEMA = `
  CREATE TABLE IF NOT EXISTS address_book (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    address TEXT NOT NULL UNIQUE,
    label TEXT,
    added_by TEXT NOT NULL,
    added_at INTEGER NOT NULL,
    effective_at INTEGER NOT NULL
  );
`;

interface AddressBookRow {
  id: number;
  address: string;
  label: string | null;
  added_by: string;
  added_at: number;
  effective_at: number;
}

/** How the book writes: inside the journal's shared transaction, with its audit entry beside it. */
export interface AddressBookWrites {
  write<T>(statement: () => T): T;
  audit(kind: string, actor: string, detail: Record<string, unknown>): void;
}

export class SqliteAddressBook implements AddressBook {
  readonly #entries = new Map<string, AddressBookEntry>();
  readonly #statements;

  constructor(
    db: Database.Database,
    private readonly writes: AddressBookWrites,
  ) {
    this.#statements = {
      insert: db.prepare("INSERT INTO address_book (address, label, added_by, added_at, effective_at) VALUES (@address, @label, @addedBy, @addedAt, @effectiveAt)"),
      remove: db.prepare("DELETE FROM address_book WHERE address = ?"),
    };
    for (const row of db.prepare("SELECT * FROM address_book ORDER BY id").all() as AddressBookRow[]) {
      this.#entries.set(row.address, { address: row.address, label: row.label, addedBy: row.added_by, addedAt: row.added_at, effectiveAt: row.effective_at });
    }
  }

  entries(): AddressBookEntry[] {
    return [...this.#entries.values()];
  }

  entryOf(address: string): AddressBookEntry | undefined {
    return this.#entries.get(address);
  }

  add(entry: AddressBookEntry): boolean {
    if (this.#entries.has(entry.address)) return false;
    if (this.#entries.size >= ADDRESS_BOOK_MAX) throw new AddressBookFullError(`the address book holds ${ADDRESS_BOOK_MAX} entries, its most: remove some first`);
    this.writes.write(() => {
      this.#statements.insert.run(entry);
      this.writes.audit("operator.address_book_added", entry.addedBy, { address: entry.address, label: entry.label, effectiveAt: entry.effectiveAt });
    });
    this.#entries.set(entry.address, entry);
    return true;
  }

  remove(address: string, by: string, at: number): AddressBookEntry | undefined {
    const entry = this.#entries.get(address);
    if (!entry) return undefined;
    this.writes.write(() => {
      this.#statements.remove.run(address);
      this.writes.audit("operator.address_book_removed", by, { address, label: entry.label, addedBy: entry.addedBy, at });
    });
    this.#entries.delete(address);
    return entry;
  }
}
