/**
 * One network of the deployment, a unit of its own: its lanes (lanes/start-lane.ts: each wallet's sending
 * and following on this chain), the routing among them, gas top-ups between them, its head, lookups and
 * status documents. Networks share only the journal (each writes and follows its own transfers in it) and
 * what the service does with the journal as a whole (chain-services.ts). Each part builds itself through a
 * factory in its own folder; this file only orders them.
 */
import { formatUnits, parseEther } from "ethers";
import { FeeBudget, runFeeSampling } from "./fee-budget.js";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config.js";
import { type JournalEntry, type TransferJournal, refuseUnfollowedLanes } from "../journal/transfer-journal.js";
import { type LaneConfig, type LaneServices, type RunningLane, feePolicyOf, startLane } from "../lanes/start-lane.js";
import { ChainHeadTracker, readLatestBlock } from "../lookup/chain-head.js";
import { TransactionLookup } from "../lookup/transaction-lookup.js";
import { TransactionStatusReader } from "../lookup/transaction-status.js";
import { PayoutStatusReader } from "../lookup/payout-status.js";
import { type ServedNetwork, tokenAt } from "../network-settings/network-choice.js";
import { type ChainConnection, laneConnection, tokenOfChain, tokensOf } from "../node/connect-chain.js";
import type { NonceAllocator } from "../send-path/nonce-allocator.js";
import { NonceDisplacements } from "../send-path/nonce-displacements.js";
import type { TransferReplacer } from "../send-path/transfer-replacer.js";
import type { TransferSender } from "../send-path/transfer-service.js";
import type { TransferSubmitter } from "../send-path/transfer-submitter.js";
import type { WalletLedger } from "../send-path/wallet-ledger.js";
import { readFeeBlock } from "../send-path/wallet-snapshot.js";
import { admittedPerLane } from "../lanes/lane-routing.js";
import { PoolWalletReads } from "../lanes/pool-wallet-reads.js";
import { SharedFeeBlock } from "../lanes/shared-fee-block.js";
import { SlotQueue } from "../lanes/slot-queue.js";
import { runOutflowChecks } from "../outflows/outflow-checks.js";
import { OutflowWatch, type UnexpectedOutflow } from "../outflows/outflow-watch.js";
import { GasTopUps, gasTopUpSettingsOf } from "./gas-top-ups.js";
import { LanePool } from "./lane-pool.js";
import { WalletInFlightLimit } from "./wallet-in-flight-limit.js";

/** A network's parts, as the routes and the service's gauges use them. */
export interface NetworkServices {
  chain: ChainConnection;
  /** How requests, answers and events name the network and its token. */
  network: ServedNetwork;
  /** The first lane's service for one wallet; the pool's router for several. */
  transfers: TransferSender;
  /** Every lane, in the order of the configured keys. */
  lanes: readonly LaneServices[];
  /** The lane of a wallet address, if it is one of the pool's. */
  laneOf(address: string): LaneServices | undefined;
  // The first lane's parts: what describes "the wallet" where one document or gauge stands for it.
  submitter: TransferSubmitter;
  nonces: NonceAllocator;
  ledger: WalletLedger;
  /** The journal as the network's first lane sees it (keys, hashes and events are every network's). */
  journal: TransferJournal;
  replacer: TransferReplacer;
  head: ChainHeadTracker;
  lookup: TransactionLookup;
  statuses: TransactionStatusReader;
  /** What became of payout batches and their items. */
  payouts: PayoutStatusReader;
  /** Present when GAS_TOPUP_FROM is set. */
  topUps: GasTopUps | undefined;
  /** Its wallets' fees of the last 24 hours, against FEE_BUDGET_PER_DAY. */
  feeBudget: FeeBudget;
}

/** A network while it runs: its parts, and how its background work is told of rounds and stopped. */
export interface RunningNetwork extends NetworkServices {
  /** Called after each round of any of its lanes, once the round's events are journaled. */
  onRoundDone: () => void;
  /** ETH its lanes' balances went down by since the start: their gas, in this chain's coin. */
  gasSpentWei(): bigint;
  /** Stops its background work and waits for it; the journal stays open. */
  stop(): Promise<void>;
}

export type NetworkConfig = LaneConfig &
  Pick<Config, "headMaxAgeMs" | "transactionCacheSize" | "gasTopUpFrom" | "gasTopUpBelow" | "gasTopUpTo" | "outflowCheckIntervalMs" | "feeBudgetPerDay">;

export interface NetworkParts {
  chain: ChainConnection;
  /** The journal as this network's first lane sees it. */
  journal: TransferJournal;
  log: FastifyBaseLogger;
  /** The webhook endpoints events are made for (none: no events). */
  endpoints: readonly string[];
  /** Whether any lane of any network is still sending a key's entry: a repeat may reach another lane. */
  isSendingAnywhere: ((key: string, entry: JournalEntry) => boolean) | undefined;
  /** Told of each transaction or token transfer out of a lane that the service never made. */
  onOutflow: (outflow: UnexpectedOutflow) => void;
}

/**
 * Starts every lane of a network (reads its wallet, reconciles its unfinished transfers, starts its
 * background work), and the parts its lanes share.
 */
export async function startNetwork(config: NetworkConfig, { chain, journal, log, endpoints, isSendingAnywhere, onOutflow }: NetworkParts): Promise<RunningNetwork> {
  const lanes: RunningLane[] = [];
  let topUps: GasTopUps | undefined;
  let outflowChecks: { stop(): Promise<void> } | undefined;
  let feeSampling: { stop(): void } | undefined;
  const stopBackground = async () => {
    feeSampling?.stop();
    await outflowChecks?.stop();
    await topUps?.stop();
    await Promise.all(lanes.map((lane) => lane.stopBackground()));
  };
  try {
    refuseUnfollowedLanes(journal, chain.laneSigners.map((signer) => signer.address));
    const gasTopUpSettings = gasTopUpSettingsOf(config, chain.laneSigners.map((signer) => signer.address));
    const pooled = chain.laneSigners.length > 1;
    // The latest block, one read for every lane: a pool's idle cost is one wallet's.
    const latestBlock = new SharedFeeBlock(() => readFeeBlock(chain));
    const outflows = outflowWatchOf(config, { chain, journal, log, onOutflow }, latestBlock, lanes);
    // A transaction found at a transfer's nonce is an outflow too, unless the service sent it.
    const displacements = new NonceDisplacements((entryId, displacement) => {
      const entry = journal.findById(entryId);
      if (entry?.nonce == null) return;
      outflows.reportDisplacement(entry.lane, entry.nonce, displacement.by, displacement.block).catch((error: unknown) => log.warn({ err: error }, "could not check the transaction that used a transfer's nonce"));
    });
    // New transfers waiting for room in a lane (see admittedPerLane), every lane's.
    const slots = new SlotQueue();
    // Every lane's balances and nonce count, one request a block.
    const fees = feePolicyOf(config, chain.chainId);
    logFeeCap(log, config, fees);
    const walletReads = new PoolWalletReads(chain, fees, (reason) =>
      log.warn({ reason }, "every lane's balances cannot be read in one request here; reading them call by call from now on"),
    );
    for (const signer of chain.laneSigners) lanes.push(await startLaneOf(signer, config, { chain, journal, log, endpoints, isSendingAnywhere }, { pooled, displacements, slots, latestBlock, walletReads }));
    topUps = gasTopUpSettings && new GasTopUps(gasTopUpSettings, lanes, log);
    outflowChecks = startOutflowChecks(config, outflows, lanes, log);
    const gasSpentWei = () => lanes.reduce((sum, lane) => sum + lane.gasSpentWei(), 0n);
    const feeBudget = new FeeBudget(config.feeBudgetPerDay === undefined ? undefined : parseEther(config.feeBudgetPerDay), gasSpentWei, log);
    feeSampling = runFeeSampling(feeBudget);
    const head = new ChainHeadTracker(() => readLatestBlock(chain.provider), config.headMaxAgeMs);
    const lookup = new TransactionLookup(chain.provider, head, config.transactionCacheSize);
    const statuses = new TransactionStatusReader(chain, lookup, journal, displacements);
    const [first] = lanes;
    const byAddress = new Map(lanes.map((lane) => [lane.address, lane]));
    const inFlight = { maxInFlight: admittedPerLane(config.maxInFlightPerLane), maxWaitMs: config.transferSlotWaitMs };
    const running: RunningNetwork = {
      chain,
      network: chain.network,
      transfers: pooled
        ? new LanePool(lanes, journal, { ...inFlight, balancesMaxAgeMs: config.chainRefreshIntervalMs, chainId: chain.chainId, unitOf: (token) => tokenOfChain(chain, token) }, slots)
        : new WalletInFlightLimit(first, journal, inFlight, slots),
      lanes,
      laneOf: (address) => byAddress.get(address),
      submitter: first.submitter,
      nonces: first.nonces,
      ledger: first.ledger,
      journal,
      replacer: first.replacer,
      head,
      lookup,
      statuses,
      payouts: new PayoutStatusReader(statuses, lookup, (token) => tokenAt(chain.tokens, token)?.decimals),
      topUps,
      onRoundDone: () => undefined,
      gasSpentWei,
      feeBudget,
      stop: stopBackground,
    };
    for (const lane of lanes) {
      lane.onRoundDone = () => {
        topUps?.wake();
        running.onRoundDone();
      };
    }
    topUps?.wake();
    return running;
  } catch (error) {
    await stopBackground();
    throw error;
  }
}

/** One lane of the network: its signer's connection and journal, and with several lanes a log that names it. */
function startLaneOf(
  signer: ChainConnection["laneSigners"][number],
  config: NetworkConfig,
  { chain, journal, log, endpoints, isSendingAnywhere }: Omit<NetworkParts, "onOutflow">,
  shared: Pick<Parameters<typeof startLane>[1], "pooled" | "displacements" | "slots" | "latestBlock" | "walletReads">,
): Promise<RunningLane> {
  const own = signer === chain.signer;
  // With several lanes, every line a lane logs names it.
  const laneLog = shared.pooled ? log.child({ lane: signer.address }) : log;
  return startLane(config, { ...shared, chain: own ? chain : laneConnection(chain, signer), journal: own ? journal : journal.forLane(signer.address), log: laneLog, endpoints, isSendingAnywhere });
}

/** The watch for spends out of the network's wallets that the service did not make, and for transfers answered 417 that were mined. */
function outflowWatchOf(
  config: NetworkConfig,
  { chain, journal, log, onOutflow }: Pick<NetworkParts, "chain" | "journal" | "log" | "onOutflow">,
  latestBlock: SharedFeeBlock,
  lanes: readonly RunningLane[],
): OutflowWatch {
  return new OutflowWatch({
    node: chain.provider,
    // The block the lanes' pollers read when it is recent enough: an idle service reads no more blocks for it.
    readHead: async () => (await latestBlock.latest(config.outflowCheckIntervalMs)).block,
    lanes: chain.laneSigners.map((signer) => ({ address: signer.address, journal: signer === chain.signer ? journal : journal.forLane(signer.address) })),
    tokens: tokensOf(chain).filter((token) => !token.native).map((token) => token.address),
    onOtherTokenLogsSkipped: (skipped, blocks) =>
      log.warn({ skipped, blocks }, "more Transfer logs out of the wallets of contracts this network does not pay in than one check reports (a fake token's spam?): those were not reported one by one; their contracts and transactions (a few) are named here"),
    onLogsNarrowed: (block, error) =>
      log.error({ block, err: error }, "the node would not return every contract's Transfer logs out of the wallets in this block (too many): only the network's tokens' were read there"),
    onOutflow,
    onRefusedMined: (entry, hash, block) => {
      log.error(
        { entryId: entry.id, hash, block, refusal: entry.refusal },
        "A TRANSFER ANSWERED 417 WAS MINED: its broadcast was refused in words that said it was not taken (the client may have paid it again another way)",
      );
      try {
        journal.recordMined(entry.id, hash);
      } catch (error) {
        // An entry the working copy no longer holds (a shared database): reported again by the next leader.
        log.error({ err: error, entryId: entry.id }, "could not journal the transfer answered 417 as mined; the journal still shows it rejected");
      }
      onOutflow({ wallet: entry.lane, hash, block, nonce: entry.nonce, token: null, logIndex: null, logKey: null, to: null, amount: null, code: null, otherToken: false });
    },
    onUnexplainedNonce: (wallet, nonce, searched) => lanes.find((lane) => lane.address === wallet)?.unexplainedNonces.report(nonce, searched),
    // Nonces another sender of a lane's key used are not signed at: a transfer that met one would be held
    // until the chain shows that use final.
    onMinedCount: (wallet, count) => lanes.find((lane) => lane.address === wallet)?.nonces.noteChainCount(count),
    start: { read: () => journal.outflowWatchStart(), record: (block) => journal.recordOutflowWatchStart(block) },
    progress: { read: () => journal.outflowWatchProgress(), record: (progress) => journal.recordOutflowWatchProgress(progress) },
  });
}

/** Says at the start which cap holds the fee per gas, and where it comes from. */
function logFeeCap(log: FastifyBaseLogger, config: NetworkConfig, fees: ReturnType<typeof feePolicyOf>): void {
  log.info(
    { feeCapGwei: fees.maxFeePerGas === undefined ? null : formatUnits(fees.maxFeePerGas, "gwei") },
    fees.maxFeePerGas === undefined
      ? "no cap on the fee per gas: MAX_FEE_PER_GAS is unset and this chain has no default ceiling (re-pricings stay within 10x the first attempt)"
      : config.maxFeePerGas === undefined
        ? "the fee per gas is capped at this chain's default ceiling (MAX_FEE_PER_GAS unset; set it to raise or lower it)"
        : "the fee per gas is capped at MAX_FEE_PER_GAS",
  );
}

/** The periodic check for unexpected outflows, slower while every lane is idle; none with OUTFLOW_CHECK_INTERVAL_MS=0. */
function startOutflowChecks(config: NetworkConfig, outflows: OutflowWatch, lanes: readonly RunningLane[], log: FastifyBaseLogger): { stop(): Promise<void> } | undefined {
  return config.outflowCheckIntervalMs > 0
    ? runOutflowChecks(
        outflows,
        config.outflowCheckIntervalMs,
        () => lanes.every((lane) => lane.ledger.unminedCount === 0 && lane.submitter.inFlightCount === 0),
        (error) => log.warn({ err: error }, "could not check the wallet for unexpected outflows; the next check covers these blocks"),
      )
    : undefined;
}
