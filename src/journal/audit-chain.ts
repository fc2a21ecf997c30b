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

/** Where a chain breaks: the entry, and what is wrong with it. */
export interface AuditBreak {
  seq: number;
  reason: string;
}

/**
 * Checks entries in order as they are read: numbered without a gap, each pointing back to the one before and
 * hashing to what it records. What it cannot see from the log alone: entries removed from its end, or a log
 * rewritten whole (SHA-256 needs no key). A (seq, hash) kept outside the database catches both (`expect`).
 */
export class AuditChainCheck {
  #previous: string;
  readonly #firstSeq: number;
  #checked = 0;
  #last: number | undefined;

  /** `previous`: the hash of the entry before `firstSeq` (the genesis before entry 1). */
  constructor(previous = AUDIT_GENESIS, firstSeq = 1) {
    this.#previous = previous;
    this.#firstSeq = firstSeq;
  }

  /** The first break found in `row`, or undefined when it continues the chain. */
  check(row: AuditRow): AuditBreak | undefined {
    // Entries are numbered without a gap from 1 (a rolled-back commit gives its numbers back): a gap is a removal.
    const expectedSeq = (this.#last ?? this.#firstSeq - 1) + 1;
    if (row.seq !== expectedSeq) {
      if (row.seq < expectedSeq) return { seq: row.seq, reason: `entry ${row.seq} comes after entry ${expectedSeq - 1}: out of order` };
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
    this.#last = row.seq;
    this.#checked++;
    return undefined;
  }

  /** How many entries continued the chain. */
  get checked(): number {
    return this.#checked;
  }

  /** The seq of the last entry checked; undefined before any. */
  get lastSeq(): number | undefined {
    return this.#last;
  }

  /** The hash of the last entry checked (the start's before any). */
  get lastHash(): string {
    return this.#previous;
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
