/**
 * Follows settled transfers until they are final, from the block reads the service already makes: by the
 * node's `finalized` block where it has one, otherwise FINALITY_BLOCKS below the head. While any settled
 * transfer is not final, each block read is checked to extend the one before (its parent hash, or one read
 * of the block at the earlier height when reads skipped blocks; then what was settled since that block was
 * read is looked for again), so a reorganisation is seen at the next read, idle or not. Then every
 * transfer not final is checked against the new chain: one the chain no longer carries is pending again
 * (followed and sent again like any other), and the rest count their finality afresh. With nothing to
 * follow it costs nothing beyond the block reads.
 */
import { toQuantity } from "ethers";
import type { JournalEntry, TransferJournal } from "../journal/transfer-journal.js";
import { type FinalityRule, FinalizedBlockReader } from "../node/finalized-block.js";
import { ReceiptsOnChain } from "../node/receipt-on-chain.js";
import { NonceSearches, findNonceUse } from "../node/wallet-nonce-use.js";
import type { LoggedTransfer, WalletTransferLogs } from "../node/wallet-transfer-logs.js";
import type { MinedIn } from "../send-path/transfer-reconciler.js";
import { type FeeBlock, sameChain } from "../send-path/wallet-snapshot.js";

/** The node calls the tracker makes. */
export interface FinalityNode {
  send(method: string, params: unknown[]): Promise<unknown>;
}

export interface FinalityTrackerOptions {
  node: FinalityNode;
  journal: TransferJournal;
  /** How deep a block must be to count as final where the node has no `finalized` block. */
  finalityBlocks: number;
  /** The chain's id: how its finality is known (finalized-block.ts); a chain not given is one its table does not name. */
  chainId?: bigint;
  /** The wallet's searches for what used a nonce, shared with the lane's reconciler (resumed from read to read). */
  nonceSearches?: NonceSearches;
  /** Told once when the node said it knows no `finalized` tag (see FinalizedBlockReader). */
  onNoFinalizedTag?: (rule: FinalityRule) => void;
  /** A reorganisation was seen: read the wallet afresh now (its mined nonce count may have gone back). */
  onReorg: (at: FeeBlock) => Promise<void>;
  /**
   * Nothing settled was followed, and the chain moved on in a way not known to extend the block before (a
   * reorganisation, or reads that skipped blocks): whatever remembers blocks (the wallet's transfer logs)
   * must forget them, or a transfer settled later could be settled from a block no longer on the chain,
   * which no later check would catch. Costs no node call.
   */
  onUnfollowedJump?: () => void;
  /**
   * The wallet's Transfer logs (shared with the rest of the lane): where several transfers settled since a
   * checked block are looked for again, one log read over the blocks they can be in, made afresh (without
   * emptying what the lane keeps), finds
   * those it shows (with the block each is in, as a receipt would); only the rest cost a receipt each.
   * Without it, receipts.
   */
  transferLogs?: Pick<WalletTransferLogs, "readAfresh">;
  /** Told what a round did, for the log. */
  onOutcome?: (outcome: { reorganised: boolean; unmined: number; finalized: number; finalizedBlock: number | null }) => void;
}

interface RpcBlock {
  number: string;
  hash: string;
}

/**
 * Reads that skipped blocks are checked against the chain (one block read) at most this often; adjacent
 * reads cost nothing to check. A reorganisation is thus seen within this time of the next read.
 */
const CONTINUITY_CHECK_MS = 4_000;

export class FinalityTracker {
  readonly #options: FinalityTrackerOptions;
  // The last block read that is known to be on the chain: every block below it is, too.
  #anchor: FeeBlock | undefined;
  #checkedAt = -Infinity;
  readonly #finalized: FinalizedBlockReader;
  readonly #nonceSearches: NonceSearches;
  #finalizedAtHead = -1;
  // How far the finalized block is below the head (FINALITY_BLOCKS until the node's was read): until a
  // transfer is that deep, the finalized block cannot have reached it, and is not read.
  #finalityLag: number;
  // Transfers whose receipt was missing at a look, and whose nonce the chain's blocks did not settle either
  // (backends that disagree): looked at again at every read until they are, and nothing is final meanwhile.
  readonly #undecided = new Set<number>();
  // The transfers looked for in the current round.
  readonly #lookedAt = new Set<number>();
  // The block each transfer settled since the last read was seen mined in, by entry id (a receipt or a log
  // is often newer than the last block read): the next read at or just above that height shows whether the
  // block is still on the chain.
  readonly #minedIn = new Map<number, MinedIn>();

  constructor(options: FinalityTrackerOptions) {
    this.#options = options;
    this.#finalityLag = options.finalityBlocks;
    this.#finalized = new FinalizedBlockReader(options.node, options.finalityBlocks, options.chainId, options.onNoFinalizedTag);
    this.#nonceSearches = options.nonceSearches ?? new NonceSearches();
  }

  /** A transfer was settled from `block`: the next block reads check that block is still on the chain. */
  expectMinedIn(entryId: number, block: MinedIn): void {
    this.#minedIn.set(entryId, block);
  }

  /** One block read: checks it extends the chain seen before, then moves finality. Call one at a time. */
  async follow(block: FeeBlock): Promise<void> {
    const { journal } = this.#options;
    this.#lookedAt.clear();
    const anchor = this.#anchor;
    // A lower block is a lagging backend more often than not; the next read settles it.
    if (anchor && block.number < anchor.number) return;
    if (!anchor) {
      this.#options.onUnfollowedJump?.();
      this.#minedIn.clear();
      // What the chain did before this process followed it is not known (a reorganisation while the service
      // was down): what is settled and not final is looked for on the chain as it is now.
      const unmined = journal.hasUnfinal() ? await this.#lookForUnfinal(block) : 0;
      // Only now: a look that failed part way (a node fault) is made again at the next read.
      this.#anchor = block;
      if (unmined > 0) this.#options.onOutcome?.({ reorganised: true, unmined, finalized: 0, finalizedBlock: null });
      return;
    }
    if (!journal.hasUnfinal()) {
      if (sameChain(anchor, block) !== true) this.#options.onUnfollowedJump?.();
      this.#anchor = block;
      this.#minedIn.clear();
      return;
    }
    const adjacent = sameChain(anchor, block) !== undefined;
    const extended = await this.#extends(anchor, block);
    // Not checked yet (reads skipped blocks, checked a moment ago): the anchor stays, and is checked later.
    if (extended === undefined) return;
    let unmined = 0;
    const reorganised = !extended;
    // What this read decides of the blocks transfers were seen mined in (after a reorganisation, every one:
    // each transfer is looked for again), forgotten once decided.
    const decided = reorganised ? new Map(this.#minedIn) : this.#minedThrough(block.number);
    if (reorganised) {
      unmined = await this.#recheck(block);
    } else {
      // A block this read shows at a settled transfer's height, other than the one it was seen mined in:
      // that block left the chain (a reorganisation of blocks no read saw). Remembered logs go; its
      // receipts decide.
      const gone = this.#leftTheChain(anchor, block, decided);
      if (gone.size > 0) {
        this.#options.onUnfollowedJump?.();
        unmined = await this.#lookForUnfinal(block, (entry) => gone.has(entry.id));
      }
    }
    // Reads that skipped blocks prove the anchor is still on the chain, not the blocks above it: a
    // reorganisation there replaced blocks no read saw. What was settled since the anchor was read (from a
    // receipt or a remembered log, at the anchor's height or above) is looked for again, with what was left
    // undecided before, and remembered logs are forgotten.
    if (!reorganised && !adjacent) {
      this.#options.onUnfollowedJump?.();
      const settledSinceAnchor = (entry: JournalEntry) => entry.settledBlock === null || entry.settledBlock >= anchor.number;
      unmined += await this.#lookForUnfinal(block, (entry) => settledSinceAnchor(entry) || this.#undecided.has(entry.id), { logsUpTo: block.number });
    }
    // What no look could settle yet is looked at again at each read until it is, and nothing becomes final
    // meanwhile: it could be a transfer another transaction displaced in a reorganisation.
    if (this.#undecided.size > 0) {
      const unfinal = new Set(journal.unfinal().map((entry) => entry.id));
      for (const id of this.#undecided) if (!unfinal.has(id)) this.#undecided.delete(id);
      const again = new Set([...this.#undecided].filter((id) => !this.#lookedAt.has(id)));
      if (again.size > 0) unmined += await this.#lookForUnfinal(block, (entry) => again.has(entry.id));
    }
    // Only once the looks above are made: where one failed (a node fault), the next read checks the same
    // anchor again, and looks again for what was settled since it or seen mined in a block it decides.
    this.#anchor = block;
    for (const [entryId, minedIn] of decided) if (this.#minedIn.get(entryId) === minedIn) this.#minedIn.delete(entryId);
    let finalized = 0;
    let finalizedBlock: number | null = null;
    const lowest = journal.lowestUnfinalSettledBlock();
    if (this.#undecided.size === 0 && block.number > this.#finalizedAtHead && lowest !== undefined && lowest <= block.number - this.#finalityLag) {
      finalizedBlock = await this.#finalized.number(block.number);
      this.#finalizedAtHead = block.number;
      if (finalizedBlock !== null) {
        this.#finalityLag = Math.max(0, block.number - finalizedBlock);
        finalized = journal.finalizeThrough(finalizedBlock);
      }
    }
    if (reorganised || unmined > 0 || finalized > 0) this.#options.onOutcome?.({ reorganised: reorganised || unmined > 0, unmined, finalized, finalizedBlock });
  }

  // The blocks transfers were seen mined in at or below `height`, by entry id: a read at that height
  // decides them (a height no read shows is left to the check of skipped reads).
  #minedThrough(height: number): Map<number, MinedIn> {
    return new Map([...this.#minedIn].filter(([, minedIn]) => minedIn.number <= height));
  }

  // Of `decided`, the transfers whose block is not the one this read (or its parent, or the anchor) shows
  // at that height.
  #leftTheChain(anchor: FeeBlock, block: FeeBlock, decided: ReadonlyMap<number, MinedIn>): Set<number> {
    const gone = new Set<number>();
    for (const [entryId, minedIn] of decided) {
      const shown = minedIn.number === block.number ? block.hash : minedIn.number === block.number - 1 ? block.parentHash : minedIn.number === anchor.number ? anchor.hash : undefined;
      if (shown !== undefined && shown !== minedIn.hash) gone.add(entryId);
    }
    return gone;
  }

  // Whether `next` is on the chain `anchor` was on; undefined when that is left for a later read.
  async #extends(anchor: FeeBlock, next: FeeBlock): Promise<boolean | undefined> {
    const told = sameChain(anchor, next);
    if (told !== undefined) return told;
    if (performance.now() - this.#checkedAt < CONTINUITY_CHECK_MS) return undefined;
    this.#checkedAt = performance.now();
    const then = (await this.#options.node.send("eth_getBlockByNumber", [toQuantity(anchor.number), false])) as RpcBlock | null;
    return then?.hash === anchor.hash;
  }

  // After a reorganisation: the wallet is read afresh (transfers whose nonce is unused again become pending),
  // then each transfer not final is looked for on the new chain by its receipts.
  async #recheck(head: FeeBlock): Promise<number> {
    await this.#options.onReorg(head);
    const unmined = await this.#lookForUnfinal(head);
    // What is still settled was mined on the new chain: its finality is counted from here.
    this.#options.journal.markSettledAt(head.number, true);
    return unmined;
  }

  // Each transfer not final (that `which` picks) is looked for by its receipts, as of block `head`: one the
  // chain does not carry (or carries in another block than its reported outcome named) is pending again.
  // A receipt counts only where its block is the chain's at that height (receipt-on-chain.ts). A missing receipt or log proves nothing (an index that lags its head): then the chain's blocks, read by
  // number, say what used its nonce; where they do not tell yet, it stays as it is and is looked at again
  // at the next read (#undecided). With `logsUpTo`, several are first looked for in the
  // wallet's Transfer logs up to that block. Returns how many are pending again.
  async #lookForUnfinal(head: FeeBlock, which: (entry: JournalEntry) => boolean = () => true, { logsUpTo }: { logsUpTo?: number } = {}): Promise<number> {
    const { journal, node } = this.#options;
    let unmined = 0;
    const undecided = new Set<number>();
    // A transfer another transaction replaced has no receipt of its own: its nonce count decides (above).
    const entries = journal.unfinal().filter((entry) => entry.state !== "replaced" && which(entry));
    for (const entry of entries) this.#lookedAt.add(entry.id);
    const logged = logsUpTo === undefined ? undefined : await this.#readTransferLogs(entries, logsUpTo);
    const receipts = new ReceiptsOnChain(node, [head, { number: head.number - 1, hash: head.parentHash }]);
    for (const entry of entries) {
      const candidates = entry.minedHash ? [entry.minedHash] : entry.attempts.map((attempt) => attempt.hash);
      let minedIn: string | null | undefined = candidates.map((hash) => logged?.get(hash.toLowerCase())?.blockHash).find((blockHash) => blockHash !== undefined);
      for (const hash of candidates) minedIn ??= (await receipts.minedIn(hash))?.hash;
      minedIn ??= await this.#chainShows(entry, candidates, head.number);
      if (minedIn === undefined) {
        undecided.add(entry.id);
        continue;
      }
      // Gone, or moved to another block than the one its reported outcome named: pending again, so that
      // the undone outcome is reported (transfer.reorged) and the new one follows.
      const moved = minedIn !== null && entry.reportedBlockHash !== null && minedIn !== entry.reportedBlockHash;
      if ((minedIn === null || moved) && journal.markUnmined(entry.id)) unmined++;
    }
    for (const entry of entries) if (!undecided.has(entry.id)) this.#undecided.delete(entry.id);
    for (const id of undecided) this.#undecided.add(id);
    return unmined;
  }

  // What the chain's blocks show at the entry's nonce as of `head`: the hash of the block one of
  // `candidates` is mined in; null when the nonce is unused there or another transaction used it; undefined
  // when the node's answers do not settle it.
  async #chainShows(entry: JournalEntry, candidates: readonly string[], head: number): Promise<string | null | undefined> {
    if (entry.nonce === null) return undefined;
    const below = Math.min(...entry.attempts.map((attempt) => attempt.signedAtBlock));
    const use = await findNonceUse(this.#options.node, this.#options.journal.lane, entry.nonce, head, below, this.#nonceSearches).catch(() => undefined);
    if (use === undefined || use.kind === "unfindable") return undefined;
    // Unused at a block below the head it was seen settled at is a backend behind the others, no fact.
    if (use.kind === "unused") return entry.settledBlock !== null && head < entry.settledBlock ? undefined : null;
    return candidates.some((hash) => hash.toLowerCase() === use.by) ? use.block.hash : null;
  }

  // The wallet's Transfer logs from the block the earliest of `entries` was signed at to `to`, read afresh
  // (logs read earlier may be of blocks that left the chain since), beside the logs the lane keeps: a read
  // that emptied them undid the lane's own read under way. One node call a window of blocks, worth
  // it when it spares two receipts or more. A transfer the logs do not show (reverted, mined outside the
  // windows read, a backend that lags) is looked up by its receipts.
  async #readTransferLogs(entries: readonly JournalEntry[], to: number): Promise<ReadonlyMap<string, LoggedTransfer> | undefined> {
    const { transferLogs } = this.#options;
    if (!transferLogs || entries.length < 2) return undefined;
    let from = to;
    for (const entry of entries) for (const attempt of entry.attempts) from = Math.min(from, attempt.signedAtBlock);
    return transferLogs.readAfresh(from, to, entries.length);
  }
}

