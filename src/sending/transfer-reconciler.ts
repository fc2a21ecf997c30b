/**
 * Brings journal entries and the chain into agreement: a transaction no node is known to hold is sent
 * again with the very bytes that were signed (never re-signed), in nonce order. A node's refusal of a
 * re-send proves nothing (another node's pool may hold the first copy), so it never frees a nonce; the
 * only proof a signed transaction is dead is another transaction mined at its nonce, checked more than once.
 */
import { monotonicNow, steadyWallClockNow } from "../clock.js";
import type { ChainConnection } from "../node/connect-chain.js";
import { type NodeAnswerMeaning, readNodeAnswer } from "../node/node-answers.js";
import type { JournalEntry, TransferJournal } from "../journal/transfer-journal.js";
import type { WalletLedger } from "./wallet-ledger.js";
import { reservationOf } from "./wallet-transaction.js";

/**
 * taken: a node has it (or mined it). replaced: another transaction was mined at its nonce, seen twice.
 * waiting: not (yet) taken; it is sent again next round. The meaning says why, for the log.
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
  | `waiting: ${NodeAnswerMeaning | "nonce used, checking again"}`;

/** What startup reconciliation did, for the log. */
export interface ReconcileSummary {
  abandonedClaims: number;
  taken: number;
  replaced: number;
  waiting: number;
}

/**
 * A transaction whose nonce the chain has used while neither it nor a receipt of it can be found is taken
 * as replaced only when that is still so this long after it was first seen, and the chain has grown by
 * REPLACED_AFTER_BLOCKS meanwhile: one lagging backend of a load-balanced endpoint answers exactly like
 * that, and an endpoint that is stuck altogether shows no new blocks.
 */
const REPLACED_AFTER_MS = 3_000;
const REPLACED_AFTER_BLOCKS = 2;
/**
 * A chain that mines only when sent something (a dev node, a quiet L2) may bring no new block at all: then
 * this long with the same facts is proof enough, or the transfer would wait for good.
 */
const REPLACED_WITHOUT_BLOCKS_AFTER_MS = 30_000;

/** The block a settled transfer was seen mined in, as its receipt or its Transfer log named it. */
export interface MinedIn {
  number: number;
  hash: string;
}

/**
 * Signs a transfer whose nonce another transaction used again at a new nonce (journaled, then broadcast).
 * Resolves with false when that cannot be done (the transfer is then reported failed).
 */
export type SignAgain = (entry: JournalEntry) => Promise<boolean>;

export class TransferReconciler {
  // Entry id -> when (monotonic ms) and at which head its nonce was first seen used without a trace of it.
  readonly #missingSince = new Map<number, { at: number; head: number }>();
  // Entry id -> what the node said to its last re-send, while it is refused.
  readonly #lastRefusal = new Map<number, NodeAnswerMeaning>();
  #signAgain: SignAgain | undefined;
  /** Told the block each transfer it settles was seen mined in: finality checks that block stays on the chain. */
  onMinedIn: ((entryId: number, block: MinedIn) => void) | undefined;

  constructor(
    private readonly chain: ChainConnection,
    private readonly journal: TransferJournal,
    private readonly ledger: WalletLedger,
  ) {}

  /** How a transfer whose nonce another transaction used is signed again; without it, it is reported failed. */
  set signAgain(signAgain: SignAgain) {
    this.#signAgain = signAgain;
  }

  /** What the node said to the entry's last re-send, while it keeps refusing it; undefined once taken. */
  lastRefusalOf(entryId: number): NodeAnswerMeaning | undefined {
    return this.#lastRefusal.get(entryId);
  }

  /**
   * Run once before serving: claims that never got signed are dropped (no answer was given, nothing was
   * sent: the client's retry runs afresh); every signed or accepted entry is found on chain or sent again.
   * A settled entry whose nonce the chain no longer counts as mined (a reorganisation while the service was
   * down) is unsettled first: it is sent again, and its nonce, which its signed bytes still hold, is never
   * handed to another transfer.
   */
  async reconcileAtStartup(): Promise<ReconcileSummary> {
    const summary: ReconcileSummary = { abandonedClaims: 0, taken: 0, replaced: 0, waiting: 0 };
    this.journal.markUnminedFrom(this.ledger.snapshot.minedNonceCount);
    for (const entry of this.journal.unsettled()) {
      if (entry.state === "claimed") {
        this.journal.releaseKey(entry.id);
        summary.abandonedClaims++;
        continue;
      }
      const outcome = await this.resend(entry);
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
    if (blocksTheWallet && heldAlready && !(await this.#countedAsPending(entry.nonce))) return "held, not executable";
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
   * several), or by another transaction (replaced, once that is still so on a later check).
   */
  async settleUsedNonce(entry: JournalEntry): Promise<ResendOutcome> {
    const { provider } = this.chain;
    // Newest first: a re-priced transfer is mostly mined with its latest attempt.
    for (const attempt of [...entry.attempts].reverse()) {
      const receipt = (await provider.send("eth_getTransactionReceipt", [attempt.hash])) as { blockNumber: string; blockHash: string } | null;
      if (!receipt) continue;
      this.recordMined(entry, attempt.hash, { number: Number(receipt.blockNumber), hash: receipt.blockHash });
      return "taken";
    }
    const head = Number(await provider.send("eth_blockNumber", []));
    const firstMissing = this.#missingSince.get(entry.id);
    if (firstMissing === undefined) {
      this.#missingSince.set(entry.id, { at: monotonicNow(), head });
      return "waiting: nonce used, checking again";
    }
    const waited = monotonicNow() - firstMissing.at;
    const grown = head >= firstMissing.head + REPLACED_AFTER_BLOCKS;
    if (waited < REPLACED_AFTER_MS || (!grown && waited < REPLACED_WITHOUT_BLOCKS_AFTER_MS)) return "waiting: nonce used, checking again";
    // The transfer is about to be paid again at another nonce: the node must return no attempt as mined (a
    // backend that lacks a receipt may still return the mined transaction). One it returns unmined is dead:
    // its nonce is used (a pool can keep such a transaction a while).
    for (const attempt of entry.attempts) {
      const found = (await provider.send("eth_getTransactionByHash", [attempt.hash])) as { blockNumber?: string | null } | null;
      if (found?.blockNumber != null) return "waiting: nonce used, checking again";
    }
    this.#missingSince.delete(entry.id);
    this.#lastRefusal.delete(entry.id);
    // Its tokens and gas are no longer held at that nonce: it went to another transaction, not back to the pool.
    this.ledger.forgetNonce(entry.nonce as number);
    // None of its attempts can ever be mined: the transfer is still owed, at a new nonce, where that can be done.
    if (this.#signAgain && (await this.#signAgain(entry))) return "signed again";
    this.journal.recordReplaced(entry.id);
    return "replaced";
  }

  /**
   * The chain mined the entry's attempt `hash` in block `minedIn` (its receipt, or its Transfer log):
   * settled and verified. Which attempt carries it matters (a mined cancel means cancelled).
   */
  recordMined(entry: JournalEntry, hash: string, minedIn: MinedIn): void {
    this.#missingSince.delete(entry.id);
    this.#lastRefusal.delete(entry.id);
    this.journal.recordMined(entry.id, hash);
    this.onMinedIn?.(entry.id, minedIn);
  }

  #taken(entry: JournalEntry): ResendOutcome {
    this.#missingSince.delete(entry.id);
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

// Whether `entry` still waits for its attempt `hash` to be taken: not refused, settled or replaced since.
function isStillUnsettled(entry: JournalEntry | undefined, hash: string): boolean {
  return entry !== undefined && (entry.state === "signed" || entry.state === "accepted") && entry.attempts.at(-1)?.hash === hash;
}

/**
 * Sends again, in the background and in nonce order, every entry that no request is working on and that
 * no node is known to hold (state signed), or that a node took but has not mined for `staleAfterMs` (a
 * node can drop a transaction from its pool). A lost transaction would otherwise leave a nonce gap that
 * jams every later transfer. Entries a node still holds are only looked up, not sent; the wallet's next
 * one, held but not executable, is handed to `replaceHeld` (a new transaction at its nonce).
 */
export async function resendUnanswered(
  reconciler: TransferReconciler,
  journal: TransferJournal,
  ledger: WalletLedger,
  isInFlight: (entryId: number) => boolean,
  staleAfterMs: number,
  replaceHeld: (entry: JournalEntry) => Promise<unknown>,
  now = steadyWallClockNow(),
): Promise<ResendOutcome[]> {
  const outcomes: ResendOutcome[] = [];
  const minedNonceCount = ledger.snapshot.minedNonceCount;
  for (const listed of journal.unsettled()) {
    // Lowest nonces first (a node that refuses gaps needs them in order), a bounded number per round.
    if (outcomes.length >= MAX_RESENDS_PER_ROUND) break;
    // The list was read before this round's awaits: act on the entry as it is now.
    const entry = journal.findById(listed.id);
    if (!entry || isInFlight(entry.id) || entry.nonce === null) continue;
    const stale = entry.state === "accepted" && entry.nonce >= minedNonceCount && now - entry.createdAt > staleAfterMs;
    if (entry.state !== "signed" && !stale) continue;
    const outcome = await reconciler.resend(entry, entry.nonce === minedNonceCount);
    outcomes.push(outcome);
    if (outcome === "held, not executable") await replaceHeld(entry);
  }
  await journal.flushed();
  return outcomes;
}
