/**
 * The audit log's hash chain: each entry carries the SHA-256 of the one before it and of its own fields,
 * so that changing, removing or reordering any entry breaks every hash after it. Both stores keep the
 * same columns; these functions seal entries as they are committed and check a chain however it is read.
 *
 * With a key kept outside the database (AUDIT_KEY_FILE) each hash is an HMAC-SHA256 instead: someone with
 * the database alone can no longer write a chain that checks. A log sealed without a key up to some entry
 * goes on with the key from the first entry a keyed service seals (AUDIT_KEYED_KIND says so), and never back:
 * an entry sealed without the key after one sealed with it is a break.
 */
import { createHash, createHmac } from "node:crypto";

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

/** The secret of AUDIT_KEY_FILE, which every entry's hash is made with when set. */
export type AuditKey = Buffer;

/** AUDIT_KEY (AUDIT_KEY_FILE) as the key, without the spaces around it (the service and audit:verify read it alike); undefined when unset. */
export function auditKeyOf(configured: string | undefined): AuditKey | undefined {
  return configured === undefined || configured.trim() === "" ? undefined : Buffer.from(configured.trim(), "utf8");
}

/** The hash of an entry, given the hash of the one before it: SHA-256, or an HMAC-SHA256 with `key`. */
export function auditEntryHash(previous: string, row: Pick<AuditRow, "seq" | "at" | "kind" | "transfer_id" | "actor" | "detail">, key?: AuditKey): string {
  // One JSON array: each field in its place, none can run into the next.
  const fields = JSON.stringify([previous, row.seq, row.at, row.kind, row.transfer_id, row.actor, row.detail]);
  return (key ? createHmac("sha256", key) : createHash("sha256")).update(fields).digest("hex");
}

/** How an entry's recorded hash was made: without a key, with `key`, or neither (it was changed, or sealed with another key). */
export function auditSealOf(row: AuditRow, key?: AuditKey): "plain" | "keyed" | undefined {
  if (row.hash === null || row.prev_hash === null) return undefined;
  if (row.hash === auditEntryHash(row.prev_hash, row)) return "plain";
  return key && row.hash === auditEntryHash(row.prev_hash, row, key) ? "keyed" : undefined;
}

/** The entry a service sealing with a key writes first after entries sealed without one; its detail has the key's id. */
export const AUDIT_KEYED_KIND = "journal.audit_keyed";

/** A key's public id, to tell keys apart in the log and the audit entries: the first 16 hex digits of its SHA-256. */
export function auditKeyId(key: AuditKey): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}

/** The service will not seal after the log's last entry with the key it has (or without one): it does not start. */
export class AuditKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AuditKeyError";
  }
}

/**
 * How the service seals from here, given the log's last sealed entry: as it was sealed, or, with a key after
 * entries sealed without one, with the key from now on ("begin keyed": write AUDIT_KEYED_KIND first). Throws
 * AuditKeyError when the last entry was sealed with another key (or with one, and none is set), or changed.
 */
export function sealingAfter(last: AuditRow | undefined, key: AuditKey | undefined): "as before" | "begin keyed" {
  const seal = last && auditSealOf(last, key);
  if (last === undefined || seal === "plain") return key ? "begin keyed" : "as before";
  if (seal === "keyed") return "as before";
  throw new AuditKeyError(
    key
      ? `AUDIT_KEY_FILE: the audit log's last entry ${last.seq} was not sealed with this key: with another one, or it was changed since (check the log with npm run audit:verify and that key)`
      : `the audit log's last entry ${last.seq} was sealed with a key (set AUDIT_KEY_FILE to the key it was sealed with), or it was changed since (check it with npm run audit:verify)`,
  );
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
  readonly #key: AuditKey | undefined;
  // The first entry sealed with the key: none after it may be sealed without.
  #keyedFrom: number | undefined;

  constructor(options: { afterArchived?: boolean; key?: AuditKey } = {}) {
    this.#afterArchived = options.afterArchived ?? false;
    this.#key = options.key;
  }

  /** The first break found in `row`, or undefined when it continues the chain (or repeats an entry checked). */
  check(row: AuditRow): AuditBreak | undefined {
    if (this.#last !== undefined && row.seq <= this.#last) {
      const seen = this.#recent.get(row.seq);
      if (!seen) return { seq: row.seq, reason: `entry ${row.seq} comes after entry ${this.#last}: out of order` };
      // A repeat is skipped only when it is that entry: the same pointer back, and its fields hashing to the same.
      if (row.prev_hash === seen.prevHash && row.hash === seen.hash && auditSealOf(row, this.#key) !== undefined) return undefined;
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
    const seal = auditSealOf(row, this.#key);
    if (seal === undefined) {
      const unless = this.#key ? "" : ", or it was sealed with a key (AUDIT_KEY_FILE: pass it to check the log)";
      return { seq: row.seq, reason: `entry ${row.seq} (${row.kind}) was changed: its fields do not hash to its recorded ${row.hash}${unless}` };
    }
    if (seal === "plain" && this.#keyedFrom !== undefined) {
      return { seq: row.seq, reason: `entry ${row.seq} (${row.kind}) was sealed without the key after entry ${this.#keyedFrom} was sealed with it: rewritten by someone without AUDIT_KEY_FILE's key` };
    }
    if (seal === "keyed") this.#keyedFrom ??= row.seq;
    this.#previous = row.hash;
    this.#first ??= row.seq;
    this.#last = row.seq;
    this.#checked++;
    this.#recent.set(row.seq, { prevHash: row.prev_hash, hash: row.hash });
    if (this.#recent.size > AUDIT_ARCHIVE_BATCH) this.#recent.delete(row.seq - AUDIT_ARCHIVE_BATCH);
    if (this.#unvouchedStart && row.kind === AUDIT_ARCHIVED_KIND && vouchesFor(row.detail, this.#unvouchedStart)) this.#unvouchedStart = undefined;
    return undefined;
  }

  /**
   * Once every entry was read: a log that starts after entries no archiving entry accounts for is broken
   * there; checked with a key, a log none of whose entries was sealed with it was rewritten whole without it
   * (a service with the key seals every entry it writes with it, the first time with AUDIT_KEYED_KIND).
   */
  finish(): AuditBreak | undefined {
    if (this.#key && this.#last !== undefined && this.#keyedFrom === undefined) {
      return { seq: this.#last, reason: `no entry up to the last, ${this.#last}, was sealed with the key: the log was rewritten without it, or the service never ran with this key` };
    }
    const start = this.#unvouchedStart;
    if (!start) return undefined;
    const missing = start.seq === 2 ? "entry 1 is" : `entries 1 to ${start.seq - 1} are`;
    return { seq: start.seq, reason: `${missing} missing before entry ${start.seq}, and no ${AUDIT_ARCHIVED_KIND} entry says they were archived: removed` };
  }

  /** The first entry checked that was sealed with the key; undefined when none was. */
  get keyedFrom(): number | undefined {
    return this.#keyedFrom;
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
