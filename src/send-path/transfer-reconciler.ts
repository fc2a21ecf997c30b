/**
 * Brings journal entries and the chain into agreement: a transaction no node is known to hold is sent
 * again with the very bytes that were signed (never re-signed), in nonce order. A node's refusal of a
 * re-send proves nothing (another node's pool may hold the first copy), so it never frees a nonce. Nor does
 * absence: a missing receipt, log or lookup is a backend whose index lags its head. A transfer is signed
 * again at a new nonce only when the chain itself shows another transaction at its nonce (the block where
 * the wallet's count passed it, and that transaction in the block's body), and that block is final.
 */
import { SignerUnavailableError } from "../signers/wallet-signer.js";
import { toQuantity } from "ethers";
import { steadyWallClockNow } from "../clock.js";
import type { ChainConnection } from "../node/connect-chain.js";
import { DEFAULT_FINALITY_BLOCKS, FinalizedBlockReader } from "../node/finalized-block.js";
import { type NodeAnswerMeaning, isNodeError, readNodeAnswer } from "../node/node-answers.js";
import { ReceiptsOnChain } from "../node/receipt-on-chain.js";
import { type BlockRef, NonceSearches, findNonceUse } from "../node/wallet-nonce-use.js";
import type { JournalEntry, TransferJournal } from "../journal/transfer-journal.js";
import { type Displacement, NonceDisplacements } from "./nonce-displacements.js";
import type { WalletLedger } from "./wallet-ledger.js";
import { reservationOf } from "./wallet-transaction.js";

/**
 * taken: a node has it (or mined it). replaced: another transaction was mined at its nonce, in a final block.
 * waiting: not (yet) taken; it is sent again next round. The meaning says why, for the log. displaced, not
 * final: another transaction was found mined at its nonce, in a block not final yet: nothing is signed.
 * held, not executable: the wallet's next transaction, which the node holds without counting it in the
 * wallet's pending nonce: it will not be mined as it is (anvil's pool can leave a transaction waiting for a
 * predecessor that was mined meanwhile, foundry-rs/foundry#10122), and the same bytes cannot move it.
 */
export type ResendOutcome =
  | "taken"
  | "replaced"
  | "signed again"
  | "held, not executable"
  | "settled meanwhile"
  | "waiting: displaced, not final"
  | `waiting: ${NodeAnswerMeaning | "nonce used, checking again" | "nonce unused again"}`;

/** What startup reconciliation did, for the log. */
export interface ReconcileSummary {
  abandonedClaims: number;
  taken: number;
  replaced: number;
  waiting: number;
}

/** The block a settled transfer was seen mined in, as its receipt or its Transfer log named it. */
export type MinedIn = BlockRef;

/**
 * Signs a transfer whose nonce another transaction used again at a new nonce (journaled, then broadcast).
 * Resolves with false when that cannot be done (the transfer is then reported failed).
 */
export type SignAgain = (entry: JournalEntry) => Promise<boolean>;

/** How the reconciler tells a final block; shared with the status document (which shows displacements). */
export interface ReconcilerFinality {
  finalized?: FinalizedBlockReader;
  displacements?: NonceDisplacements;
  /** The wallet's searches for what used a nonce (resumed from round to round), and the counts noted as hints. */
  nonceSearches?: NonceSearches;
}

export class TransferReconciler {
  readonly #finalized: FinalizedBlockReader;
  // Entries being signed again right now (by the background resend or a round): never twice at once.
  readonly #signingAgain = new Set<number>();
  #head = 0;
  /** Transfers displaced by a transaction whose block is not final yet. */
  readonly displacements: NonceDisplacements;
  // Entry id -> what the node said to its last re-send, while it is refused.
  readonly #lastRefusal = new Map<number, NodeAnswerMeaning>();
  #signAgain: SignAgain | undefined;
  /**
   * Told each time a node does not give the wallet's pending count after a re-send of its next transaction
   * (`at`): without it, a node that holds that transaction without counting it is not noticed at once (the
   * "held without being counted" replacement waits for it; the re-price of the wallet's next nonce does not).
   */
  onPendingCountUnread: ((error: unknown, at: { nonce: number; hash: string }) => void) | undefined;
  /** Told when the chain's newest blocks show a nonce unused that the wallet snapshot counts as used. */
  onSnapshotStale: (() => void) | undefined;
  /** Told the block each transfer it settles was seen mined in: finality checks that block stays on the chain. */
  onMinedIn: ((entryId: number, block: MinedIn) => void) | undefined;
  /** Told of a transfer's nonce the chain counts used whose user no block body where it could be holds (it waits). */
  onUnfindable: ((entry: JournalEntry, searched: { from: number; to: number }) => void) | undefined;
  readonly #nonceSearches: NonceSearches;

  constructor(
    private readonly chain: ChainConnection,
    private readonly journal: TransferJournal,
    private readonly ledger: WalletLedger,
    finality: ReconcilerFinality = {},
  ) {
    this.#finalized = finality.finalized ?? new FinalizedBlockReader(chain.provider, DEFAULT_FINALITY_BLOCKS, chain.chainId);
    this.displacements = finality.displacements ?? new NonceDisplacements();
    this.#nonceSearches = finality.nonceSearches ?? new NonceSearches();
  }

  /**
   * How a transfer whose nonce another transaction used (in a final block) is signed again; until it is
   * set (at startup, before the send path exists) such a transfer waits for the next round.
   */
  set signAgain(signAgain: SignAgain) {
    this.#signAgain = signAgain;
  }

  /** What the node said to the entry's last re-send, while it keeps refusing it; undefined once taken. */
  lastRefusalOf(entryId: number): NodeAnswerMeaning | undefined {
    return this.#lastRefusal.get(entryId);
  }

  /**
   * Run once before serving: claims that never got signed are dropped (no answer was given, nothing was
   * sent: the client's retry runs afresh) and approved ones await their approval again; every signed or
   * accepted entry is found on chain or sent again.
   * A settled entry whose nonce the chain no longer counts as mined (a reorganisation while the service was
   * down) is unsettled first: it is sent again, and its nonce, which its signed bytes still hold, is never
   * handed to another transfer.
   */
  async reconcileAtStartup(): Promise<ReconcileSummary> {
    const summary: ReconcileSummary = { abandonedClaims: 0, taken: 0, replaced: 0, waiting: 0 };
    this.journal.markUnminedFrom(this.ledger.snapshot.minedNonceCount, this.ledger.snapshot.blockNumber);
    for (const entry of this.journal.unsettled()) {
      if (entry.state === "claimed") {
        // An approved transfer is not dropped: it awaits its approval again (nothing was signed).
        if (!this.journal.returnToApproval(entry.id)) this.journal.releaseKey(entry.id);
        summary.abandonedClaims++;
        continue;
      }
      let outcome: ResendOutcome;
      try {
        outcome = await this.resend(entry);
      } catch (error) {
        // A fault of the moment (a rate limit on a finalized read, a time-out) does not stop the start: the
        // background resend takes the entry up at its first round.
        if (!isNodeError(error)) throw error;
        summary.waiting++;
        continue;
      }
      summary[outcome === "taken" || outcome === "replaced" ? outcome : "waiting"]++;
    }
    await this.journal.flushed();
    return summary;
  }

  /**
   * Makes sure a node has this entry's transaction, or learns that it cannot. `blocksTheWallet`: its nonce
   * is the next to be mined, so every later transfer waits for it: the same bytes go out again even when
   * the node says it holds them (a node can keep a transaction in its pool without ever mining it, and
   * sending identical bytes again is always safe). Throws on node faults.
   */
  async resend(entry: JournalEntry, blocksTheWallet = false): Promise<ResendOutcome> {
    // The latest attempt: a re-priced one replaced the ones before it in the pools.
    const latest = entry.attempts.at(-1);
    if (!latest || entry.nonce === null) throw new Error(`journal entry ${entry.id} was never signed`);
    // The chain has used its nonce: sending these bytes again cannot help, whatever a node would say.
    if (entry.nonce < this.ledger.snapshot.minedNonceCount) return this.settleUsedNonce(entry);
    const { provider } = this.chain;
    const known = (await provider.send("eth_getTransactionByHash", [latest.hash])) as { blockNumber?: string | null } | null;
    if (known && (known.blockNumber != null || !blocksTheWallet)) return this.#taken(entry);
    let heldAlready = known !== null;
    // A replacement's record may still be on its way to disk (the replacer flushes, then broadcasts): nothing
    // leaves the process before it is durable, or a restart would not know the hash that may be mined.
    await this.journal.flushed();
    // Read again at the moment of sending: while the node was asked, the entry may have been refused (its
    // nonce given back), re-priced or settled, and then these bytes must not go out.
    if (!isStillUnsettled(this.journal.findById(entry.id), latest.hash)) return "settled meanwhile";
    try {
      await provider.send("eth_sendRawTransaction", [latest.rawTransaction]);
    } catch (error) {
      const { meaning } = readNodeAnswer(error);
      // Another attempt of ours holds the nonce in the pool (a re-priced one the node kept instead).
      if (meaning === "replacement-underpriced" && entry.attempts.length > 1) return this.#taken(entry);
      if (meaning !== "already-known") {
        // Words are a hint; the chain decides: a used nonce is settled from receipts, whatever the wording.
        if (meaning === "nonce-too-low" || (await this.#minedNonceCount()) > entry.nonce) return this.settleUsedNonce(entry);
        this.#lastRefusal.set(entry.id, meaning);
        return `waiting: ${meaning}`;
      }
      heldAlready = true;
    }
    const outcome = this.#taken(entry);
    if (blocksTheWallet) {
      // A node that holds these bytes already and does not count them as pending keeps them where they are
      // never mined: replaced at once. Not counted after taking them afresh proves nothing (the count may come
      // from another backend of a fleet, one that has not seen them yet), nor does a count the node does not
      // give: these bytes went out, and the replacer re-prices the wallet's next nonce once it waited long enough.
      const counted = await this.#countedAsPending(entry.nonce).catch((error: unknown) => {
        this.onPendingCountUnread?.(error, { nonce: entry.nonce as number, hash: latest.hash });
        return undefined;
      });
      if (heldAlready && counted === false) return "held, not executable";
    }
    return outcome;
  }

  async #minedNonceCount(): Promise<number> {
    return Number(await this.chain.provider.send("eth_getTransactionCount", [this.chain.wallet.address, "latest"]));
  }

  // Whether the node counts a transaction at this nonce among the wallet's pending ones.
  async #countedAsPending(nonce: number): Promise<boolean> {
    const count = await this.chain.provider.send("eth_getTransactionCount", [this.chain.wallet.address, "pending"]);
    return Number(count) > nonce;
  }

  /**
   * The chain has used the entry's nonce: by one of its attempts (which one is recorded when it had
   * several), or by another transaction, found in the block where the wallet's count passed the nonce
   * (replaced, and signed again, only once that block is final).
   */
  async settleUsedNonce(listed: JournalEntry): Promise<ResendOutcome> {
    // As it is now: an attempt added since the caller read it (a re-price, a cancel) may be what was mined.
    const entry = this.journal.findById(listed.id) ?? listed;
    const { snapshot } = this.ledger;
    const receipts = new ReceiptsOnChain(this.chain.provider, [{ number: snapshot.blockNumber, hash: snapshot.blockHash }]);
    // Newest first: a re-priced transfer is mostly mined with its latest attempt.
    for (const attempt of [...entry.attempts].reverse()) {
      const minedIn = await receipts.minedIn(attempt.hash);
      if (!minedIn) continue;
      this.recordMined(entry, attempt.hash, minedIn);
      return "taken";
    }
    // No receipt (or one whose block is not the chain's) proves nothing (a backend's index lags its head, or
    // outlived a reorganisation): the chain's blocks say what used the nonce.
    const displacement = await this.#findDisplacement(entry);
    if (displacement === "unused") {
      // The wallet snapshot that said it used is older than the chain now (a reorganisation dropped what used
      // it, and an idle service reads no snapshot): a fresh one makes it pending again, and its bytes go out.
      this.onSnapshotStale?.();
      return "waiting: nonce unused again";
    }
    if (displacement === "ours" || displacement === undefined) return displacement === "ours" ? "taken" : "waiting: nonce used, checking again";
    this.displacements.set(entry.id, displacement);
    // Journaled once found: a restart or a new leader goes on from it (its block may be long past the state kept).
    if (entry.displacement?.by !== displacement.by || entry.displacement.nonce !== displacement.nonce) this.journal.recordDisplacement(entry.id, displacement);
    const finality = await this.#finalityOf(displacement.block);
    if (finality !== "final") {
      // Gone: the entry is looked at afresh (its own bytes may yet be mined at its nonce).
      if (finality === "left the chain") {
        this.displacements.delete(entry.id);
        this.journal.recordDisplacement(entry.id, null);
      }
      return finality === "left the chain" ? "waiting: nonce used, checking again" : "waiting: displaced, not final";
    }
    // Not before the send path is wired (at startup): the next round signs it again.
    if (!this.#signAgain) return "waiting: displaced, not final";
    // Decided on the entry as it is at this moment, once: no attempt added while the chain was read, no
    // other round signing it again meanwhile.
    const now = this.journal.findById(entry.id);
    if (!now || !isOwedAt(now, entry) || this.#signingAgain.has(entry.id)) return "waiting: nonce used, checking again";
    // Answered 417 once, then found mined after all (an incident), and now displaced: its client was told it
    // was never sent, and may have paid it another way. Never signed again.
    if (now.refusal !== null) {
      this.displacements.delete(entry.id);
      this.journal.recordReplaced(entry.id);
      return "replaced";
    }
    this.#signingAgain.add(entry.id);
    try {
      this.displacements.delete(entry.id);
      this.#lastRefusal.delete(entry.id);
      // Its tokens and gas are no longer held at that nonce: it went to another transaction, not back to the pool.
      this.ledger.forgetNonce(entry.nonce as number);
      // None of its attempts can ever be mined: the transfer is still owed, at a new nonce, where that can be done.
      let signed: boolean;
      try {
        signed = await this.#signAgain(now);
      } catch (error) {
        // Not signed (a pause, a signer down): still displaced, as the status document says, until it is.
        this.displacements.set(entry.id, displacement);
        throw error;
      }
      if (signed) return "signed again";
      this.journal.recordReplaced(entry.id);
      return "replaced";
    } finally {
      this.#signingAgain.delete(entry.id);
    }
  }

  /** The newest head a block read showed: how deep a displacing block is counts from here when idle. */
  noteHead(blockNumber: number): void {
    this.#head = Math.max(this.#head, blockNumber);
  }

  // The other transaction that used the entry's nonce (the one found before, while its block holds, or
  // searched for in the chain as of the newest block read); "ours" when an attempt of the entry did
  // (recorded as mined); "unused" when the nonce is unused at that block, read by number, and it is no lower
  // than the head the entry was seen settled at; undefined when the chain does not show it yet (a search of
  // older blocks' bodies under way, resumed next round), or nothing found where it could be (unfindable,
  // reported): the transfer then waits, and is never paid twice. The one found is journaled by the caller.
  async #findDisplacement(entry: JournalEntry): Promise<Displacement | "ours" | "unused" | undefined> {
    // A displacement found for the nonce the entry had before it was signed again (a round that read it
    // earlier put it back) says nothing about the nonce it has now.
    let found = this.displacements.of(entry.id, entry.nonce) ?? (entry.displacement?.nonce === entry.nonce ? entry.displacement : undefined);
    if (!found) {
      const head = Math.max(this.#head, this.ledger.snapshot.blockNumber);
      const below = Math.min(...entry.attempts.map((attempt) => attempt.signedAtBlock));
      const use = await findNonceUse(this.chain.provider, this.chain.wallet.address, entry.nonce as number, head, below, this.#nonceSearches).catch(() => undefined);
      if (use?.kind === "unused") return entry.settledBlock === null || head >= entry.settledBlock ? "unused" : undefined;
      if (use?.kind === "unfindable") this.onUnfindable?.(entry, use.searched);
      if (use?.kind !== "used") return undefined;
      found = { by: use.by, block: use.block, nonce: entry.nonce as number };
    }
    const ours = entry.attempts.find((attempt) => attempt.hash.toLowerCase() === found.by);
    if (!ours) return found;
    this.recordMined(entry, ours.hash, found.block);
    return "ours";
  }

  // Whether `block` is final: at or below the finalized block, and still the chain's block at its height
  // (read by number; a backend that does not return it yet decides nothing).
  async #finalityOf(block: BlockRef): Promise<"final" | "not final" | "left the chain"> {
    const finalized = await this.#finalized.number(Math.max(this.#head, this.ledger.snapshot.blockNumber));
    if (finalized === null || block.number > finalized) return "not final";
    const there = (await this.chain.provider.send("eth_getBlockByNumber", [toQuantity(block.number), false])) as { hash: string } | null;
    if (!there) return "not final";
    return there.hash === block.hash ? "final" : "left the chain";
  }

  /**
   * The chain mined the entry's attempt `hash` in block `minedIn` (its receipt, or its Transfer log):
   * settled and verified. Which attempt carries it matters (a mined cancel means cancelled).
   */
  recordMined(entry: JournalEntry, hash: string, minedIn: MinedIn): void {
    this.displacements.delete(entry.id);
    this.#lastRefusal.delete(entry.id);
    this.journal.recordMined(entry.id, hash);
    this.onMinedIn?.(entry.id, minedIn);
  }

  #taken(entry: JournalEntry): ResendOutcome {
    this.displacements.delete(entry.id);
    this.#lastRefusal.delete(entry.id);
    // Conditional on the entry being signed now, not on the copy this round read.
    this.journal.recordAccepted(entry.id);
    // Mined already (its nonce is below the count): settle it now, since an idle service may read no
    // snapshot for a while, and an entry left "accepted" would look unconfirmed to /wallet and the alerts.
    this.journal.markNonceUsedBelow(this.ledger.snapshot.minedNonceCount);
    this.ledger.trackSent(entry.nonce as number, reservationOf(entry, this.ledger.snapshot.l1DataFee));
    return "taken";
  }
}

const MAX_RESENDS_PER_ROUND = 50;

// Whether `now` (the entry as the journal holds it) is still owed as `seen` was: unsettled, at the same
// nonce, with the same attempts.
function isOwedAt(now: JournalEntry, seen: JournalEntry): boolean {
  const unsettled = now.state === "signed" || now.state === "accepted" || now.state === "nonce-used";
  return unsettled && now.nonce === seen.nonce && now.attempts.length === seen.attempts.length && now.attempts.every((attempt, index) => attempt.hash === seen.attempts[index].hash);
}

// Whether `entry` still waits for its attempt `hash` to be taken: not refused, settled or replaced since.
function isStillUnsettled(entry: JournalEntry | undefined, hash: string): boolean {
  return entry !== undefined && (entry.state === "signed" || entry.state === "accepted") && entry.attempts.at(-1)?.hash === hash;
}

/**
 * Sends again, in the background and in nonce order, every entry that no request is working on and that
 * no node is known to hold (state signed), or that a node took but has not mined for `staleAfterMs` (a
 * node can drop a transaction from its pool). A lost transaction would otherwise leave a nonce gap that
 * jams every later transfer. Entries a node still holds are only looked up, not sent; the wallet's next
 * one, held but not executable, is handed to `replaceHeld` (a new transaction at its nonce). A signed
 * entry waits while the node has no room for its nonce (MAX_IN_FLIGHT_PER_LANE of the wallet's pending).
 */
export async function resendUnanswered(
  reconciler: TransferReconciler,
  journal: TransferJournal,
  ledger: WalletLedger,
  rules: {
    isInFlight: (entryId: number) => boolean;
    hasRoomAtNode: (nonce: number) => boolean;
    staleAfterMs: number;
    replaceHeld: (entry: JournalEntry) => Promise<unknown>;
  },
  now = steadyWallClockNow(),
): Promise<ResendOutcome[]> {
  const { isInFlight, hasRoomAtNode, staleAfterMs, replaceHeld } = rules;
  const outcomes: ResendOutcome[] = [];
  let refused: SignerUnavailableError | undefined;
  const minedNonceCount = ledger.snapshot.minedNonceCount;
  for (const listed of journal.unsettled()) {
    // Lowest nonces first (a node that refuses gaps needs them in order), a bounded number per round.
    if (outcomes.length >= MAX_RESENDS_PER_ROUND) break;
    // The list was read before this round's awaits: act on the entry as it is now.
    const entry = journal.findById(listed.id);
    if (!entry || isInFlight(entry.id) || entry.nonce === null) continue;
    const stale = entry.state === "accepted" && entry.nonce >= minedNonceCount && now - entry.createdAt > staleAfterMs;
    if (entry.state !== "signed" && !stale) continue;
    if (entry.state === "signed" && !hasRoomAtNode(entry.nonce)) continue;
    let outcome: ResendOutcome;
    try {
      outcome = await reconciler.resend(entry, entry.nonce === minedNonceCount);
    } catch (error) {
      // A transfer to sign again that the signer would not sign waits for the next round; the others go out now.
      if (!(error instanceof SignerUnavailableError)) throw error;
      refused ??= error;
      continue;
    }
    outcomes.push(outcome);
    if (outcome === "held, not executable") await replaceHeld(entry);
  }
  await journal.flushed();
  if (refused) throw refused;
  return outcomes;
}
