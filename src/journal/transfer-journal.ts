/**
 * The durable record of every transfer, written before anything is broadcast. An interface, so that a
 * networked store can replace the SQLite one; every method is atomic on its own.
 */

/**
 * claimed: an Idempotency-Key is reserved, nothing signed yet.
 * signed: the raw transaction is stored; the node may or may not have it.
 * accepted: the node accepted it. settled: its nonce is used on chain (by it, or by a replacement).
 * replaced: another transaction took its nonce. rejected: the node refused it; nothing is on chain.
 */
export type JournalState = "claimed" | "signed" | "accepted" | "settled" | "replaced" | "rejected";

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

export interface JournalEntry extends TransferRequest {
  id: number;
  idempotencyKey: string | null;
  state: JournalState;
  nonce: number | null;
  hash: string | null;
  rawTransaction: string | null;
  createdAt: number;
}

/** The outcome of claiming an Idempotency-Key: a new entry, or the entry that already holds the key. */
export type KeyClaim = { outcome: "claimed"; entryId: number } | { outcome: "existing"; entry: JournalEntry };

/**
 * Writes take effect at once for every later read, and reach the disk together with the other writes of
 * the same moment (group commit): await `flushed()` before acting on one, as before a broadcast.
 */
export interface TransferJournal {
  /** Resolves once every write made so far is durable; rejects if committing them failed. */
  flushed(): Promise<void>;
  /** Atomically reserves `key` for a new entry, or returns the entry that holds it already. */
  claimKey(key: string, request: TransferRequest): KeyClaim;
  /** Stores the signed transaction, creating the entry when there was no claim. Returns the entry id. */
  recordSigned(entryId: number | undefined, request: TransferRequest, signed: SignedTransfer): number;
  recordAccepted(entryId: number): void;
  recordRejected(entryId: number): void;
  recordReplaced(entryId: number): void;
  /** Frees the entry's key so that a retry runs afresh; a claim with nothing signed is deleted. */
  releaseKey(entryId: number): void;
  /** Marks accepted entries below the chain's mined nonce count as settled. Returns how many changed. */
  settleBelowNonce(minedNonceCount: number): number;
  /** Entries that may still need the node's attention: claimed, signed or accepted, by nonce. */
  unsettled(): JournalEntry[];
  findByHash(hash: string): JournalEntry | undefined;
  /** What each API key had signed since `since` (ms), for the per-key caps after a restart. */
  spentSince(since: number): { apiKeyId: string; units: bigint; at: number }[];
  /** Forgets keys older than `maxAgeMs` (the entries stay). Returns how many were forgotten. */
  expireKeys(maxAgeMs: number, now?: number): number;
  close(): void;
}
