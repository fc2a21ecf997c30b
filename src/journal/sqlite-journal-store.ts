/** The database under every view of the SQLite journal: the unit of work every concern writes in. */
import type Database from "better-sqlite3";
import { steadyWallClockNow } from "../clock.js";
import { SqliteAddressBook } from "./approvals/sqlite-address-book.js";
import { AUDIT_GENESIS, AUDIT_KEYED_KIND, AuditEntryUnsealedError, type AuditKey, AuditKeyError, type AuditRow, auditEntryHash, auditKeyId, sealingAfter } from "./audit/audit-chain.js";
import { SqliteHistoryReader } from "./history/sqlite-history.js";
import { type AttemptRow, SEVERAL_NETWORKS_MARK, groupBy, ownersChainOf, toAttempt } from "./journal-rows.js";
import { type JournalAttempt, type JournalElsewhere, type JournalOwner, JournalOwnerMismatchError, JournalUnavailableError, JournalWriteError } from "./journal-records.js";
import { type JournalReplica, SqliteChangeLog } from "./sqlite-change-log.js";
import { ATTEMPTS_OF_EARLIER_VERSIONS } from "./sqlite-schema.js";
import { type JournalStatements, prepareStatements } from "./sqlite-statements.js";

/**
 * The database under every lane's journal object: one connection, one group commit, one failure. Lanes
 * share it, so that a key claimed in one lane is seen by all, and a commit holds the writes of every lane.
 */
export class SqliteJournalStore {
  readonly db: Database.Database;
  readonly statements: JournalStatements;
  // Group commit: writes of one event-loop turn share a transaction and so a single fsync.
  #pendingCommit: Promise<void> | undefined;
  #failure: JournalUnavailableError | undefined;
  // The commit itself succeeded and only shipping it to the shared database failed: what the database
  // holds then is a fact to look up, not a loss to assume.
  #shippingFailed = false;
  // A COMMIT failed after it may have written its transaction to the WAL (see #commit).
  #commitMayBeOnDisk = false;
  // Every hash of the transfers that have several attempts: few, and asked about by every lookup.
  readonly severalAttemptHashes = new Set<string>();
  // The last audit entry before the transaction under way: the service seals only entries after it.
  #auditWrittenAfter = 0;
  /** Where the working copy's walk for transfers it need not hold goes on from (see forgetSettledForGood). */
  evictionCursor = { createdAt: -1, id: -1 };
  // 1 when webhooks report on the transfers made from now on.
  readonly notify: number;
  // Ships each commit to the shared database, when there is one.
  readonly #changeLog: SqliteChangeLog | undefined;
  readonly history: SqliteHistoryReader;

  /** The shared database this journal is the working copy of, if any: retention archives there. */
  readonly replica: JournalReplica | undefined;
  /** What the working copy does not hold, read from the shared database. */
  readonly elsewhere: JournalElsewhere | undefined;
  readonly #auditKey: AuditKey | undefined;
  /** ADDRESS_BOOK's entries, held in memory; each change written in the shared transaction with its audit entry. */
  readonly addressBook: SqliteAddressBook;

  constructor(db: Database.Database, notify: boolean, changeLog: SqliteChangeLog | undefined, parts: { replica?: JournalReplica; elsewhere?: JournalElsewhere; auditKey?: AuditKey }) {
    this.db = db;
    this.replica = parts.replica;
    this.elsewhere = parts.elsewhere;
    this.#auditKey = parts.auditKey;
    this.notify = notify ? 1 : 0;
    this.#changeLog = changeLog;
    this.statements = prepareStatements(db);
    this.history = new SqliteHistoryReader(db);
    this.addressBook = new SqliteAddressBook(db, {
      write: (statement) => this.write(statement),
      audit: (kind, actor, detail) => this.statements.insertAudit.run({ at: steadyWallClockNow(), kind, transferId: null, actor, detail: JSON.stringify(detail) }),
    }, parts.auditKey);
    if (this.statements.userVersion.pluck().get() === 0) db.exec(ATTEMPTS_OF_EARLIER_VERSIONS);
    for (const hash of this.statements.severalAttemptHashes.pluck().all() as string[]) this.severalAttemptHashes.add(hash);
  }

  /** Records the owner in a new journal; refuses a journal of another token or chain. */
  checkOwner(owner: JournalOwner): void {
    const chain = owner.chainId.toString();
    const expected = { chain_id: owner.severalNetworks ? `${chain}${SEVERAL_NETWORKS_MARK}` : chain, wallet_address: owner.walletAddress, token_address: owner.tokenAddress };
    const stored = this.statements.owner.get() as typeof expected | undefined;
    if (!stored) {
      this.statements.insertOwner.run(expected);
      return;
    }
    if (ownersChainOf(stored.chain_id) !== chain || stored.token_address !== expected.token_address) {
      throw new JournalOwnerMismatchError(`JOURNAL_PATH: this journal belongs to token ${stored.token_address} on chain ${ownersChainOf(stored.chain_id)}; use another file`);
    }
    // Once marked, for good: a journal that held another network's transfers keeps them.
    if (owner.severalNetworks && stored.chain_id === chain) this.statements.markOwner.run(expected);
  }

  get failure(): JournalUnavailableError | undefined {
    return this.#failure;
  }

  /**
   * Whether its rows are what a restart (or the next leader) finds: alone on its disk, a commit that failed
   * was rolled back. A working copy's commit may have failed to ship, and its rows then say more than the
   * shared database knows.
   */
  get rowsAreTheRecord(): boolean {
    return !this.#changeLog;
  }

  async wasRecorded(hash: string): Promise<boolean | undefined> {
    if (!this.#failure) return this.statements.attemptByHash.get(hash.toLowerCase()) !== undefined;
    // Rolled back here, maybe committed on disk: a restart may find it and send it, or not.
    if (this.#commitMayBeOnDisk && !this.#changeLog) return undefined;
    // A failed local commit was rolled back: nothing of it is anywhere.
    if (!this.#shippingFailed || !this.#changeLog) return false;
    // Of this transfer: the same bytes may be an older transfer's attempt in the database (see insertAttempt).
    const attempt = this.statements.attemptByHash.get(hash.toLowerCase()) as AttemptRow | undefined;
    return attempt ? this.#changeLog.holds(hash.toLowerCase(), attempt.transfer_id) : false;
  }

  flushed(): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    // A commit made is durable only once shipped, when there is a shared database.
    return this.#pendingCommit ?? this.#changeLog?.lastShipment ?? Promise.resolve();
  }

  // Opens the shared transaction on the first write of a turn and commits it once the turn is over.
  write<T>(statement: () => T): T {
    if (this.#failure) throw this.#failure;
    if (!this.#pendingCommit) {
      this.db.exec("BEGIN IMMEDIATE");
      this.#auditWrittenAfter = (this.statements.lastAuditSeq.get() as number | undefined) ?? 0;
      this.#pendingCommit = new Promise<void>((resolve, reject) =>
        setImmediate(() => {
          this.#pendingCommit = undefined;
          if (!this.db.open) return resolve();
          if (this.#failure) return reject(this.#failure);
          try {
            this.#sealAudit();
            this.#commit();
            if (!this.#changeLog) return resolve();
            // Taken right after the commit, before any later write: only committed rows leave the process.
            this.#changeLog.shipCommitted().then(resolve, (error: unknown) => {
              if (!this.#failure) this.#shippingFailed = true;
              this.#failure ??= new JournalUnavailableError(error);
              reject(this.#failure);
            });
          } catch (error) {
            this.#rollBack();
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
      this.#rollBack();
      throw this.#failure;
    }
  }

  // SQLite rolls a COMMIT that failed at the disk back in memory only. A full disk stops it before its
  // commit frame reaches the WAL; any other failure (a failed sync above all) may have left the frames whole
  // there, and a restart's recovery then finds the transaction committed.
  #commit(): void {
    try {
      this.db.exec("COMMIT");
    } catch (error) {
      if ((error as { code?: unknown }).code !== "SQLITE_FULL") this.#commitMayBeOnDisk = true;
      throw error;
    }
  }

  // A rollback that fails too must not escape the commit's callback and stop the process: the journal is
  // failed already, and takes no more writes.
  #rollBack(): void {
    try {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
    } catch {
      // Nothing more to undo from here; the failure is reported through flushed().
    }
  }

  // Chains the audit entries this transaction made to the last sealed one, in order, before the commit: an
  // entry is never committed without its hash. One without its hash from before is not the service's to seal.
  #sealAudit(): void {
    const unsealed = this.statements.unsealedAudit.all() as AuditRow[];
    if (unsealed.length === 0) return;
    if (unsealed[0].seq <= this.#auditWrittenAfter) throw new AuditEntryUnsealedError(unsealed[0].seq);
    let previous = (this.statements.lastAuditHash.get() as string | undefined) ?? AUDIT_GENESIS;
    for (const row of unsealed) {
      const hash = auditEntryHash(previous, row, this.#auditKey);
      this.statements.sealAudit.run({ seq: row.seq, previous, hash });
      previous = hash;
    }
  }

  /** Deletes transfers (a JSON array of ids) and everything of theirs; call it inside write(). */
  forget(ids: string): void {
    for (const row of this.statements.attemptsOfEach.all(ids) as AttemptRow[]) this.severalAttemptHashes.delete(row.hash);
    this.statements.forgetDeliveries.run(ids);
    this.statements.forgetEvents.run(ids);
    this.statements.forgetAttempts.run(ids);
    this.statements.forgetTransfers.run(ids);
  }

  /** Runs `change` inside write() without shipping it (see SqliteChangeLog.unshipped); undefined when it cannot now. */
  unshipped<T>(change: () => T): T | undefined {
    return this.#changeLog ? this.#changeLog.unshipped(change) : undefined;
  }

  // A write by id must change exactly that entry.
  writeOne(description: string, statement: () => Database.RunResult): void {
    const { changes } = this.write(statement);
    if (changes !== 1) throw new JournalWriteError(`journal: ${description} changed ${changes} entries instead of 1`);
  }

  attemptsOf(entryId: number): JournalAttempt[] {
    return (this.statements.attemptsOf.all(entryId) as AttemptRow[]).map(toAttempt);
  }

  /** The attempts of each of these entries, in one read. */
  attemptsOfEach(entryIds: readonly number[]): Map<number, JournalAttempt[]> {
    const rows = this.statements.attemptsOfEach.all(JSON.stringify(entryIds)) as AttemptRow[];
    return groupBy(rows, (row) => row.transfer_id, toAttempt);
  }

  close(): void {
    if (!this.db.open) return;
    if (this.db.inTransaction && !this.#failure) {
      this.#sealAudit();
      this.db.exec("COMMIT");
    }
    this.db.close();
  }

  /**
   * At open, before anything else: seals the entries this open's upgrades of the file wrote (after
   * `writtenAfter`, the last entry when the file was opened); one from before without its hash refuses the
   * open (AuditEntryUnsealedError).
   */
  sealOpeningEntries(writtenAfter: number): void {
    // With a key after entries sealed without one, the first entry sealed with it says so (AuditKeyError
    // when the last entry was sealed with another key, or with one while none is set: nothing starts).
    const last = this.statements.lastSealedAudit.get() as AuditRow | undefined;
    const sealing = sealingAfter(last, this.#auditKey);
    // Sealed with the key once, sealed without it at the end: entries were written after it without the key.
    const keyedFrom = sealing === "begin keyed" ? ((this.statements.firstKeyedAudit.get() as number | undefined) ?? (this.statements.ownerKeyedFrom.get() as number | null) ?? undefined) : undefined;
    if (keyedFrom !== undefined) {
      throw new AuditKeyError(
        `the audit log was sealed with a key from entry ${keyedFrom} on, and its last entry ${last?.seq} was sealed without one: entries after it were written without the key (someone with the database). Check it with npm run audit:verify and AUDIT_KEY_FILE`,
      );
    }
    this.db.exec("BEGIN IMMEDIATE");
    this.#auditWrittenAfter = writtenAfter;
    try {
      if (sealing === "begin keyed") {
        const detail = JSON.stringify({ keyId: auditKeyId(this.#auditKey as AuditKey) });
        const marker = this.statements.insertAudit.run({ at: steadyWallClockNow(), kind: AUDIT_KEYED_KIND, transferId: null, actor: null, detail });
        this.statements.markKeyedFrom.run(Number(marker.lastInsertRowid));
      }
      this.#sealAudit();
      this.db.exec("COMMIT");
    } catch (error) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      throw error;
    }
  }
}
