/**
 * Replaces transfers at their own nonce: a re-priced copy when the fee market moved past a transfer that
 * has waited STUCK_AFTER_BLOCKS, and a cancel (0 value to the wallet itself) when a client asks. Every
 * replacement is an attempt of the transfer, journaled and flushed before it is broadcast, so the journal
 * knows every hash that could be mined for it. A transfer is never sent under another nonce here: while
 * any of its attempts could be mined, that would pay twice.
 */
import { Transaction, toBigInt, toQuantity } from "ethers";
import { monotonicNow, steadyWallClockNow } from "../clock.js";
import type { AttemptKind, JournalAttempt, JournalEntry, TransferJournal } from "../journal/transfer-journal.js";
import type { ChainConnection } from "../node/connect-chain.js";
import { estimateGasAtLatest } from "../node/gas-estimate.js";
import { type NodeAnswerMeaning, readNodeAnswer } from "../node/node-answers.js";
import type { FeePolicy } from "./fee-policy.js";
import { withPayoutGasMargin } from "./payout-call.js";
import { NEXT_NONCE_REPLACEMENTS_AT_MOST, type NextNonceReason, attemptsAtNonce, repricingMayHelp } from "./replacement-bounds.js";
import { FEE_CEILING_MULTIPLE, type FeeMarket, type Repricing, belowBaseFee, capsUnderCeiling, firstFeesOf, isUnderpriced, replacementFees } from "./replacement-fees.js";
import type { WalletLedger } from "./wallet-ledger.js";
import {
  type AttemptFees,
  type WalletCall,
  feesOf,
  maxPricePerGas,
  reservationOf,
  sameCallAt,
  signWalletTransaction,
  snapshotFees,
  withGasLimitMultiplier,
} from "./wallet-transaction.js";

/** taken: a node holds the replacement. waiting: it did not (yet); the meaning of the node's answer says why. */
export type ReplacementOutcome = "taken" | `waiting: ${NodeAnswerMeaning}`;

/** A transfer that waits underpriced while the caps allow no higher fees. */
export interface StuckAtCap {
  /** The transfer's first hash (what its client holds) and its latest attempt's. */
  hash: string;
  carriedBy: string;
  nonce: number;
  offered: AttemptFees;
  /** What the chain needs now, before the caps. */
  needed: AttemptFees;
}

/**
 * Why a transaction was replaced: the market passed its fees; a node refused it at the wallet's next nonce
 * in words fees may answer; a node holds it at the wallet's next nonce, fairly priced, and the chain still
 * has not mined it (see TransferReplacerOptions.repriceUnminedAfterMs); a node holds it without counting it as
 * pending; a client or an operator asked.
 */
export type ReplacementReason = "underpriced" | "refused-at-next-nonce" | "unmined-at-next-nonce" | "not-executable" | "requested";

/** A replacement that was broadcast, for the log. */
export interface Replacement {
  entryId: number;
  nonce: number;
  kind: AttemptKind;
  reason: ReplacementReason;
  hash: string;
  replaces: string;
  fees: AttemptFees;
  outcome: ReplacementOutcome;
}

type SignedReplacement = Omit<Replacement, "outcome"> & { rawTransaction: string };

/** Why a transfer cannot be cancelled. */
export type CancelRefusal = "already-mined" | "not-pending" | "at-fee-cap" | "being-sent" | "too-many-reprices";

/** How a re-pricing may go: past the ceiling (an admin's explicit say), and at most how many attempts the transfer may have before it (a sender's key). */
export interface RepriceLimits {
  aboveCeiling?: boolean;
  attemptsAtMost?: number;
}

export class CancelRefusedError extends Error {
  override name = "CancelRefusedError";

  constructor(
    readonly reason: CancelRefusal,
    message: string,
  ) {
    super(message);
  }
}

export interface TransferReplacerOptions {
  chain: ChainConnection;
  journal: TransferJournal;
  ledger: WalletLedger;
  policy: FeePolicy;
  /** How many blocks an attempt waits unmined before it may be re-priced. */
  stuckAfterBlocks: number;
  /**
   * REPRICE_UNMINED_AFTER_MS: how long, besides stuckAfterBlocks blocks, the wallet's next nonce may stay
   * unmined at a fair price, whatever the nodes say of its transaction, before that transaction is re-priced
   * anyway (and again after as long for each replacement, within NEXT_NONCE_REPLACEMENTS_AT_MOST).
   */
  repriceUnminedAfterMs: number;
  /**
   * Told once when the wallet's next transaction is still unmined, and the rules that raise its fees whatever
   * the market says (a node refuses it, holds it without passing it on, or holds it without counting it) may
   * raise them no more.
   */
  onNextNonceAtBound: (stuck: { hash: string; carriedBy: string; nonce: number; replacements: number; reason: NextNonceReason }) => void;
  gasLimitMultiplier: string;
  /** How long a transfer replaced for being held but not executable waits before it may be again. */
  notExecutableRetryMs: number;
  /** True while a request is still working on the entry's first broadcast. */
  isInFlight: (entryId: number) => boolean;
  /** What the node said to the entry's last re-send while it keeps refusing it (the reconciler's memory). */
  lastRefusalOf: (entryId: number) => NodeAnswerMeaning | undefined;
  /** Told once when a transfer reaches its cap (and again if it leaves it and comes back). */
  onAtCap: (stuck: StuckAtCap) => void;
  onReplaced: (replacement: Replacement) => void;
  /** Told in the same turn as a replacement is journaled, so that what it writes commits with it. */
  onAttemptJournaled?: (entry: JournalEntry, hash: string, kind: AttemptKind) => void;
  /** Awaited between journaling a replacement and broadcasting it; resolves at once outside tests. */
  reachFaultPoint?: () => Promise<void>;
}

/** The gas of a plain ETH transfer, which a cancel is. */
const CANCEL_GAS_LIMIT = 21_000n;

export class TransferReplacer {
  readonly #options: TransferReplacerOptions;
  #atCap = new Map<number, StuckAtCap>();
  // Entry id -> when (monotonic ms) it was last replaced for being held but not executable.
  readonly #replacedNotExecutableAt = new Map<number, number>();
  // One replacement per transfer at a time: a cancel and a re-pricing round must not sign side by side.
  readonly #working = new Map<number, Promise<unknown>>();
  // The wallet's next nonce as the rounds last saw it, and the block and moment (monotonic ms) it became so.
  #nextNonce: { nonce: number; sinceBlock: number; since: number } | undefined;
  // The entry last told to onNextNonceAtBound: once each (only the wallet's next transaction can be).
  #toldAtBound: number | undefined;

  constructor(options: TransferReplacerOptions) {
    this.#options = options;
  }

  /** Transfers that wait underpriced at the fee caps, as of the last round. */
  get stuckAtCap(): StuckAtCap[] {
    return [...this.#atCap.values()];
  }

  /**
   * One round: every transfer whose latest attempt has waited STUCK_AFTER_BLOCKS and is underpriced for the
   * fee market of the latest snapshot is replaced, and so is the wallet's next transaction when nodes will
   * not take it or the chain will not mine it (see #reasonToReplace). All replacements are journaled with
   * one flush, then broadcast lowest nonce first (nothing after a nonce can be mined before it). Costs no
   * node call but the broadcasts: the market comes with the snapshot.
   */
  async repriceStuck(): Promise<Replacement[]> {
    const { journal, ledger, policy, stuckAfterBlocks, isInFlight, onAtCap } = this.#options;
    const { blockNumber, minedNonceCount, baseFeePerGas, tip } = ledger.snapshot;
    const market = { baseFeePerGas, tip };
    const nextNonceWaited = this.#nextNonceWaited(minedNonceCount, blockNumber);
    const atCap = new Map<number, StuckAtCap>();
    const due: { entry: JournalEntry; latest: JournalAttempt; fees: AttemptFees; reason: ReplacementReason }[] = [];
    for (const entry of journal.unsettled()) {
      const latest = entry.attempts.at(-1);
      if (!latest || entry.nonce === null || entry.nonce < minedNonceCount || isInFlight(entry.id) || this.#working.has(entry.id)) continue;
      if (blockNumber - latest.signedAtBlock < stuckAfterBlocks) continue;
      const offered = feesOf(Transaction.from(latest.rawTransaction));
      let reason = this.#reasonToReplace(entry, latest, offered, market, entry.nonce === minedNonceCount && nextNonceWaited);
      if (reason === undefined) continue;
      if ((reason === "unmined-at-next-nonce" || reason === "refused-at-next-nonce") && this.#atBound(entry, latest, reason)) {
        // Past the bound, only the market may still ask for more.
        reason = marketReason(entry, offered, market);
        if (reason === undefined) continue;
      }
      const repricing = replacementFees(offered, market, capsUnderCeiling(firstFeesOf(entry), policy));
      if (repricing.outcome === "at-cap") {
        const stuck = { hash: entry.hash as string, carriedBy: latest.hash, nonce: entry.nonce, offered, needed: repricing.needed };
        if (!this.#atCap.has(entry.id)) onAtCap(stuck);
        atCap.set(entry.id, stuck);
        continue;
      }
      due.push({ entry, latest, fees: repricing.fees, reason });
    }
    this.#atCap = atCap;
    if (due.length === 0) return [];
    const round = (async () => {
      const signed: SignedReplacement[] = [];
      for (const { entry, latest, fees, reason } of due) signed.push(await this.#journalReplacement(entry, latest, latest.kind, fees, reason));
      // Nothing leaves the process before its record is on disk.
      await journal.flushed();
      await this.#options.reachFaultPoint?.();
      const replacements: Replacement[] = [];
      for (const replacement of signed) replacements.push(await this.#broadcast(replacement));
      return replacements;
    })();
    for (const { entry } of due) this.#working.set(entry.id, round);
    try {
      return await round;
    } finally {
      for (const { entry } of due) this.#working.delete(entry.id);
    }
  }

  /**
   * Why a transfer whose latest attempt has waited STUCK_AFTER_BLOCKS is to be replaced, if it is.
   * - The wallet's next transaction, which no node took for all these blocks: every transfer waits behind
   *   it, so it is re-priced whatever the market says, unless the node's words rule out that fees help.
   * - Underpriced for the market; when no node is known to hold it, only if no node would take its bytes at
   *   all with this base fee (otherwise the same bytes go out again first: the reconciler).
   * - The wallet's next transaction (its lowest unmined nonce), not refused at its last re-send, while the
   *   wallet's next nonce and this attempt have waited `repriceUnminedAfterMs` (`atNextNonceAndWaited`):
   *   whatever any node says of it (a backend of a fleet that holds it and never passes it on answers
   *   "already known" to every re-send, and the pending count, from another backend, proves nothing either
   *   way), or block builders that will not take it. A new transaction at the nonce is passed on and judged
   *   afresh, as Chainlink's and OpenZeppelin's relayers bump a transaction that waits too long whatever the
   *   market; at its own nonce it can never pay twice. Bounded apart from the fee caps (unset by default):
   *   see NEXT_NONCE_REPLACEMENTS_AT_MOST, which bounds the first too.
   */
  #reasonToReplace(entry: JournalEntry, latest: JournalAttempt, offered: AttemptFees, market: FeeMarket, atNextNonceAndWaited: boolean): ReplacementReason | undefined {
    const refusal = this.#options.lastRefusalOf(entry.id);
    const atNextNonce = entry.nonce === this.#options.ledger.snapshot.minedNonceCount;
    if (entry.state === "signed" && atNextNonce && repricingMayHelp(refusal)) return "refused-at-next-nonce";
    if (isUnderpriced(offered, market)) return marketReason(entry, offered, market);
    const latestWaited = steadyWallClockNow() - latest.createdAt >= this.#options.repriceUnminedAfterMs;
    return atNextNonceAndWaited && refusal === undefined && latestWaited ? "unmined-at-next-nonce" : undefined;
  }

  // Whether the entry has had NEXT_NONCE_REPLACEMENTS_AT_MOST replacements at its nonce; the first time, told.
  #atBound(entry: JournalEntry, latest: JournalAttempt, reason: NextNonceReason): boolean {
    const attempts = attemptsAtNonce(entry);
    if (attempts <= NEXT_NONCE_REPLACEMENTS_AT_MOST) return false;
    if (this.#toldAtBound !== entry.id) this.#options.onNextNonceAtBound({ hash: entry.hash as string, carriedBy: latest.hash, nonce: entry.nonce as number, replacements: attempts - 1, reason });
    this.#toldAtBound = entry.id;
    return true;
  }

  // Whether the wallet's next nonce has stayed the same for stuckAfterBlocks blocks and repriceUnminedAfterMs:
  // the transfer just behind a nonce that was mined is not re-priced before it had its chance.
  #nextNonceWaited(minedNonceCount: number, blockNumber: number): boolean {
    if (this.#nextNonce?.nonce !== minedNonceCount) this.#nextNonce = { nonce: minedNonceCount, sinceBlock: blockNumber, since: monotonicNow() };
    const { sinceBlock, since } = this.#nextNonce;
    return blockNumber - sinceBlock >= this.#options.stuckAfterBlocks && monotonicNow() - since >= this.#options.repriceUnminedAfterMs;
  }

  /**
   * Replaces the wallet's next transaction, which the node holds without counting it as pending (so it
   * will not be mined as it is, and its same bytes change nothing), with a copy priced like any
   * re-pricing: a new transaction at the nonce is judged afresh by the node. At most once per
   * `notExecutableRetryMs` for a transfer, and within NEXT_NONCE_REPLACEMENTS_AT_MOST: a node that keeps doing
   * it cannot walk the fees up.
   */
  async replaceNotExecutable(hash: string): Promise<Replacement | "at-cap" | "not due"> {
    const { journal, ledger, notExecutableRetryMs } = this.#options;
    const found = journal.findByHash(hash);
    if (!found) return "not due";
    const lastTime = this.#replacedNotExecutableAt.get(found.id);
    if (lastTime !== undefined && monotonicNow() - lastTime < notExecutableRetryMs) return "not due";
    return this.#exclusively(found.id, async () => {
      // Read again: a re-pricing or a cancel may have replaced it, or it was mined, meanwhile.
      const entry = journal.findByHash(hash) as JournalEntry;
      const latest = entry.attempts.at(-1);
      if (!latest || (entry.state !== "signed" && entry.state !== "accepted") || (entry.nonce as number) < ledger.snapshot.minedNonceCount) return "not due";
      // A node (or a fleet whose count lags) that keeps doing it would otherwise raise the fees for good.
      if (this.#atBound(entry, latest, "not-executable")) return "not due";
      this.#replacedNotExecutableAt.set(entry.id, monotonicNow());
      const repricing = this.#repricingOf(entry, latest);
      if (repricing.outcome === "at-cap") return "at-cap";
      return this.#replace(entry, latest, latest.kind, repricing.fees, "not-executable");
    });
  }

  /**
   * Replaces the transfer that has `hash` among its attempts with a cancel priced to win (at least 12.5%
   * above its latest attempt, and what the chain needs now). Resolves with the entry once its cancel is
   * journaled and broadcast, or at once when a cancel was requested before (a repeat changes nothing).
   * Throws CancelRefusedError when its nonce is used already, it was never sent, or the caps allow no
   * winning price.
   */
  cancel(hash: string): Promise<JournalEntry> {
    return this.#replaceOnRequest(hash, "cancel");
  }

  /**
   * An operator's re-pricing, without waiting for STUCK_AFTER_BLOCKS: the latest attempt again (the same
   * call), priced as the background would price it; `limits.aboveCeiling` (an admin's explicit say) lifts
   * the ceiling (FEE_CEILING_MULTIPLE), not the caps. Refused as a cancel is, and past `limits.attemptsAtMost`.
   */
  reprice(hash: string, limits: RepriceLimits = {}): Promise<JournalEntry> {
    return this.#replaceOnRequest(hash, "reprice", limits);
  }

  async #replaceOnRequest(hash: string, request: "cancel" | "reprice", { aboveCeiling = false, attemptsAtMost }: RepriceLimits = {}): Promise<JournalEntry> {
    const { journal, ledger } = this.#options;
    const found = journal.findByHash(hash);
    if (!found) {
      // Settled for good before this leader took over: the shared database holds it, nothing is to replace.
      const settled = await journal.lookUpByHash(hash);
      if (!settled) throw new Error(`no journal entry has an attempt ${hash}`);
      throw refusalOfSettled(settled, ledger.snapshot.minedNonceCount, request) ?? new Error(`transfer ${hash} is not held by the journal and not settled`);
    }
    // Signed here only for this lane's own transfers on this chain: another network's nonce is another sequence.
    const { chain } = this.#options;
    if (BigInt(found.chainId) !== chain.chainId || found.lane !== chain.wallet.address) {
      throw new Error(`transfer ${hash} was sent by ${found.lane} on chain ${found.chainId}, not by this lane (${chain.wallet.address} on chain ${chain.chainId})`);
    }
    const what = request === "cancel" ? "a cancel" : "a re-pricing";
    return this.#exclusively(found.id, async () => {
      const entry = journal.findByHash(hash) as JournalEntry;
      if (request === "cancel" && entry.attempts.some((attempt) => attempt.kind === "cancel")) return entry;
      // Counted here, one request at a time: concurrent asks cannot each find room under the limit.
      if (attemptsAtMost !== undefined && entry.attempts.length >= attemptsAtMost) {
        throw new CancelRefusedError("too-many-reprices", `transfer ${entry.hash} has ${entry.attempts.length} attempts already: only an admin key may re-price it further`);
      }
      // Its first broadcast's answer is not in: a sure refusal would record it refused (the client told 417)
      // and give its nonce back, and a replacement sent meanwhile at that nonce could still pay it.
      if (this.#options.isInFlight(entry.id)) {
        throw new CancelRefusedError("being-sent", `transfer ${entry.hash} is being sent right now; ask again in a moment`);
      }
      const latest = entry.attempts.at(-1);
      const settled = refusalOfSettled(entry, ledger.snapshot.minedNonceCount, request);
      if (settled) throw settled;
      if (!latest) throw new CancelRefusedError("not-pending", `transfer ${entry.hash} is ${entry.state}: there is nothing to replace`);
      const repricing = this.#repricingOf(entry, latest, aboveCeiling);
      if (repricing.outcome === "at-cap") {
        const limits = aboveCeiling ? "MAX_FEE_PER_GAS or MAX_PRIORITY_FEE_PER_GAS" : `MAX_FEE_PER_GAS, MAX_PRIORITY_FEE_PER_GAS or ${FEE_CEILING_MULTIPLE} times its first attempt's fee cap`;
        throw new CancelRefusedError("at-fee-cap", `${what} of transfer ${entry.hash} would need fees above ${limits} to replace it`);
      }
      const { outcome } = await this.#replace(entry, latest, request === "cancel" ? "cancel" : latest.kind, repricing.fees, "requested");
      if (outcome === "waiting: nonce-too-low") {
        throw new CancelRefusedError("already-mined", `transfer ${entry.hash} was mined before ${what} reached the node`);
      }
      return journal.findByHash(hash) as JournalEntry;
    });
  }

  /**
   * Fills a nonce that was given back (its transfer surely refused) while later transactions of the wallet
   * wait behind it and no transfer came to take it: a 0-value transaction to the wallet itself at the
   * current fees, journaled as a transfer of 0 units before it is broadcast.
   */
  async fillNonceGap(nonce: number, outbid?: AttemptFees): Promise<ReplacementOutcome> {
    const { chain, journal, ledger, policy } = this.#options;
    const { blockNumber, l1DataFee, baseFeePerGas, tip } = ledger.snapshot;
    const call = await this.#selfTransaction(nonce);
    // Above an earlier attempt of ours at this nonce, which some pool may still hold (at the caps at most).
    const repricing = outbid && replacementFees(outbid, { baseFeePerGas, tip }, capsUnderCeiling(outbid, policy));
    const fees = repricing?.outcome === "raised" ? repricing.fees : snapshotFees(ledger.snapshot);
    const signed = await signWalletTransaction(chain, call, fees);
    const entryId = journal.recordSigned(undefined, { recipient: chain.wallet.address, units: 0n }, {
      nonce,
      hash: signed.hash,
      rawTransaction: signed.rawTransaction,
      signedAtBlock: blockNumber,
      kind: "cancel",
    });
    await journal.flushed();
    const outcome = await this.#send(signed.rawTransaction);
    if (outcome === "taken") journal.recordAccepted(entryId);
    // Held like any transfer until mined; re-sent and re-priced by the same background work.
    ledger.trackSent(nonce, { units: 0n, gasCost: call.gasLimit * maxPricePerGas(fees) + l1DataFee });
    return outcome;
  }

  // What replacing `latest` takes in the market of the latest snapshot, within the caps and, unless an admin
  // said otherwise, the ceiling.
  #repricingOf(entry: JournalEntry, latest: JournalAttempt, aboveCeiling = false): Repricing {
    const { ledger, policy } = this.#options;
    const { baseFeePerGas, tip } = ledger.snapshot;
    return replacementFees(feesOf(Transaction.from(latest.rawTransaction)), { baseFeePerGas, tip }, aboveCeiling ? policy : capsUnderCeiling(firstFeesOf(entry), policy));
  }

  async #exclusively<T>(entryId: number, work: () => Promise<T>): Promise<T> {
    while (this.#working.has(entryId)) await this.#working.get(entryId)?.catch(() => undefined);
    const working = work();
    this.#working.set(entryId, working);
    try {
      return await working;
    } finally {
      this.#working.delete(entryId);
    }
  }

  // Signs the replacement and journals it (not yet flushed).
  async #journalReplacement(entry: JournalEntry, latest: JournalAttempt, kind: AttemptKind, fees: AttemptFees, reason: ReplacementReason): Promise<SignedReplacement> {
    const { chain, journal, ledger } = this.#options;
    const nonce = entry.nonce as number;
    let call: WalletCall;
    if (kind === "cancel") call = await this.#selfTransaction(nonce);
    else {
      // The same call as the transfer's first attempt (a token transfer, or a gas top-up with its value).
      const first = Transaction.from(entry.attempts[0].rawTransaction);
      // Where gas pays for L1 data too (Arbitrum), the gas a call needs moves with L1 prices: estimate again.
      // A payout batch keeps its margin over the estimate (see withPayoutGasMargin).
      const estimated = chain.gasIncludesL1 ? await this.#estimateGas(first.to as string, first.data, first.value) : undefined;
      const gasLimit = estimated === undefined ? Transaction.from(latest.rawTransaction).gasLimit : entry.payout ? withPayoutGasMargin(estimated) : estimated;
      call = sameCallAt(first, nonce, gasLimit);
    }
    const signed = await signWalletTransaction(chain, call, fees);
    journal.recordAttempt(entry.id, { hash: signed.hash, rawTransaction: signed.rawTransaction, kind, signedAtBlock: ledger.snapshot.blockNumber });
    this.#options.onAttemptJournaled?.(entry, signed.hash, kind);
    return { entryId: entry.id, nonce, kind, reason, hash: signed.hash, rawTransaction: signed.rawTransaction, replaces: latest.hash, fees };
  }

  // Signs, journals durably, broadcasts: one replacement on its own (a cancel).
  async #replace(entry: JournalEntry, latest: JournalAttempt, kind: AttemptKind, fees: AttemptFees, reason: ReplacementReason): Promise<Replacement> {
    const signed = await this.#journalReplacement(entry, latest, kind, fees, reason);
    await this.#options.journal.flushed();
    await this.#options.reachFaultPoint?.();
    return this.#broadcast(signed);
  }

  async #broadcast({ rawTransaction, ...replacement }: SignedReplacement): Promise<Replacement> {
    const { journal, ledger } = this.#options;
    const outcome = await this.#send(rawTransaction);
    if (outcome === "taken") {
      const entry = journal.findByHash(replacement.hash);
      if (entry?.state === "signed") journal.recordAccepted(entry.id);
      if (entry) ledger.trackSent(replacement.nonce, reservationOf(entry, ledger.snapshot.l1DataFee));
    }
    const done = { ...replacement, outcome };
    this.#options.onReplaced(done);
    return done;
  }

  async #send(rawTransaction: string): Promise<ReplacementOutcome> {
    try {
      await this.#options.chain.provider.send("eth_sendRawTransaction", [rawTransaction]);
      return "taken";
    } catch (error) {
      const { meaning } = readNodeAnswer(error);
      return meaning === "already-known" ? "taken" : `waiting: ${meaning}`;
    }
  }

  // A 0-value transaction from the wallet to itself (a cancel, a gap filler): a plain ETH transfer's gas,
  // estimated where gas pays for L1 data too.
  async #selfTransaction(nonce: number): Promise<WalletCall> {
    const to = this.#options.chain.wallet.address;
    return { nonce, to, data: "0x", gasLimit: this.#options.chain.gasIncludesL1 ? await this.#estimateGas(to, "0x") : CANCEL_GAS_LIMIT };
  }

  // With the value the call carries (a native transfer, a top-up): a contract may take another path without it.
  async #estimateGas(to: string, data: string, value = 0n): Promise<bigint> {
    const { chain, gasLimitMultiplier } = this.#options;
    const estimate = await estimateGasAtLatest(chain.provider, { from: chain.wallet.address, to, data, ...(value > 0n && { value: toQuantity(value) }) });
    return withGasLimitMultiplier(toBigInt(estimate), gasLimitMultiplier);
  }
}

/**
 * "underpriced" when the market has outgrown these fees, and a replacement is what helps: not for a transaction
 * no node is known to hold whose bytes a node would still take at this base fee (they go out again first).
 */
function marketReason(entry: JournalEntry, offered: AttemptFees, market: FeeMarket): "underpriced" | undefined {
  if (!isUnderpriced(offered, market)) return undefined;
  return entry.state === "signed" && !belowBaseFee(offered, market) ? undefined : "underpriced";
}

/** Why a transfer that is no longer pending cannot be cancelled or re-priced; undefined while it is pending. */
function refusalOfSettled(entry: JournalEntry, minedNonceCount: number, request: "cancel" | "reprice"): CancelRefusedError | undefined {
  if (entry.state === "nonce-used" || (entry.nonce !== null && entry.nonce < minedNonceCount)) {
    return new CancelRefusedError("already-mined", `transfer ${entry.hash} is already mined; it needs no ${request === "cancel" ? "cancel" : "re-pricing"}`);
  }
  if (entry.state !== "signed" && entry.state !== "accepted") return new CancelRefusedError("not-pending", `transfer ${entry.hash} is ${entry.state}: there is nothing to replace`);
  return undefined;
}
