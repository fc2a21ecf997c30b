/**
 * One lane: one wallet's sending and following, built from the configuration and the chain: it reads its
 * wallet, reconciles its unfinished transfers, and starts its snapshot poller, send path, finality,
 * webhook watcher and background resend. A wallet pool runs one per key; one wallet is one lane.
 */
import { parseUnits } from "ethers";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config.js";
import { createFinality, warnNoFinalizedTag } from "../finality/create-finality.js";
import type { JournalEntry, TransferJournal } from "../journal/transfer-journal.js";
import { type ChainConnection, tokenOfChain } from "../node/connect-chain.js";
import { hexQuantity } from "../node/call-blocks.js";
import { DEFAULT_FINALITY_BLOCKS, FinalizedBlockReader } from "../node/finalized-block.js";
import { WalletTransferLogs } from "../node/wallet-transfer-logs.js";
import { replaceNotExecutable, startBackgroundResend } from "../send-path/background-resend.js";
import { createNonceAllocator } from "../send-path/create-nonce-allocator.js";
import { createSendPath } from "../send-path/create-send-path.js";
import { unlessSignerRefuses } from "../send-path/signer-refusal.js";
import { type FeePolicy, defaultFeeCeilingWei, offeredFees } from "../send-path/fee-policy.js";
import { FeeCapWatch } from "./fee-cap-watch.js";
import { type LaneFigures, type LaneHold, admittedPerLane, laneHold } from "./lane-routing.js";
import type { NonceAllocator } from "../send-path/nonce-allocator.js";
import type { NonceDisplacements } from "../send-path/nonce-displacements.js";
import { SerialRounds } from "./serial-rounds.js";
import { SnapshotPoller } from "./snapshot-poller.js";
import { TransferReconciler } from "../send-path/transfer-reconciler.js";
import type { TransferReplacer } from "../send-path/transfer-replacer.js";
import { TokenTransferService } from "../send-path/transfer-service.js";
import type { TransferSubmitter } from "../send-path/transfer-submitter.js";
import { readLaneHolds } from "../send-path/unconfirmed-transfers.js";
import { verifyUsedNonces } from "../send-path/used-nonce-verifier.js";
import { MinedNonceWatch } from "./mined-nonce-watch.js";
import type { SharedFeeBlock } from "./shared-fee-block.js";
import { SlotQueue } from "./slot-queue.js";
import { WalletLedger } from "../send-path/wallet-ledger.js";
import { transferGasCost } from "../send-path/wallet-snapshot.js";
import { NATIVE_TOKEN } from "../network-settings/network-choice.js";
import type { PoolWalletReads } from "./pool-wallet-reads.js";
import { createTransferWatcher } from "../webhooks/create-webhooks.js";
import { GasRunway } from "./gas-runway.js";
import type { TransferWatcher } from "../webhooks/transfer-watcher.js";
import { UnexplainedNonces } from "./unexplained-nonces.js";
import { NonceSearches } from "../node/wallet-nonce-use.js";

/**
 * With nothing in flight the latest block is read this often, and nothing else: an idle service costs a
 * hosted node 0.2 calls a second (CHAIN_REFRESH_INTERVAL_MS is the pace while transfers are in flight).
 */
const IDLE_POLL_INTERVAL_MS = 5_000;

/** The parts that send and follow one wallet's transfers: a lane of the pool (the only one for one wallet). */
export interface LaneServices {
  address: string;
  transfers: TokenTransferService;
  submitter: TransferSubmitter;
  nonces: NonceAllocator;
  ledger: WalletLedger;
  /** The journal as this lane sees it. */
  journal: TransferJournal;
  replacer: TransferReplacer;
  /** Present when WEBHOOK_URL is set. */
  watcher: TransferWatcher | undefined;
  /** What routing decides from (see lane-routing), for a transfer of `token` (an address, "native"; the first token without it). */
  figures(token?: string): LaneFigures;
  /** Why the lane takes no new transfers now (see lane-routing); undefined while it takes them. */
  hold(): LaneHold | undefined;
  /** ETH the wallet's balance went down by since the service started, from one snapshot to the next: its gas. */
  gasSpentWei(): bigint;
  /** Hours its ETH lasts at the last hour's spend; null when it spent nothing in it. */
  gasRunwayHours(): number | null;
  /** Resolves once the wallet snapshot is at most `maxAgeMs` old, reading one if needed. */
  ensureSnapshot(maxAgeMs: number): Promise<void>;
  /** The same, without waking the lane's poller to the busy pace (see SnapshotPoller.ensureFreshQuietly). */
  ensureBalances(maxAgeMs: number): Promise<void>;
  /** Nonces the chain counts used whose user no block body where it could be holds (reported once each). */
  unexplainedNonces: UnexplainedNonces;
}

/** What a lane reads of the configuration. */
export type LaneConfig = Pick<
  Config,
  | "idempotencyKeyTtlHours"
  | "chainRefreshIntervalMs"
  | "rebroadcastAfterMs"
  | "testFaultPoint"
  | "feeTipPercentile"
  | "minPriorityFeePerGas"
  | "maxFeePerGas"
  | "maxPriorityFeePerGas"
  | "gasLimitMultiplier"
  | "stuckAfterBlocks"
  | "repriceUnminedAfterMs"
  | "maxInFlightPerLane"
  | "transferSlotWaitMs"
  | "finalityBlocks"
  | "webhookConfirmations"
>;

/** The fee policy the configuration describes (gwei values in wei). */
export function feePolicyOf(config: LaneConfig, chainId: bigint): FeePolicy {
  const gwei = (value: string | undefined) => (value === undefined ? undefined : parseUnits(value, "gwei"));
  return {
    tipPercentile: config.feeTipPercentile,
    minTip: parseUnits(config.minPriorityFeePerGas, "gwei"),
    // A cap that exists without configuration: the chain's default ceiling unless MAX_FEE_PER_GAS says otherwise.
    maxFeePerGas: gwei(config.maxFeePerGas) ?? defaultFeeCeilingWei(chainId),
    maxTip: gwei(config.maxPriorityFeePerGas),
  };
}

/** A lane while it runs: what the service uses, and how its background work stops. */
export interface RunningLane extends LaneServices {
  /** Called after each of the lane's rounds, once its events are journaled: the dispatcher sends them. */
  onRoundDone: () => void;
  stopBackground(): Promise<void>;
}

export interface LaneParts {
  /** One lane of several: routing needs its holds. */
  pooled: boolean;
  chain: ChainConnection;
  journal: TransferJournal;
  log: FastifyBaseLogger;
  endpoints: readonly string[];
  isSendingAnywhere: ((key: string, entry: JournalEntry) => boolean) | undefined;
  /** Transfers displaced by a transaction not final yet, every lane's: the status document shows them. */
  displacements: NonceDisplacements;
  /** New transfers waiting for room in a lane, every lane's: woken when this lane's transactions may be mined. */
  slots: SlotQueue;
  /** The latest block, one read for every lane. */
  latestBlock: SharedFeeBlock;
  /** Every lane's balances and nonce count, one request a block. */
  walletReads: PoolWalletReads;
}

/** Reads one wallet, reconciles its unfinished transfers, and starts its background work. */
export async function startLane(config: LaneConfig, parts: LaneParts): Promise<RunningLane> {
  const { pooled, chain, journal, log, endpoints, isSendingAnywhere, slots, latestBlock, walletReads } = parts;
  const reconciled = await reconcileLane(config, parts);
  const { fees, initialSnapshot, ledger, nodeRoom, hasRoomAtNode, nonceSearches, unexplainedNonces, reconciler, nonces } = reconciled;

  const transferLogs = new WalletTransferLogs(chain);
  const watcher = endpoints.length === 0 ? undefined : createTransferWatcher(config, endpoints, chain, journal, transferLogs);
  const { submitter, replacer } = createSendPath(config, {
    chain, journal, ledger, nonces, reconciler, policy: fees, log,
    onAttemptJournaled: (entry, hash, kind) => {
      if (kind === "transfer") watcher?.replaced(entry, hash);
    },
    onSentInBackground: () => poller.wake(),
    awaitRoomAtNode: (nonce) => nodeRoom.take(() => hasRoomAtNode(nonce), config.transferSlotWaitMs),
  });
  const minedNonces = watchMinedNonces(config, { chain, journal, ledger, slots, nodeRoom, submitter, reconciler, replacer, log });

  // What the lane learned from its snapshots: routing's holds (from the journal, so not per request), its gas, its head.
  const seen: LaneSeen = { held: { stuck: false, jammed: false }, gasSpentWei: 0n, runway: new GasRunway(), latestHead: initialSnapshot.blockNumber };
  const rounds = laneRounds({ journal, transferLogs, reconciler, replacer, watcher, ledger, log }, () => lane.onRoundDone());
  const finality = createFinality(config, {
    node: chain.provider,
    chainId: chain.chainId,
    journal,
    log,
    onReorg: async () => {
      transferLogs.forget();
      nonceSearches.forget();
      await poller.ensureFresh(0);
    },
    onUnfollowedJump: () => transferLogs.forget(),
    transferLogs,
    onChange: () => rounds.run(seen.latestHead),
    nonceSearches,
  });
  reconciler.onMinedIn = (entryId, block) => finality.expectMinedIn(entryId, block);
  reconciler.onSnapshotStale = () => void poller.ensureFresh(0).catch(() => undefined);
  const isBusy = () => ledger.unminedCount > 0 || submitter.inFlightCount > 0 || (watcher?.awaitingConfirmations ?? 0) > 0;
  const poller = pollLane(config, { ...reconciled, pooled, chain, journal, log, latestBlock, walletReads, rounds, finality, isBusy }, seen);
  poller.start();
  const transfers = new TokenTransferService({
    chain, gasLimitMultiplier: config.gasLimitMultiplier, journal, ledger, submitter,
    ensureFees: (maxAgeMs) => poller.ensureFeesFresh(maxAgeMs),
    ensureSnapshot: (maxAgeMs) => poller.ensureFresh(maxAgeMs),
    isSendingAnywhere,
  });
  const resend = startBackgroundResend(
    { rebroadcastAfterMs: config.rebroadcastAfterMs, keyTtlMs: config.idempotencyKeyTtlHours * 3_600_000, hasRoomAtNode },
    { chain, journal, ledger, nonces, reconciler, submitter, replacer, log },
  );
  const figures = figuresOf(chain.wallet.address, ledger, () => seen.held);
  const lane: RunningLane = {
    address: chain.wallet.address, transfers, submitter, nonces, ledger, journal, replacer, watcher, figures,
    // One wallet has no other lane to send a stuck or jammed wallet's transfers to: only the in-flight
    // limit holds it (new transfers wait for room, see WalletInFlightLimit).
    hold: () => {
      if (pooled) return laneHold(figures(), admittedPerLane(config.maxInFlightPerLane));
      return figures().unmined >= admittedPerLane(config.maxInFlightPerLane) ? "in-flight-limit" : undefined;
    },
    gasSpentWei: () => seen.gasSpentWei,
    gasRunwayHours: () => seen.runway.hours(ledger.snapshot.ethBalance),
    ensureSnapshot: (maxAgeMs) => poller.ensureFresh(maxAgeMs),
    ensureBalances: (maxAgeMs) => poller.ensureFreshQuietly(maxAgeMs),
    unexplainedNonces,
    onRoundDone: () => undefined,
    async stopBackground() {
      await minedNonces.stop();
      await resend.stop();
      await poller.stop();
      await Promise.all([rounds.stop(), finality.stop()]);
    },
  };
  // Transfers settled while the service was down are reported without waiting for a block.
  rounds.run(initialSnapshot.blockNumber);
  return lane;
}

/** What a lane's snapshots and blocks told it so far. */
interface LaneSeen {
  /** What routing passes the lane over for, read with each snapshot. */
  held: { stuck: boolean; jammed: boolean };
  /** ETH the balance went down by since the start, less what native transfers paid out: its gas. */
  gasSpentWei: bigint;
  runway: GasRunway;
  /** The newest block the lane has read. */
  latestHead: number;
}

/** The wallet read and reconciled with the journal: what it holds, its nonces, and its unfinished transfers settled or followed. */
async function reconcileLane(config: LaneConfig, { chain, journal, log, displacements, slots, walletReads }: LaneParts) {
  const fees = feePolicyOf(config, chain.chainId);
  const feeCap = new FeeCapWatch(fees.maxFeePerGas, config.maxFeePerGas === undefined, log);
  const initialSnapshot = await walletReads.read(chain.wallet.address);
  const ledger = new WalletLedger(initialSnapshot, chain.tokenAddress, (token) => tokenOfChain(chain, token));
  // Transfers signed and journaled whose first broadcast waits for room at the node (see admittedPerLane):
  // answered 200 once the wait allowed is over, however the queue moves.
  const nodeRoom = new SlotQueue(1);
  // After the caller's synchronous work (a refused broadcast gives its reservation back and takes it again
  // at once; a snapshot updates the lane's holds after the ledger): woken waiters see the lane as it ends up.
  ledger.onFreed = () =>
    queueMicrotask(() => {
      nodeRoom.wake();
      slots.wake();
    });
  const hasRoomAtNode = (nonce: number) => nonce < ledger.minedNonceCountKnown + config.maxInFlightPerLane;
  const finalized = new FinalizedBlockReader(chain.provider, config.finalityBlocks ?? DEFAULT_FINALITY_BLOCKS, chain.chainId, (rule) => warnNoFinalizedTag(log, rule));
  // What used a nonce, searched in the chain's blocks: the lane's count reads are its hints.
  const nonceSearches = new NonceSearches();
  nonceSearches.noteCount(initialSnapshot.blockNumber, initialSnapshot.minedNonceCount);
  const unexplainedNonces = new UnexplainedNonces(chain.wallet.address, log);
  const reconciler = new TransferReconciler(chain, journal, ledger, { finalized, displacements, nonceSearches });
  reconciler.onUnfindable = (entry, searched) => unexplainedNonces.report(entry.nonce as number, searched, entry.id);
  const summary = await reconciler.reconcileAtStartup();
  log.info({ ...summary }, "journal reconciled with the chain");
  const nonces = await createNonceAllocator(chain, journal);
  return { fees, feeCap, initialSnapshot, ledger, nodeRoom, hasRoomAtNode, nonceSearches, unexplainedNonces, reconciler, nonces };
}

/**
 * While transfers wait for room, the mined nonce count is read on its own, and a wallet whose next
 * transaction the node holds without mining it is helped at once (see MinedNonceWatch).
 */
function watchMinedNonces(
  config: LaneConfig,
  parts: { chain: ChainConnection; journal: TransferJournal; ledger: WalletLedger; slots: SlotQueue; nodeRoom: SlotQueue; submitter: TransferSubmitter; reconciler: TransferReconciler; replacer: TransferReplacer; log: FastifyBaseLogger },
): MinedNonceWatch {
  const { chain, journal, ledger, slots, nodeRoom, submitter, reconciler, replacer, log } = parts;
  // The background's resend of the wallet's next transaction, without waiting REBROADCAST_AFTER_MS: the
  // same bytes again, and a replacement at the same nonce only when the node holds them without counting
  // them as pending (its own count says so).
  // True when a replacement went out (the node held the bytes without counting them pending, and mines the
  // replacement): the count is worth reading again at once.
  const resendNextNonce = async (nonce: number): Promise<boolean> => {
    const entry = journal.unsettled().find((unsettled) => unsettled.nonce === nonce);
    if (!entry || submitter.isInFlight(entry.id)) return false;
    const outcome = await reconciler.resend(entry, true);
    log.info({ nonce, outcome }, "nothing mined for a while with transfers waiting for room: sent the wallet's next transaction again");
    if (outcome !== "held, not executable") return false;
    await replaceNotExecutable(replacer, entry, log);
    return true;
  };
  const minedNonces = new MinedNonceWatch({
    readMinedNonceCount: async () => {
      // A count that is no quantity is no count: a NaN would never equal itself as the stalled count, nor pass in the ledger.
      const count = hexQuantity(await chain.provider.send("eth_getTransactionCount", [chain.wallet.address, "latest"]));
      if (count === undefined) throw new Error("the node answered eth_getTransactionCount with no quantity");
      return Number(count);
    },
    highestNonceSent: () => ledger.highestNonceSent,
    onCount: (count) => ledger.noteMinedNonceCount(count),
    isWanted: () => slots.size > 0 || nodeRoom.size > 0,
    onError: (error) => log.warn({ err: error }, "could not read the mined nonce count while transfers wait for room; the next snapshot tells it"),
    onStalled: (nonce) =>
      resendNextNonce(nonce).catch((error: unknown) => {
        log.warn({ err: error }, "could not send the wallet's next transaction again; the background tries");
        return false;
      }),
    slowestMs: config.chainRefreshIntervalMs,
  });
  slots.onWaiting(() => minedNonces.wake());
  nodeRoom.onWaiting(() => minedNonces.wake());
  return minedNonces;
}

/**
 * After each new snapshot (and, while idle, each new block read): verify which transaction used each
 * settled nonce, re-price what is stuck, report what was settled. `head`: the block the round is about.
 */
function laneRounds(
  { journal, transferLogs, reconciler, replacer, watcher, ledger, log }: { journal: TransferJournal; transferLogs: WalletTransferLogs; reconciler: TransferReconciler; replacer: TransferReplacer; watcher: TransferWatcher | undefined; ledger: WalletLedger; log: FastifyBaseLogger },
  onRoundDone: () => void,
): SerialRounds {
  const rounds = new SerialRounds(
    async (head) => {
      // Transfers settled since the last round are followed until final from here.
      journal.markSettledAt(head);
      await unlessSignerRefuses(verifyUsedNonces(transferLogs, journal, reconciler, head), log, "signing a displaced transfer again");
      await unlessSignerRefuses(replacer.repriceStuck(), log, "re-pricing stuck transfers");
      await watcher?.follow(head);
      // Transfers a reorganisation moved within the chain are pending only until their undone outcome was
      // reported above: their nonce is used, so the next round verifies them again, without waiting for a block.
      if (journal.markNonceUsedBelow(ledger.snapshot.minedNonceCount) > 0) rounds.again(head);
      await journal.flushed();
      onRoundDone();
    },
    (error) => log.warn({ err: error }, "re-pricing round failed; will retry at the next block"),
    () => !journal.failure,
  );
  return rounds;
}

/** The lane's reads of the chain: a snapshot of the wallet at the busy pace, the latest block while idle; what each tells is applied here. */
function pollLane(
  config: LaneConfig,
  parts: Awaited<ReturnType<typeof reconcileLane>> &
    Pick<LaneParts, "pooled" | "chain" | "journal" | "log" | "latestBlock" | "walletReads"> & { rounds: SerialRounds; finality: ReturnType<typeof createFinality>; isBusy: () => boolean },
  seen: LaneSeen,
): SnapshotPoller {
  const { fees, feeCap, initialSnapshot, ledger, nonceSearches, reconciler, nonces, pooled, chain, journal, log, latestBlock, walletReads, rounds, finality, isBusy } = parts;
  return new SnapshotPoller({
    initial: initialSnapshot,
    readBlock: (maxAgeMs) => latestBlock.latest(maxAgeMs),
    readSnapshot: (block) => walletReads.read(chain.wallet.address, block),
    onSnapshot: (snapshot) => {
      const before = ledger.snapshot.ethBalance;
      ledger.applySnapshot(snapshot);
      // An older block (a lagging backend) tells nothing new.
      if (ledger.snapshot !== snapshot) return;
      nonceSearches.noteCount(snapshot.blockNumber, snapshot.minedNonceCount);
      nonces.noteChainCount(snapshot.minedNonceCount);
      // A top-up raises the balance: only what went down is spent, less what native transfers paid out.
      const wentDown = before - snapshot.ethBalance - ledger.takeValueMined();
      if (wentDown > 0n) seen.gasSpentWei += wentDown;
      seen.runway.record(seen.gasSpentWei);
      if (journal.failure) return;
      const unmined = journal.markUnminedFrom(snapshot.minedNonceCount, snapshot.blockNumber);
      if (unmined > 0) log.warn({ unmined, minedNonceCount: snapshot.minedNonceCount }, "a reorganisation took mined transfers off the chain; they are pending again and followed until mined");
      journal.markNonceUsedBelow(snapshot.minedNonceCount);
      if (pooled) seen.held = readLaneHolds(journal, snapshot.minedNonceCount, snapshot.blockNumber, { blocks: config.stuckAfterBlocks, ms: config.rebroadcastAfterMs });
      rounds.run(snapshot.blockNumber);
    },
    // Without a base fee (a legacy chain) the gas price comes with each snapshot only.
    onBlock: (block) => {
      reconciler.noteHead(block.number);
      finality.follow(block);
      if (block.baseFeePerGas !== null) {
        ledger.applyBaseFee(block.baseFeePerGas, (baseFee, tip) => offeredFees(baseFee, tip, fees));
        feeCap.note(block.baseFeePerGas, ledger.snapshot.tip);
      }
      const newHead = block.number > seen.latestHead;
      seen.latestHead = Math.max(seen.latestHead, block.number);
      // Busy, the snapshot of this block triggers the round; idle, transfers settled meanwhile (while
      // the service was down, for one) are reported from the block reads.
      if (newHead && !isBusy()) rounds.run(block.number);
    },
    onError: (error) => log.warn({ err: error }, "could not refresh the wallet snapshot; keeping the previous one"),
    isBusy,
    busyIntervalMs: config.chainRefreshIntervalMs,
    idleIntervalMs: Math.max(IDLE_POLL_INTERVAL_MS, config.chainRefreshIntervalMs),
  });
}

/** What routing decides from (see lane-routing), for a transfer of `token`. */
function figuresOf(address: string, ledger: WalletLedger, held: () => LaneSeen["held"]): (token?: string) => LaneFigures {
  return (token) => {
    const gasPerTransfer = transferGasCost(ledger.snapshot);
    return {
      address,
      // Every reservation: transfers being signed or sent as well as those waiting to be mined.
      unmined: ledger.inFlightCount,
      ...held(),
      // A native transfer spends the balance gas is paid from.
      tokensAvailable: token === NATIVE_TOKEN ? ledger.gasAvailable - gasPerTransfer : ledger.tokensAvailableOf(token),
      gasAvailable: ledger.gasAvailable,
      gasPerTransfer,
      // A lane that cannot pay one more transfer's gas at today's fees takes none.
      gasFloor: gasPerTransfer,
    };
  };
}
