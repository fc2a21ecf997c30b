/** The journal's records: a transfer from its claim to final: the Idempotency-Key's claim, each signed attempt and what the node and the chain said of it, the nonces it holds, and the lookups by id, key and hash. */
import type { JournalAttempt, JournalEntry, KeyClaim, RecordedRefusal, SignedTransfer, StoredDisplacement, TransferRequest } from "../journal-records.js";

export interface TransferRecords {
  /** Every lane of this network that has transfers claimed, signed or accepted: someone must follow them. */
  lanesWithUnsettled(): string[];
  /** Every network (chain id) that has transfers claimed, signed or accepted. */
  networksWithUnsettled(): bigint[];
  /**
   * Whether the signed attempt `hash` is durable. After a failed commit: false when the commit itself
   * failed (rolled back); when only shipping it to a shared database failed, what that database holds
   * (its acknowledgement may have been lost after it committed), or undefined when that cannot be told.
   */
  wasRecorded(hash: string): Promise<boolean | undefined>;
  /** The entry that holds `key`, in any lane, without claiming it. */
  findByKey(key: string): JournalEntry | undefined;
  /**
   * Atomically reserves `key` for a new entry, or returns the entry that holds it already. For a payout
   * batch, it takes the ids of the items it pays (not the duplicates) for the API key in the same write, and
   * throws PayoutItemsTakenError, claiming nothing, when another batch holds one of them.
   */
  claimKey(key: string, request: TransferRequest): KeyClaim;
  /** Stores the signed transaction, creating the entry when there was no claim. Returns the entry id. */
  recordSigned(entryId: number | undefined, request: TransferRequest, signed: SignedTransfer): number;
  /** A node took the entry's transaction: signed becomes accepted. Whether it changed (only a signed entry does). */
  recordAccepted(entryId: number): boolean;
  /** A claimed entry was refused before anything was signed. */
  recordRefused(entryId: number, refusal: RecordedRefusal): void;
  /** A signed entry's first broadcast was refused by the node: it is dead. */
  recordRejected(entryId: number, refusal: RecordedRefusal): void;
  /**
   * No attempt of the entry can ever be mined (another transaction used its nonce, proven) and it is not
   * signed again. Only from signed, accepted or nonce-used; whether it changed.
   */
  recordReplaced(entryId: number): boolean;
  /** Another transaction was found mined at the entry's nonce (null: the one found left the chain). */
  recordDisplacement(entryId: number, displacement: StoredDisplacement | null): void;
  /**
   * Another transaction used the entry's nonce (proven): it is signed again at `signed.nonce`, as a new
   * attempt of the same transfer (to be flushed before it is broadcast). Its earlier attempts stay its own.
   */
  recordSignedAgain(entryId: number, signed: SignedTransfer): void;
  /** Adds a re-priced or cancel attempt at the entry's nonce (to be flushed before it is broadcast). */
  recordAttempt(entryId: number, attempt: Omit<JournalAttempt, "createdAt">): void;
  /** One of the entry's attempts was mined: it carries the transfer (a cancel makes the entry cancelled). */
  recordMined(entryId: number, hash: string): void;
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
  /**
   * A reorganisation took mined transactions off the chain: entries whose nonce is at or above the chain's
   * mined nonce count at block `atBlock` are accepted once more (pending, followed like any other). Only
   * entries not final, and not seen settled at a head above `atBlock`: a count read at an older block (a
   * backend behind the others) says nothing of them. Returns how many.
   */
  markUnminedFrom(minedNonceCount: number, atBlock: number): number;
  /**
   * Settled transfers (nonce used, cancelled, replaced) not final yet and without a block are noted as
   * settled at `block` (an upper bound of where they were mined); with `resettle`, every one not final is
   * (after a reorganisation, finality is counted again from the new chain). Returns how many.
   */
  markSettledAt(block: number, resettle?: boolean): number;
  /** Whether any settled transfer is not final yet: then every block matters. */
  hasUnfinal(): boolean;
  /** The lowest block at which a verified transfer not final yet was seen settled: what finality waits for. */
  lowestUnfinalSettledBlock(): number | undefined;
  /** Settled transfers not final yet, by nonce. */
  unfinal(): JournalEntry[];
  /** A settled transfer not final yet that the chain no longer carries: pending again. Whether it was one. */
  markUnmined(entryId: number): boolean;
  /**
   * Settled transfers noted at or below the finalized block become final, once verified (which transaction
   * used a nonce is known). Returns how many.
   */
  finalizeThrough(finalizedBlock: number): number;
  /** Transfers made while webhooks were on, final, whose outcome was reported but not their finality. */
  finalizedUnreported(): JournalEntry[];
  /**
   * Entries whose nonce the chain has used while which transaction used it is not verified yet (a node took
   * one of its attempts, which proves nothing about what was mined). Not final ones only.
   */
  usedUnverified(): JournalEntry[];
  /** This lane's entries that may still need the node's attention: claimed, signed or accepted, by nonce. */
  unsettled(): JournalEntry[];
  /** The entry as the journal holds it now. */
  findById(entryId: number): JournalEntry | undefined;
  /** The entry one of whose attempts has this hash. */
  findByHash(hash: string): JournalEntry | undefined;
  /**
   * The entry one of whose attempts has this hash, wherever it is kept: a leader's working copy holds what
   * is not settled for good, and asks the shared database for any other hash.
   */
  lookUpByHash(hash: string): Promise<JournalEntry | undefined>;
  /**
   * The same, only for transfers with several attempts (re-priced or cancelled). For every hash the journal
   * holds it answers from memory, so that the lookup of any hash can ask it at no cost; a leader's working
   * copy asks the shared database about a hash it does not hold.
   */
  findWithSeveralAttempts(hash: string): JournalEntry | undefined | Promise<JournalEntry | undefined>;
  /**
   * Which of `nonces` of this view's lane on its network no transfer holds, here or (for a working copy) in
   * the shared database (a rejected transfer holds none: its nonce was given back): every nonce the service
   * uses is journaled before it is broadcast, so a counted nonce no transfer holds was most likely used by a
   * transaction this service never signed (the caller checks that transaction's hash too).
   */
  unjournaledNonces(nonces: readonly number[]): Promise<number[]>;
  /** The highest nonce a transfer of this view's lane on its network holds, here or in the shared database; undefined for none. */
  highestNonce(): Promise<number | undefined>;
}
