/** The transfer journal in an embedded SQLite database (better-sqlite3, WAL). */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { steadyWallClockNow } from "../clock.js";
import {
  type JournalEntry,
  JournalUnavailableError,
  type KeyClaim,
  type RecordedRefusal,
  type SignedTransfer,
  type TransferJournal,
  type TransferRequest,
} from "./transfer-journal.js";

/** Which wallet, token and chain a journal belongs to: reusing one for another wallet is refused. */
export interface JournalOwner {
  chainId: bigint;
  walletAddress: string;
  tokenAddress: string;
}

export class JournalOwnerMismatchError extends Error {
  override name = "JournalOwnerMismatchError";
}

/** A write that should have changed one entry found none: the journal and the service disagree. */
export class JournalWriteError extends Error {
  override name = "JournalWriteError";
}

interface EntryRow {
  id: number;
  idempotency_key: string | null;
  recipient: string;
  units: string;
  api_key_id: string | null;
  state: JournalEntry["state"];
  nonce: number | null;
  hash: string | null;
  raw_transaction: string | null;
  refusal_code: string | null;
  refusal_message: string | null;
  created_at: number;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS journal_owner (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    chain_id TEXT NOT NULL,
    wallet_address TEXT NOT NULL,
    token_address TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS transfers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    idempotency_key TEXT UNIQUE,
    recipient TEXT NOT NULL,
    units TEXT NOT NULL,
    api_key_id TEXT,
    state TEXT NOT NULL,
    nonce INTEGER,
    hash TEXT,
    raw_transaction TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX IF NOT EXISTS transfers_hash ON transfers (hash);
  CREATE INDEX IF NOT EXISTS transfers_key_age ON transfers (created_at) WHERE idempotency_key IS NOT NULL;
`;

// Journals written by earlier versions: answers of refusals were not kept, and "settled" meant what
// "nonce-used" says.
const MIGRATIONS = [
  "ALTER TABLE transfers ADD COLUMN refusal_code TEXT",
  "ALTER TABLE transfers ADD COLUMN refusal_message TEXT",
];
const UNSETTLED_INDEX = `
  DROP INDEX IF EXISTS transfers_unsettled;
  CREATE INDEX transfers_unsettled ON transfers (state, nonce) WHERE state IN ('claimed', 'signed', 'accepted');
  UPDATE transfers SET state = 'nonce-used' WHERE state = 'settled';
`;

/**
 * Opens (creating if needed) the journal at `path`; ":memory:" keeps it in memory.
 *
 * Every statement is prepared once and lives as long as the journal: better-sqlite3 12's Statement, when
 * garbage-collected at certain moments, trips an assertion of Node 24 (node::ObjectWrap removes its
 * cleanup hook with no current environment) and aborts the process. Settings go through exec(), which
 * makes no Statement object.
 */
export function openSqliteJournal(path: string, owner: JournalOwner, synchronous: "FULL" | "NORMAL" = "FULL"): TransferJournal {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  // FULL survives power loss; NORMAL survives a crashed process only, but skips an fsync per commit.
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA busy_timeout = 5000;`);
  db.exec(SCHEMA);
  migrate(db);
  const journal = new SqliteTransferJournal(db);
  try {
    journal.checkOwner(owner);
  } catch (error) {
    journal.close();
    throw error;
  }
  return journal;
}

/** Brings a journal written by an earlier version up to date (a column that exists already is fine). */
function migrate(db: Database.Database): void {
  for (const migration of MIGRATIONS) {
    try {
      db.exec(migration);
    } catch (error) {
      if (!/duplicate column name/.test((error as Error).message)) throw error;
    }
  }
  db.exec(UNSETTLED_INDEX);
}

class SqliteTransferJournal implements TransferJournal {
  readonly #db: Database.Database;
  readonly #statements;
  // Group commit: writes of one event-loop turn share a transaction and so a single fsync.
  #pendingCommit: Promise<void> | undefined;
  #failure: JournalUnavailableError | undefined;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#statements = {
      owner: db.prepare("SELECT chain_id, wallet_address, token_address FROM journal_owner WHERE id = 1"),
      insertOwner: db.prepare("INSERT INTO journal_owner (id, chain_id, wallet_address, token_address) VALUES (1, @chain_id, @wallet_address, @token_address)"),
      claim: db.prepare(
        `INSERT INTO transfers (idempotency_key, recipient, units, api_key_id, state, created_at, updated_at)
         VALUES (@key, @recipient, @units, @apiKeyId, 'claimed', @now, @now) ON CONFLICT (idempotency_key) DO NOTHING`,
      ),
      byKey: db.prepare("SELECT * FROM transfers WHERE idempotency_key = ?"),
      insertSigned: db.prepare(
        `INSERT INTO transfers (recipient, units, api_key_id, state, nonce, hash, raw_transaction, created_at, updated_at)
         VALUES (@recipient, @units, @apiKeyId, 'signed', @nonce, @hash, @rawTransaction, @now, @now)`,
      ),
      spentSince: db.prepare(
        `SELECT api_key_id, units, created_at FROM transfers
         WHERE created_at > ? AND api_key_id IS NOT NULL AND state IN ('signed', 'accepted', 'nonce-used') ORDER BY created_at`,
      ),
      updateSigned: db.prepare(
        "UPDATE transfers SET state = 'signed', nonce = @nonce, hash = @hash, raw_transaction = @rawTransaction, updated_at = @now WHERE id = @id AND state IN ('claimed', 'signed')",
      ),
      setState: db.prepare("UPDATE transfers SET state = @state, updated_at = @now WHERE id = @id"),
      setRefusal: db.prepare(
        "UPDATE transfers SET state = @state, refusal_code = @code, refusal_message = @message, updated_at = @now WHERE id = @id AND state = @from",
      ),
      deleteClaim: db.prepare("DELETE FROM transfers WHERE id = ? AND state = 'claimed'"),
      markNonceUsed: db.prepare("UPDATE transfers SET state = 'nonce-used', updated_at = @now WHERE state = 'accepted' AND nonce < @count"),
      unsettled: db.prepare("SELECT * FROM transfers WHERE state IN ('claimed', 'signed', 'accepted') ORDER BY nonce, id"),
      byHash: db.prepare("SELECT * FROM transfers WHERE hash = ? ORDER BY id DESC LIMIT 1"),
      expireKeys: db.prepare("UPDATE transfers SET idempotency_key = NULL WHERE idempotency_key IS NOT NULL AND created_at < ?"),
    };
  }

  /** Records the owner in a new journal; refuses a journal of another wallet, token or chain. */
  checkOwner(owner: JournalOwner): void {
    const expected = { chain_id: owner.chainId.toString(), wallet_address: owner.walletAddress, token_address: owner.tokenAddress };
    const stored = this.#statements.owner.get() as typeof expected | undefined;
    if (!stored) {
      this.#statements.insertOwner.run(expected);
      return;
    }
    if (stored.chain_id !== expected.chain_id || stored.wallet_address !== expected.wallet_address || stored.token_address !== expected.token_address) {
      throw new JournalOwnerMismatchError(
        `JOURNAL_PATH: this journal belongs to wallet ${stored.wallet_address}, token ${stored.token_address} on chain ${stored.chain_id}; use another file`,
      );
    }
  }

  get failure(): JournalUnavailableError | undefined {
    return this.#failure;
  }

  flushed(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    return this.#pendingCommit ?? Promise.resolve();
  }

  // Opens the shared transaction on the first write of a turn and commits it once the turn is over.
  #write<T>(statement: () => T): T {
    if (this.#failure) throw this.#failure;
    if (!this.#pendingCommit) {
      this.#db.exec("BEGIN IMMEDIATE");
      this.#pendingCommit = new Promise<void>((resolve, reject) =>
        setImmediate(() => {
          this.#pendingCommit = undefined;
          if (!this.#db.open) return resolve();
          if (this.#failure) return reject(this.#failure);
          try {
            this.#db.exec("COMMIT");
            resolve();
          } catch (error) {
            if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
            // Whatever this turn wrote is gone, and the service may already have acted on it in memory:
            // from now on nothing is written, so nothing can be broadcast without its record.
            this.#failure = new JournalUnavailableError(error);
            reject(this.#failure);
          }
        }),
      );
      // A failed commit must reach the writer awaiting flushed(), not crash the process meanwhile.
      this.#pendingCommit.catch(() => undefined);
    }
    try {
      return statement();
    } catch (error) {
      // A statement that fails (SQLITE_FULL, I/O) fails the whole shared transaction.
      if (error instanceof JournalWriteError) throw error;
      this.#failure = new JournalUnavailableError(error);
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
      throw this.#failure;
    }
  }

  // A write by id must change exactly that entry.
  #writeOne(description: string, statement: () => Database.RunResult): void {
    const { changes } = this.#write(statement);
    if (changes !== 1) throw new JournalWriteError(`journal: ${description} changed ${changes} entries instead of 1`);
  }

  claimKey(key: string, request: TransferRequest): KeyClaim {
    const now = steadyWallClockNow();
    const inserted = this.#write(() =>
      this.#statements.claim.run({ key, recipient: request.recipient, units: request.units.toString(), apiKeyId: request.apiKeyId ?? null, now }),
    );
    if (inserted.changes === 1) return { outcome: "claimed", entryId: Number(inserted.lastInsertRowid) };
    return { outcome: "existing", entry: toEntry(this.#statements.byKey.get(key) as EntryRow) };
  }

  recordSigned(entryId: number | undefined, request: TransferRequest, signed: SignedTransfer): number {
    const values = { ...signed, now: steadyWallClockNow() };
    if (entryId !== undefined) {
      this.#writeOne(`signing entry ${entryId}`, () => this.#statements.updateSigned.run({ ...values, id: entryId }));
      return entryId;
    }
    const inserted = this.#write(() =>
      this.#statements.insertSigned.run({ ...values, recipient: request.recipient, units: request.units.toString(), apiKeyId: request.apiKeyId ?? null }),
    );
    return Number(inserted.lastInsertRowid);
  }

  recordAccepted(entryId: number): void {
    this.#setState(entryId, "accepted");
  }

  recordRefused(entryId: number, refusal: RecordedRefusal): void {
    this.#writeOne(`refusing entry ${entryId}`, () => this.#statements.setRefusal.run({ id: entryId, state: "refused", from: "claimed", ...refusal, now: steadyWallClockNow() }));
  }

  recordRejected(entryId: number, refusal: RecordedRefusal): void {
    this.#writeOne(`rejecting entry ${entryId}`, () => this.#statements.setRefusal.run({ id: entryId, state: "rejected", from: "signed", ...refusal, now: steadyWallClockNow() }));
  }

  recordReplaced(entryId: number): void {
    this.#setState(entryId, "replaced");
  }

  #setState(entryId: number, state: JournalEntry["state"]): void {
    this.#writeOne(`marking entry ${entryId} ${state}`, () => this.#statements.setState.run({ id: entryId, state, now: steadyWallClockNow() }));
  }

  releaseKey(entryId: number): boolean {
    return this.#write(() => this.#statements.deleteClaim.run(entryId)).changes === 1;
  }

  markNonceUsedBelow(minedNonceCount: number): number {
    return this.#write(() => this.#statements.markNonceUsed.run({ count: minedNonceCount, now: steadyWallClockNow() })).changes;
  }

  unsettled(): JournalEntry[] {
    return (this.#statements.unsettled.all() as EntryRow[]).map(toEntry);
  }

  findByHash(hash: string): JournalEntry | undefined {
    const row = this.#statements.byHash.get(hash.toLowerCase()) as EntryRow | undefined;
    return row && toEntry(row);
  }

  spentSince(since: number): { apiKeyId: string; units: bigint; at: number }[] {
    const rows = this.#statements.spentSince.all(since) as { api_key_id: string; units: string; created_at: number }[];
    return rows.map((row) => ({ apiKeyId: row.api_key_id, units: BigInt(row.units), at: row.created_at }));
  }

  expireKeys(maxAgeMs: number, now = steadyWallClockNow()): number {
    return this.#write(() => this.#statements.expireKeys.run(now - maxAgeMs)).changes;
  }

  close(): void {
    if (!this.#db.open) return;
    if (this.#db.inTransaction && !this.#failure) this.#db.exec("COMMIT");
    this.#db.close();
  }
}

function toEntry(row: EntryRow): JournalEntry {
  return {
    id: row.id,
    idempotencyKey: row.idempotency_key,
    recipient: row.recipient,
    units: BigInt(row.units),
    apiKeyId: row.api_key_id ?? undefined,
    state: row.state,
    nonce: row.nonce,
    hash: row.hash,
    rawTransaction: row.raw_transaction,
    refusal: row.refusal_code === null ? null : { code: row.refusal_code, message: row.refusal_message ?? "" },
    createdAt: row.created_at,
  };
}
