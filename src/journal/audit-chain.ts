/**
 * The audit log's hash chain: each entry carries the SHA-256 of the one before it and of its own fields,
 * so that changing, removing or reordering any entry breaks every hash after it. Both stores keep the
 * same columns; these functions seal entries as they are committed and check a chain however it is read.
 */
import { createHash } from "node:crypto";

/** The hash the first entry of a journal points back to. */
export const AUDIT_GENESIS = "0".repeat(64);

/** An audit entry as both stores keep it (prev_hash and hash set once it is sealed, in its own commit). */
export interface AuditRow {
  seq: number;
  /** ms, wall clock. */
  at: number;
  /** What happened: `transfer.<state>`, `attempt.<kind>`, `operator.<action>`, `wallet.<event>`, `service.started`. */
  kind: string;
  transfer_id: number | null;
  /** Who did it: an API key's id, "expiry", or null for the service itself. */
  actor: string | null;
  /** JSON: the facts of the change. */
  detail: string;
  prev_hash: string | null;
  hash: string | null;
}

/** An entry to append: what happened, who did it, to which transfer (if one), and its facts. */
export interface AuditEntry {
  kind: string;
  actor: string | null;
  transferId?: number | null;
  detail: Record<string, unknown>;
}

/** The hash of an entry, given the hash of the one before it. */
export function auditEntryHash(previous: string, row: Pick<AuditRow, "seq" | "at" | "kind" | "transfer_id" | "actor" | "detail">): string {
  // One JSON array: each field in its place, none can run into the next.
  const fields = JSON.stringify([previous, row.seq, row.at, row.kind, row.transfer_id, row.actor, row.detail]);
  return createHash("sha256").update(fields).digest("hex");
}

/**
 * An audit entry without its hash that the service did not write in the commit at hand: entered, or its hash
 * blanked, outside the service. It is never sealed (sealing it would vouch for whatever it now says): the
 * journal refuses to open, or, found while running, the commit fails and nothing more is written.
 */
export class AuditEntryUnsealedError extends Error {
  constructor(readonly seq: number) {
    super(
      `the audit log's entry ${seq} has no hash, and this service did not write it: it was entered or edited outside the service ` +
        "(someone with the database, or an older version of the service run on it); nothing is sealed for it. Find out who changed the database, and check the log with npm run audit:verify",
    );
    this.name = "AuditEntryUnsealedError";
  }
}

/** Where a chain breaks: the entry, and what is wrong with it. */
export interface AuditBreak {
  seq: number;
  reason: string;
}

/**
 * Audit entries archived per step by retention (one file append and one commit each): a pass cut off by a
 * crash between the two archives at most this many twice.
 */
export const AUDIT_ARCHIVE_BATCH = 1_000;

/** The entry retention makes in the commit that deletes archived entries: what it archived through, and where. */
export const AUDIT_ARCHIVED_KIND = "journal.audit_archived";

/** The detail of an AUDIT_ARCHIVED_KIND entry. */
export interface AuditArchivedDetail {
  /** The last entry archived: the log now starts after it. */
  throughSeq: number;
  /** Its hash: the next entry points back to it. */
  lastHash: string;
  /** The archive file, or audit_archive (the shared database's table). */
  into: string;
}

/**
 * Checks entries in order as they are read: numbered without a gap, each pointing back to the one before and
 * hashing to what it records. What it cannot see from the log alone: entries removed from its end, or a log
 * rewritten whole (SHA-256 needs no key). A (seq, hash) kept outside the database catches both (`expect`).
 *
 * With `afterArchived` (the log read without its archive, audit:verify --log-only), the first entry may come
 * after entries retention archived: it is taken as the start only when an archiving entry of the chain says
 * the log was archived through the entry before it, with the hash it points back to; finish() reports a start
 * that none vouched for. Read with its archive, a log is checked from entry 1. An entry seen again (a pass cut
 * off by a crash leaves its batch both in the archive and in the log, or twice in a file) is skipped when it
 * is the same entry as one of the last AUDIT_ARCHIVE_BATCH checked: the same pointer back, fields hashing the same.
 */
export class AuditChainCheck {
  #previous = AUDIT_GENESIS;
  #checked = 0;
  #first: number | undefined;
  #last: number | undefined;
  readonly #afterArchived: boolean;
  /** Where a log that begins after archived entries starts, until an archiving entry vouches for it. */
  #unvouchedStart: { seq: number; prevHash: string } | undefined;
  /** The hashes of the latest entries checked, by seq, to tell a repeat from a change: at most a batch. */
  readonly #recent = new Map<number, { prevHash: string; hash: string }>();

  constructor(options: { afterArchived?: boolean } = {}) {
    this.#afterArchived = options.afterArchived ?? false;
  }

  /** The first break found in `row`, or undefined when it continues the chain (or repeats an entry checked). */
  check(row: AuditRow): AuditBreak | undefined {
    if (this.#last !== undefined && row.seq <= this.#last) {
      const seen = this.#recent.get(row.seq);
      if (!seen) return { seq: row.seq, reason: `entry ${row.seq} comes after entry ${this.#last}: out of order` };
      // A repeat is skipped only when it is that entry: the same pointer back, and its fields hashing to the same.
      if (row.prev_hash === seen.prevHash && row.hash === seen.hash && auditEntryHash(seen.prevHash, row) === seen.hash) return undefined;
      return { seq: row.seq, reason: `entry ${row.seq} appears twice, the second time changed (a copy that differs from the entry checked)` };
    }
    if (this.#last === undefined && row.seq > 1 && this.#afterArchived && row.prev_hash !== null) {
      this.#previous = row.prev_hash;
      this.#unvouchedStart = { seq: row.seq, prevHash: row.prev_hash };
    }
    // Entries are numbered without a gap (a rolled-back commit gives its numbers back): a gap is a removal.
    const expectedSeq = this.#last === undefined ? (this.#unvouchedStart?.seq ?? 1) : this.#last + 1;
    if (row.seq !== expectedSeq) {
      const missing = row.seq - 1 === expectedSeq ? `entry ${expectedSeq} is` : `entries ${expectedSeq} to ${row.seq - 1} are`;
      return { seq: row.seq, reason: `${missing} missing before entry ${row.seq}: removed` };
    }
    if (row.hash === null || row.prev_hash === null) return { seq: row.seq, reason: `entry ${row.seq} was never sealed (no hash)` };
    if (row.prev_hash !== this.#previous) {
      return { seq: row.seq, reason: `entry ${row.seq} points back to ${row.prev_hash}, but the entry before it hashes to ${this.#previous}: an entry before it was changed, removed or added` };
    }
    const expected = auditEntryHash(this.#previous, row);
    if (row.hash !== expected) return { seq: row.seq, reason: `entry ${row.seq} (${row.kind}) was changed: its fields hash to ${expected}, not to its recorded ${row.hash}` };
    this.#previous = row.hash;
    this.#first ??= row.seq;
    this.#last = row.seq;
    this.#checked++;
    this.#recent.set(row.seq, { prevHash: row.prev_hash, hash: row.hash });
    if (this.#recent.size > AUDIT_ARCHIVE_BATCH) this.#recent.delete(row.seq - AUDIT_ARCHIVE_BATCH);
    if (this.#unvouchedStart && row.kind === AUDIT_ARCHIVED_KIND && vouchesFor(row.detail, this.#unvouchedStart)) this.#unvouchedStart = undefined;
    return undefined;
  }

  /** Once every entry was read: a log that starts after entries no archiving entry accounts for is broken there. */
  finish(): AuditBreak | undefined {
    const start = this.#unvouchedStart;
    if (!start) return undefined;
    const missing = start.seq === 2 ? "entry 1 is" : `entries 1 to ${start.seq - 1} are`;
    return { seq: start.seq, reason: `${missing} missing before entry ${start.seq}, and no ${AUDIT_ARCHIVED_KIND} entry says they were archived: removed` };
  }

  /** How many entries continued the chain. */
  get checked(): number {
    return this.#checked;
  }

  /** The seq of the first entry checked; undefined before any. */
  get firstSeq(): number | undefined {
    return this.#first;
  }

  /** The seq of the last entry checked; undefined before any. */
  get lastSeq(): number | undefined {
    return this.#last;
  }

  /** The hash of the last entry checked (the genesis before any). */
  get lastHash(): string {
    return this.#previous;
  }
}

// An archiving entry's detail says the log was archived through the entry just before `start`, which hashed to what `start` points back to.
function vouchesFor(detail: string, start: { seq: number; prevHash: string }): boolean {
  try {
    const archived = JSON.parse(detail) as Partial<AuditArchivedDetail>;
    return archived.throughSeq === start.seq - 1 && archived.lastHash === start.prevHash;
  } catch {
    return false;
  }
}

/** The first break in `rows` (in seq order), checked with `check`; undefined when they continue its chain. */
export function findAuditBreak(rows: Iterable<AuditRow>, check: AuditChainCheck = new AuditChainCheck()): AuditBreak | undefined {
  for (const row of rows) {
    const broken = check.check(row);
    if (broken) return broken;
  }
  return undefined;
}
