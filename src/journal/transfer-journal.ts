/**
 * The durable record of every transfer, written before anything is broadcast. An interface, so that a
 * networked store can replace the SQLite one; every method is atomic on its own.
 */

/**
 * claimed: an Idempotency-Key is reserved, nothing signed yet.
 * refused: refused before anything was signed; the client was told `answer`.
 * signed: the raw transaction is stored; no node is known to have it (yet).
 * accepted: a node took it.
 * nonce-used: the chain's mined nonce count passed its nonce.
 * replaced: another transaction was mined at its nonce (proven, not guessed from one missing receipt).
 * rejected: the node refused its first broadcast; it is never sent again and the client was told `answer`.
 */
export type JournalState = "claimed" | "refused" | "signed" | "accepted" | "nonce-used" | "replaced" | "rejected";

/** What a client asked for: the checksummed recipient and the amount in base units. */
export interface TransferRequest {
  recipient: string;
  units: bigint;
  /** The API key that asked for it (its id, not the key), for the per-key cap. */
  apiKeyId?: string;
}

export interface SignedTransfer {
  nonce: number;
  hash: string;
  rawTransaction: string;
}

/** The refusal a client was given, kept so that a repeat of its Idempotency-Key gets the same answer. */
export interface RecordedRefusal {
  code: string;
  message: string;
}

export interface JournalEntry extends TransferRequest {
  id: number;
  idempotencyKey: string | null;
  state: JournalState;
  nonce: number | null;
  hash: string | null;
  rawTransaction: string | null;
  /** Set for refused and rejected entries. */
  refusal: RecordedRefusal | null;
  createdAt: number;
}

/** The outcome of claiming an Idempotency-Key: a new entry, or the entry that already holds the key. */
export type KeyClaim = { outcome: "claimed"; entryId: number } | { outcome: "existing"; entry: JournalEntry };

/** The journal cannot take writes: a commit failed (disk full, I/O error). Nothing may be broadcast. */
export class JournalUnavailableError extends Error {
  override name = "JournalUnavailableError";

  constructor(override readonly cause: unknown) {
    super(`the transfer journal failed to commit (${cause instanceof Error ? cause.message : String(cause)}); it takes no writes until the service is restarted`);
  }
}

/**
 * Writes take effect at once for every later read, and reach the disk together with the other writes of
 * the same moment (group commit): await `flushed()` before acting on one, as before a broadcast. A write
 * that finds no row to change throws; once a commit has failed, every write and every `flushed()` throws
 * JournalUnavailableError, so nothing is ever broadcast without its record.
 */
export interface TransferJournal {
  /** Resolves once every write made so far is durable; rejects if committing them failed. */
  flushed(): Promise<void>;
  /** Why the journal takes no writes, or undefined while it is healthy. */
  readonly failure: JournalUnavailableError | undefined;
  /** Atomically reserves `key` for a new entry, or returns the entry that holds it already. */
  claimKey(key: string, request: TransferRequest): KeyClaim;
  /** Stores the signed transaction, creating the entry when there was no claim. Returns the entry id. */
  recordSigned(entryId: number | undefined, request: TransferRequest, signed: SignedTransfer): number;
  recordAccepted(entryId: number): void;
  /** A claimed entry was refused before anything was signed. */
  recordRefused(entryId: number, refusal: RecordedRefusal): void;
  /** A signed entry's first broadcast was refused by the node: it is dead. */
  recordRejected(entryId: number, refusal: RecordedRefusal): void;
  recordReplaced(entryId: number): void;
  /**
   * Frees the key of a claim that never got signed (the claim is deleted), so that a retry runs afresh.
   * A signed entry keeps its key whatever happens: its transaction may be on chain, and a repeat must
   * answer it rather than send another. Returns whether the key was freed.
   */
  releaseKey(entryId: number): boolean;
  /**
   * Marks accepted entries below the chain's mined nonce count as nonce-used. Signed ones stay: no node was
   * known to hold them, so whose transaction used the nonce is for the reconciler to find out.
   */
  markNonceUsedBelow(minedNonceCount: number): number;
  /** Entries that may still need the node's attention: claimed, signed or accepted, by nonce. */
  unsettled(): JournalEntry[];
  findByHash(hash: string): JournalEntry | undefined;
  /** What each API key had signed since `since` (ms), for the per-key caps after a restart. */
  spentSince(since: number): { apiKeyId: string; units: bigint; at: number }[];
  /** Forgets keys older than `maxAgeMs` (the entries stay). Returns how many were forgotten. */
  expireKeys(maxAgeMs: number, now?: number): number;
  close(): void;
}
