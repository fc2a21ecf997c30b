/**
 * Puts a prepared transfer on the chain: takes a nonce, signs, journals (durably) and broadcasts, and
 * decides from the node's answer, by meaning (node/node-answers.ts), whether the transaction was taken,
 * was surely refused (its nonce goes back), or may be anywhere (it stays journaled and is sent again).
 */
import { Transaction } from "ethers";
import type { ChainConnection } from "../node/connect-chain.js";
import { mayHoldIt } from "../node/broadcast-answers.js";
import { heldByNode } from "../node/held-by-node.js";
import { describeNodeAnswer } from "../node/ethers-errors.js";
import { type NodeAnswer, provesNotTaken, readNodeAnswer } from "../node/node-answers.js";
import {
  type AttemptKind,
  type JournalEntry,
  JournalOutcomeUnknownError,
  JournalUnavailableError,
  type RecordedRefusal,
  type TransferJournal,
  type TransferRequest,
} from "../journal/transfer-journal.js";
import type { NonceAllocator } from "./nonce-allocator.js";
import type { Reservation, WalletLedger } from "./wallet-ledger.js";
import { type SignedTokenTransfer, type WalletCall, reservationOf, sameCallAt, signWalletTransaction, snapshotFees } from "./wallet-transaction.js";

/** Places where tests can stop the process to prove nothing is lost (TEST_FAULT_POINT). */
export type FaultPoint = "after-sign" | "after-broadcast" | "after-replacement-sign";

/** A transfer that passed its pre-flight checks and holds its tokens and gas in the ledger. */
export interface PreparedTransfer {
  request: TransferRequest;
  /** What its transaction calls: the token's transfer(), the payout contract, the token's approve(), or for a gas top-up the lane it pays. */
  call: Omit<WalletCall, "nonce">;
  kind: Extract<AttemptKind, "transfer" | "top-up" | "approval">;
  reservation: Reservation;
  /** The journal entry of its Idempotency-Key claim, if any. */
  entryId: number | undefined;
  /** Told of a refusal at its first broadcast in the turn that journals it (an approved transfer's event joins that commit). */
  onRejected?: (entryId: number, refusal: RecordedRefusal) => void;
}

/**
 * The node surely refused the transfer's first broadcast, but the journal did not confirm the refusal's
 * record: the signed bytes are on record (with a shared database, may be), and a restart sends them again.
 * The client cannot be told "nothing was sent" or "never will be".
 */
export class RefusalUnrecordedError extends Error {
  override name = "RefusalUnrecordedError";

  constructor(
    readonly hash: string,
    override readonly cause: JournalUnavailableError | JournalOutcomeUnknownError,
  ) {
    super(`the node refused transaction ${hash}, but the journal did not confirm the refusal's record`);
  }
}

/** The node surely refused the transfer's first broadcast: nothing of it is or will be on chain. */
export class BroadcastRefusedError extends Error {
  override name = "BroadcastRefusedError";

  constructor(
    readonly answer: NodeAnswer,
    /** What the client is told, as journaled for repeats of its Idempotency-Key. */
    readonly refusal: RecordedRefusal,
  ) {
    super(refusal.message);
  }
}

/** How often a broadcast refused for a nonce gap is sent again once its predecessor went out. */
const IN_ORDER_ATTEMPTS = 8;
const POOL_FULL_ATTEMPTS = 3;

export interface TransferSubmitterOptions {
  chain: ChainConnection;
  journal: TransferJournal;
  ledger: WalletLedger;
  nonces: NonceAllocator;
  /** Told of a broadcast whose fate is not known yet (kept journaled and sent again), for the log. */
  onHeld: (hash: string, nonce: number, answer: NodeAnswer) => void;
  /** Awaited at each fault point; resolves at once outside tests. */
  reachFaultPoint?: (point: FaultPoint) => Promise<void>;
  /**
   * Resolves true once the node has room for the wallet's transaction at `nonce` (at most
   * MAX_IN_FLIGHT_PER_LANE of its transactions pending), false after a bounded wait: a new transfer's first
   * broadcast waits for it, journaled, so that signing and journaling go on while the node's slots are full.
   * Without room it is not sent now: held, the background sends it once there is room.
   */
  awaitRoomAtNode?: (nonce: number) => Promise<boolean>;
}

/** Signs and broadcasts prepared transfers for one hot wallet; safe to call concurrently. */
export class TransferSubmitter {
  readonly #options: TransferSubmitterOptions;
  readonly #inFlightEntries = new Set<number>();
  // The first broadcast of each nonce under way: a successor refused for a nonce gap waits for it.
  readonly #broadcastsByNonce = new Map<number, Promise<unknown>>();
  // Nonces taken whose signature is being made: nothing is journaled at them yet, and they are no hole.
  readonly #beingSigned = new Set<number>();

  constructor(options: TransferSubmitterOptions) {
    this.#options = options;
  }

  /** True while a request is working on this journal entry. */
  isInFlight(entryId: number): boolean {
    return this.#inFlightEntries.has(entryId);
  }

  /** Whether a transfer took `nonce` and is being signed (not journaled yet). */
  isBeingSigned(nonce: number): boolean {
    return this.#beingSigned.has(nonce);
  }

  // Nothing of the wallet's unmined, being signed or broadcast.
  #isIdle(): boolean {
    return this.#options.ledger.unminedCount === 0 && this.#inFlightEntries.size === 0 && this.#beingSigned.size === 0;
  }

  /** Transfers being signed or broadcast right now. */
  get inFlightCount(): number {
    return this.#inFlightEntries.size;
  }

  /**
   * Signs and broadcasts. Resolves once the transfer is durably journaled and either taken by the node or
   * held for sending again (the node's answer was lost or unclear, or it called the nonce used): from then
   * on the service owns it. Throws BroadcastRefusedError when the node surely refused it (journaled as
   * rejected, nonce given back), JournalUnavailableError when it could not be journaled (nothing was sent),
   * RefusalUnrecordedError when the refusal could not be journaled (the signed bytes stay on record).
   */
  async submit(prepared: PreparedTransfer): Promise<SignedTokenTransfer> {
    // In flight from the signature to the answer, so background work (a re-send, a cancel) never acts on
    // the entry before its first broadcast is decided.
    const inFlight = new Set<number>();
    try {
      const { transfer, answer } = await this.#signAndBroadcast(prepared, inFlight);
      if (!answer) return transfer;
      let refusal: RecordedRefusal;
      try {
        refusal = await this.#recordRefusal(prepared, transfer, answer);
      } catch (error) {
        if (error instanceof JournalUnavailableError || error instanceof JournalOutcomeUnknownError) throw new RefusalUnrecordedError(transfer.hash, error);
        throw error;
      }
      throw new BroadcastRefusedError(answer, refusal);
    } finally {
      for (const entryId of inFlight) this.#inFlightEntries.delete(entryId);
    }
  }

  /**
   * Signs a transfer again at a new nonce, as a new attempt of the same transfer: another transaction was
   * mined at its nonce (proven by the reconciler), so none of its attempts can ever be. Journaled before it
   * is broadcast; a broadcast not taken stays journaled and is sent again like any other. Resolves false
   * when it cannot be signed (the journal takes no writes).
   */
  async signAgain(entry: JournalEntry): Promise<boolean> {
    const { chain, journal, ledger, nonces } = this.#options;
    const latest = entry.attempts.at(-1);
    if (!latest || latest.kind === "cancel" || journal.failure) return false;
    const previous = Transaction.from(latest.rawTransaction);
    // In flight from before its signature: a cancel must not act between its old attempts and the new one.
    this.#inFlightEntries.add(entry.id);
    try {
      await nonces.ready();
      nonces.passMined(ledger.snapshot.minedNonceCount);
      const nonce = nonces.take();
      let transfer: SignedTokenTransfer;
      this.#beingSigned.add(nonce);
      try {
        transfer = await signWalletTransaction(chain, sameCallAt(previous, nonce), snapshotFees(ledger.snapshot));
        journal.recordSignedAgain(entry.id, { nonce, hash: transfer.hash, rawTransaction: transfer.rawTransaction, signedAtBlock: ledger.snapshot.blockNumber, kind: latest.kind });
        await journal.flushed();
      } catch (error) {
        if (!journal.failure) nonces.release(nonce);
        if (error instanceof JournalUnavailableError) return false;
        // A signer that did not sign: the transfer stays owed, and the next round tries again.
        throw error;
      } finally {
        this.#beingSigned.delete(nonce);
      }
      ledger.trackSent(nonce, reservationOf(journal.findById(entry.id) as JournalEntry, ledger.snapshot.l1DataFee));
      const answer = await this.#broadcastInOrder(transfer.rawTransaction, nonce);
      if (answer === "taken") journal.recordAccepted(entry.id);
      else this.#options.onHeld(transfer.hash, nonce, "held" in answer ? answer.held : answer);
      return true;
    } finally {
      this.#inFlightEntries.delete(entry.id);
    }
  }

  // Taking the nonce is synchronous, so concurrent transfers get distinct nonces; signing may take a remote
  // signer's round trip, during which other transfers are signed too. Journaled before anything is sent.
  async #signAndBroadcast(prepared: PreparedTransfer, inFlight: Set<number>): Promise<{ transfer: SignedTokenTransfer; answer?: NodeAnswer }> {
    const { journal, ledger, nonces } = this.#options;
    // A wallet with nothing in flight may have been used by another sender of its key since its count was
    // read: the first transfer reads the count (those that arrive meanwhile share the read), rather than sign
    // at a nonce another transaction took, which would hold it until that one is final (minutes on a rollup).
    // Busy, the lane's snapshots keep the count fresh.
    await nonces.ready(this.#isIdle() ? 0 : undefined);
    // Nonces the chain shows used are not signed at: such a transfer would wait until that use is final.
    nonces.passMined(ledger.snapshot.minedNonceCount);
    const nonce = nonces.take();
    // A successor refused for the nonce gap waits for this nonce's broadcast from the moment it is taken.
    let ourTurnIsOver!: () => void;
    this.#broadcastsByNonce.set(nonce, new Promise<void>((resolve) => (ourTurnIsOver = resolve)));
    try {
      let transfer: SignedTokenTransfer;
      let entryId: number;
      this.#beingSigned.add(nonce);
      try {
        transfer = await this.#sign(prepared, nonce);
        entryId = journal.recordSigned(prepared.entryId, prepared.request, {
          nonce,
          hash: transfer.hash,
          rawTransaction: transfer.rawTransaction,
          signedAtBlock: ledger.snapshot.blockNumber,
          kind: prepared.kind,
        });
      } catch (error) {
        // Nothing was signed or recorded at this nonce: the next transfer fills it.
        nonces.release(nonce);
        throw error;
      } finally {
        this.#beingSigned.delete(nonce);
      }
      prepared.entryId = entryId;
      ledger.assignNonce(prepared.reservation, nonce);
      this.#inFlightEntries.add(entryId);
      inFlight.add(entryId);
      return { transfer, answer: await this.#journalThenBroadcast(prepared, transfer, nonce) };
    } finally {
      ourTurnIsOver();
      this.#broadcastsByNonce.delete(nonce);
    }
  }

  // Resolves with the node's refusal when it surely refused, else undefined (taken, or held to send again).
  async #journalThenBroadcast(prepared: PreparedTransfer, transfer: SignedTokenTransfer, nonce: number): Promise<NodeAnswer | undefined> {
    const { journal, ledger, nonces } = this.#options;
    try {
      // Nothing leaves the process before the signed bytes are on disk.
      await journal.flushed();
    } catch (error) {
      // Facts, not the error: a shared database may hold the record although its acknowledgement was lost.
      const recorded = error instanceof JournalUnavailableError ? await journal.wasRecorded(transfer.hash) : false;
      // Recorded: the transfer is owned (whoever leads next sends it); nothing more is sent from here.
      if (recorded === true) {
        this.#options.onHeld(transfer.hash, nonce, { meaning: "no-answer", nodeMessage: "the journal failed after recording it; it is sent by whoever leads next" });
        return undefined;
      }
      if (recorded === undefined) throw new JournalOutcomeUnknownError(transfer.hash, error);
      // The record is lost with the failed commit, so these bytes must never be sent: the nonce goes back.
      ledger.release(prepared.reservation, nonce);
      ledger.reserveAgain(prepared.reservation);
      nonces.release(nonce);
      throw error;
    }
    await this.#reachFaultPoint("after-sign");
    if (this.#options.awaitRoomAtNode && !(await this.#options.awaitRoomAtNode(nonce))) {
      // Journaled and owned: sent by the background once the node has room (a full node would refuse it).
      this.#options.onHeld(transfer.hash, nonce, { meaning: "pool-full", nodeMessage: "not sent yet: the node holds MAX_IN_FLIGHT_PER_LANE of the wallet's transactions" });
      return undefined;
    }
    const answer = await this.#broadcastInOrder(transfer.rawTransaction, nonce);
    if (answer === "taken") {
      await this.#reachFaultPoint("after-broadcast");
      // The signed bytes are durable and a node has them: the service owns the transfer, even when this
      // write fails because another commit failed meanwhile (the restart's reconciliation finds it taken).
      try {
        journal.recordAccepted(prepared.entryId as number);
      } catch (error) {
        if (!(error instanceof JournalUnavailableError)) throw error;
      }
      return undefined;
    }
    if ("held" in answer) {
      this.#options.onHeld(transfer.hash, nonce, answer.held);
      // The words say another transaction has the nonce: the next transfers start past the chain's count
      // (a fast path on words; this one keeps its nonce, and the chain decides its fate).
      if (mayHoldIt(answer.held.meaning)) await nonces.catchUpWithChain();
      return undefined;
    }
    ledger.release(prepared.reservation, nonce);
    ledger.reserveAgain(prepared.reservation);
    nonces.release(nonce);
    return answer;
  }

  /**
   * The first broadcast of these bytes. "taken": a node has them. Held: the answer was lost or unclear,
   * or the node wants the predecessors first and they did not arrive in time: the bytes stay journaled
   * and the background sends them again in nonce order. A NodeAnswer: surely refused.
   */
  async #broadcastInOrder(rawTransaction: string, nonce: number): Promise<"taken" | { held: NodeAnswer } | NodeAnswer> {
    const { provider } = this.#options.chain;
    for (let attempt = 1; ; attempt++) {
      let answer: NodeAnswer;
      try {
        await provider.send("eth_sendRawTransaction", [rawTransaction]);
        return "taken";
      } catch (error) {
        answer = readNodeAnswer(error);
      }
      if (answer.meaning === "already-known") return "taken";
      if (answer.meaning === "nonce-too-high") {
        // Transactions of one wallet reach a node out of order when sent concurrently; a node that does
        // not queue them (Hardhat automining, Nethermind, L2 sequencers) asks for the predecessor first.
        if (attempt >= IN_ORDER_ATTEMPTS) return { held: answer };
        await (this.#broadcastsByNonce.get(nonce - 1) ?? delay(25 * 2 ** attempt));
        continue;
      }
      if (answer.meaning === "pool-full" && attempt < POOL_FULL_ATTEMPTS) {
        await delay(250 * 2 ** attempt);
        continue;
      }
      // A lone endpoint's rate limit was asked again with backoff already; the bytes are journaled and go out later.
      if (answer.meaning === "rate-limited") return { held: answer };
      // Words, no proof: through a gateway that retried it on another backend, "nonce too low" can be
      // these very bytes, taken and mined meanwhile. Signing again at a new nonce could pay twice, so they
      // stay journaled; the reconciler signs again only once another transaction at the nonce is final.
      if (mayHoldIt(answer.meaning)) return { held: answer };
      if (!provesNotTaken(answer.meaning)) return { held: answer };
      // No endpoint let the bytes in: nothing to ask.
      if (answer.meaning === "connection-refused") return answer;
      // Refused in words: a 417 only when the node also has no such transaction.
      return (await heldByNode(this.#options.chain.provider, rawTransaction)) ? "taken" : answer;
    }
  }

  // The client will be told it failed: that must survive a crash, or a restart would send it again.
  async #recordRefusal(prepared: PreparedTransfer, transfer: SignedTokenTransfer, answer: NodeAnswer): Promise<RecordedRefusal> {
    const { journal } = this.#options;
    const { code, message } = describeNodeAnswer(answer);
    const refusal = { code, message: `${message}; transaction ${transfer.hash} was not sent and never will be` };
    journal.recordRejected(prepared.entryId as number, refusal);
    prepared.onRejected?.(prepared.entryId as number, refusal);
    await journal.flushed();
    return refusal;
  }

  #sign(prepared: PreparedTransfer, nonce: number): Promise<SignedTokenTransfer> {
    const { chain, ledger } = this.#options;
    return signWalletTransaction(chain, { ...prepared.call, nonce }, snapshotFees(ledger.snapshot));
  }

  #reachFaultPoint(point: FaultPoint): Promise<void> {
    return this.#options.reachFaultPoint?.(point) ?? Promise.resolve();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
