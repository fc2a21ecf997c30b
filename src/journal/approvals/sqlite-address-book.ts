/**
 * The address book in the SQLite journal (or a leader's working copy, which ships its rows to PostgreSQL):
 * one row per address, every change entered in the audit log by the same write. Held in memory, read once.
 * With AUDIT_KEY_FILE each row carries an HMAC of its fields with the key: a row someone with the database
 * wrote (to have a thief's address paid without approval, at once) does not check, and is ignored.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type Database from "better-sqlite3";
import type { AuditKey } from "../audit/audit-chain.js";
import { ADDRESS_BOOK_MAX, type AddressBook, type AddressBookEntry, AddressBookFullError } from "./address-book.js";

/** The table; made at every open (IF NOT EXISTS). */
export const ADDRESS_BOOK_SCHEMA = `
  CREATE TABLE IF NOT EXISTS address_book (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    address TEXT NOT NULL UNIQUE,
    label TEXT,
    added_by TEXT NOT NULL,
    added_at INTEGER NOT NULL,
    effective_at INTEGER NOT NULL,
    -- With AUDIT_KEY_FILE: HMAC-SHA256 of the entry's fields with the key (entryMac); null without it.
    mac TEXT
  );
`;

interface AddressBookRow {
  id: number;
  address: string;
  label: string | null;
  added_by: string;
  added_at: number;
  effective_at: number;
  mac: string | null;
}

// The entry's fields, in one JSON array, sealed with the key.
function entryMac(entry: AddressBookEntry, key: AuditKey): string {
  return createHmac("sha256", key).update(JSON.stringify([entry.address, entry.label, entry.addedBy, entry.addedAt, entry.effectiveAt])).digest("hex");
}

function macChecks(entry: AddressBookEntry, mac: string | null, key: AuditKey): boolean {
  if (mac === null || !/^[0-9a-f]{64}$/.test(mac)) return false;
  return timingSafeEqual(Buffer.from(mac, "hex"), Buffer.from(entryMac(entry, key), "hex"));
}

/** How the book writes: inside the journal's shared transaction, with its audit entry beside it. */
export interface AddressBookWrites {
  write<T>(statement: () => T): T;
  audit(kind: string, actor: string, detail: Record<string, unknown>): void;
}

export class SqliteAddressBook implements AddressBook {
  readonly #entries = new Map<string, AddressBookEntry>();
  readonly #statements;
  /** Rows whose MAC did not check with AUDIT_KEY_FILE's key (written outside the service, or before the key): ignored. */
  readonly ignored: string[] = [];

  constructor(
    db: Database.Database,
    private readonly writes: AddressBookWrites,
    private readonly key: AuditKey | undefined,
  ) {
    this.#statements = {
      insert: db.prepare("INSERT INTO address_book (address, label, added_by, added_at, effective_at, mac) VALUES (@address, @label, @addedBy, @addedAt, @effectiveAt, @mac)"),
      remove: db.prepare("DELETE FROM address_book WHERE address = ?"),
    };
    for (const row of db.prepare("SELECT * FROM address_book ORDER BY id").all() as AddressBookRow[]) {
      const entry = { address: row.address, label: row.label, addedBy: row.added_by, addedAt: row.added_at, effectiveAt: row.effective_at };
      if (key && !macChecks(entry, row.mac, key)) this.ignored.push(row.address);
      else this.#entries.set(row.address, entry);
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
      // A row kept but ignored (it did not check) gives way to the entry an admin adds now.
      this.#dropIgnored(entry.address, entry.addedBy, entry.addedAt);
      this.#statements.insert.run({ ...entry, mac: this.key ? entryMac(entry, this.key) : null });
      this.writes.audit("operator.address_book_added", entry.addedBy, { address: entry.address, label: entry.label, effectiveAt: entry.effectiveAt });
    });
    this.#entries.set(entry.address, entry);
    return true;
  }

  remove(address: string, by: string, at: number): AddressBookEntry | undefined {
    const entry = this.#entries.get(address);
    if (!entry) {
      // An ignored row is deleted (audited), though it was never on the book.
      if (this.ignored.includes(address)) this.writes.write(() => this.#dropIgnored(address, by, at));
      return undefined;
    }
    this.writes.write(() => {
      this.#statements.remove.run(address);
      this.writes.audit("operator.address_book_removed", by, { address, label: entry.label, addedBy: entry.addedBy, at });
    });
    this.#entries.delete(address);
    return entry;
  }

  // Inside a write: deletes the ignored row of `address`, if there is one, entered in the audit log.
  #dropIgnored(address: string, by: string, at: number): void {
    const index = this.ignored.indexOf(address);
    if (index < 0) return;
    this.#statements.remove.run(address);
    this.writes.audit("operator.address_book_removed", by, { address, ignoredRow: true, at });
    this.ignored.splice(index, 1);
  }
}
