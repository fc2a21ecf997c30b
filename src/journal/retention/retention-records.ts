/** The journal's records of retention: keys forgotten after their lifetime, settled transfers and audit entries archived and forgotten. */
import type { ArchivedTransfer } from "../journal-records.js";
import type { AuditRow } from "../audit/audit-chain.js";

export interface RetentionRecords {
  /**
   * Frees the key of an entry refused before it was signed, or whose first broadcast was refused (rejected:
   * never sent again), so that the same request can be made anew, as by a wallet pool on another lane.
   * Returns whether it was one.
   */
  releaseRefusedKey(entryId: number): boolean;
  /**
   * Transfers retention may move out of the journal (JOURNAL_RETENTION_DAYS): made before `before` (ms),
   * their Idempotency-Key expired, their outcome final or refused, every event reported and delivered or
   * given up; the oldest first, at most `limit`, with all their rows as stored.
   */
  archivable(before: number, limit: number): ArchivedTransfer[];
  /**
   * Where retention archives when the journal is the working copy of a shared database (its
   * transfers_archive table); undefined for a journal of its own, whose archive is a file.
   */
  readonly databaseArchive: ((records: readonly ArchivedTransfer[]) => Promise<void>) | undefined;
  /**
   * Retention of what the journal does not hold itself: a leader's working copy has the shared database
   * archive, there, the transfers made before `before` that were settled for good before it took over.
   * Returns how many (0 for a journal that holds its whole history).
   */
  archiveSettledElsewhere(before: number): Promise<number>;
  /** Deletes archived transfers and everything of theirs (attempts, webhook events and deliveries). */
  forgetArchived(entryIds: readonly number[]): void;
  /**
   * Audit entries retention may move out of a journal of its own: the oldest, in order, each entered before
   * `before` (ms) and sealed, never the last sealed one (the next commit seals its entries from its hash,
   * whatever this turn has entered meanwhile); at most `limit`. None in a working copy: its entries are the
   * shared database's (archiveAuditElsewhere).
   */
  archivableAudit(before: number, limit: number): AuditRow[];
  /** Deletes the audit entries up to `throughSeq`, archived; enter the archiving entry in the same turn. */
  forgetArchivedAudit(throughSeq: number): void;
  /**
   * Audit retention in the shared database of a working copy: moves its entries entered before `before`
   * (never the last) into its audit_archive table. Says how many and the last one moved; undefined for none
   * (and always for a journal of its own).
   */
  archiveAuditElsewhere(before: number): Promise<{ count: number; last: AuditRow } | undefined>;
  /**
   * A leader's working copy forgets, without telling the shared database (which keeps them), the transfers it
   * need not hold among the next `limit` made before `before` (a walk, oldest first, that goes on from where
   * the last call stopped, and starts again from the oldest once it reached the end): settled for good, as
   * a new leader would not read them, and unchanged since `before`. They are read there on demand. Says how
   * many it looked at and forgot (none for a journal that holds its whole history); undefined, having done
   * nothing, while a change of the same turn waits to be shipped.
   */
  forgetSettledForGood(before: number, limit: number): { examined: number; forgotten: number } | undefined;
  /**
   * Forgets keys older than `maxAgeMs` (the entries stay), up to a bound per call (a backlog goes in later
   * calls, so a key may live a little longer than `maxAgeMs`). Returns how many were forgotten.
   */
  expireKeys(maxAgeMs: number, now?: number): number;
}

/** Retention's part of a shared database, as the working copy's retention records call it. */
export interface DatabaseRetention {
  /** Keeps archived transfers in the shared database (before the journal deletes them); a repeat changes nothing. */
  archive(records: readonly ArchivedTransfer[]): Promise<void>;
  /**
   * Retention of what the working copy does not hold: archives, in the shared database itself, the transfers
   * made before `before` that are settled for good, except those `held` says the working copy holds (the
   * copy archives its own). Returns how many.
   */
  archiveSettled(before: number, held: (ids: readonly number[]) => ReadonlySet<number>): Promise<number>;
  /** Moves the audit entries entered before `before`, oldest first and never the last, into audit_archive (see TransferJournal.archiveAuditElsewhere). */
  archiveAudit(before: number): Promise<{ count: number; last: AuditRow } | undefined>;
}
