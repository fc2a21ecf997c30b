/**
 * Assembles what the routes use on the chain side: the journal, one lane per key (lanes/start-lane.ts:
 * each wallet's sending and following), the webhook dispatcher the lanes share, the pool's router, the
 * chain head tracker and the cached transaction lookup. Each part builds itself through a factory in its
 * own folder; this file only orders them.
 */
import { dirname, join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config.js";
import { parseWebhookUrls } from "../domain/webhook-settings.js";
import { startJournalRetention } from "../journal/journal-retention.js";
import { startWorkingCopyEviction } from "../journal/working-copy-eviction.js";
import { type JournalOwner, openSqliteJournal } from "../journal/sqlite-transfer-journal.js";
import { type JournalEntry, type TransferJournal, refuseUnfollowedLanes } from "../journal/transfer-journal.js";
import { GasTopUps, gasTopUpSettingsOf } from "./gas-top-ups.js";
import { type LaneConfig, type LaneServices, type RunningLane, feePolicyOf, startLane } from "../lanes/start-lane.js";
import { ChainHeadTracker, readLatestBlock } from "../lookup/chain-head.js";
import { TransferActivity } from "../lookup/transfer-activity.js";
import { TransactionLookup } from "../lookup/transaction-lookup.js";
import { TransactionStatusReader } from "../lookup/transaction-status.js";
import { type ChainConnection, laneConnection } from "../node/connect-chain.js";
import type { NonceAllocator } from "../send-path/nonce-allocator.js";
import { NonceDisplacements } from "../send-path/nonce-displacements.js";
import type { TransferReplacer } from "../send-path/transfer-replacer.js";
import type { TransferSender } from "../send-path/transfer-service.js";
import { LanePool } from "./lane-pool.js";
import { SharedFeeBlock } from "../lanes/shared-fee-block.js";
import { PoolWalletReads } from "../lanes/pool-wallet-reads.js";
import { admittedPerLane } from "../lanes/lane-routing.js";
import { SlotQueue } from "../lanes/slot-queue.js";
import { readFeeBlock } from "../send-path/wallet-snapshot.js";
import { WalletInFlightLimit } from "./wallet-in-flight-limit.js";
import type { TransferSubmitter } from "../send-path/transfer-submitter.js";
import type { WalletLedger } from "../send-path/wallet-ledger.js";
import { createWebhookDispatcher } from "../webhooks/create-webhooks.js";
import type { DeliveryOutcome, WebhookDispatcher } from "../webhooks/webhook-dispatcher.js";


export interface ChainServices {
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
  /** The journal (as the first lane sees it; keys, hashes and events are every lane's). */
  journal: TransferJournal;
  replacer: TransferReplacer;
  head: ChainHeadTracker;
  lookup: TransactionLookup;
  statuses: TransactionStatusReader;
  /** Present when WEBHOOK_URL is set. */
  webhooks: { dispatcher: WebhookDispatcher } | undefined;
  /** Present when GAS_TOPUP_FROM is set. */
  topUps: GasTopUps | undefined;
  /** The last hours of transfers and gas, tallied in the background. */
  activity: TransferActivity;
  /** Stops background work, waits for it, and closes the journal. Call after the HTTP server closed. */
  close(): Promise<void>;
}

export type ChainServicesConfig = LaneConfig &
  Pick<
    Config,
    | "journalPath"
    | "journalSynchronous"
    | "journalRetentionDays"
    | "journalArchiveDir"
    | "headMaxAgeMs"
    | "transactionCacheSize"
    | "webhookUrl"
    | "webhookSecret"
    | "webhookRetryInitialMs"
    | "gasTopUpFrom"
    | "gasTopUpBelow"
    | "gasTopUpTo"
  >;

/** Opens the journal of this wallet; `notify`: webhooks report on the transfers made from now on. */
export type JournalOpener = (owner: JournalOwner, options: { notify: boolean }) => TransferJournal | Promise<TransferJournal>;

/**
 * Opens the journal, starts every lane (reads its wallet, reconciles its unfinished transfers, starts its
 * background work), and the parts all lanes share. Each part builds itself; this function only orders them.
 */
export async function startChainServices(
  config: ChainServicesConfig,
  chain: ChainConnection,
  log: FastifyBaseLogger,
  observeDelivery?: (outcome: DeliveryOutcome) => void,
  openJournal: JournalOpener = (owner, { notify }) => openSqliteJournal(config.journalPath, owner, { synchronous: config.journalSynchronous, notify }),
): Promise<ChainServices> {
  const endpoints = config.webhookUrl ? parseWebhookUrls(config.webhookUrl) : [];
  const journal = await openJournal(
    { chainId: chain.chainId, walletAddress: chain.wallet.address, tokenAddress: chain.tokenAddress },
    { notify: endpoints.length > 0 },
  );
  const lanes: RunningLane[] = [];
  let topUps: GasTopUps | undefined;
  let retention: { stop(): Promise<void> } | undefined;
  let eviction: { stop(): Promise<void> } | undefined;
  try {
    refuseUnfollowedLanes(journal, chain.laneSigners.map((signer) => signer.address));
    const gasTopUpSettings = gasTopUpSettingsOf(config, chain.laneSigners.map((signer) => signer.address));
    const pooled = chain.laneSigners.length > 1;
    const displacements = new NonceDisplacements();
    // New transfers waiting for room in a lane (see admittedPerLane), every lane's.
    const slots = new SlotQueue();
    // The latest block, one read for every lane: a pool's idle cost is one wallet's.
    const latestBlock = new SharedFeeBlock(() => readFeeBlock(chain));
    // Every lane's balances and nonce count, one request a block.
    const walletReads = new PoolWalletReads(chain, feePolicyOf(config), (reason) =>
      log.warn({ reason }, "every lane's balances cannot be read in one request here; reading them call by call from now on"),
    );
    // Whether any lane is still sending a key's entry: a repeat may reach another lane than the one sending it.
    const isSendingAnywhere = pooled ? (key: string, entry: JournalEntry) => lanes.some((lane) => lane.transfers.isSending(key, entry)) : undefined;
    for (const signer of chain.laneSigners) {
      const laneChain = signer === chain.signer ? chain : laneConnection(chain, signer);
      const laneJournal = signer === chain.signer ? journal : journal.forLane(signer.address);
      // With several lanes, every line a lane logs names it.
      const laneLog = pooled ? log.child({ lane: signer.address }) : log;
      lanes.push(await startLane(config, { pooled, chain: laneChain, journal: laneJournal, log: laneLog, endpoints, isSendingAnywhere, displacements, slots, latestBlock, walletReads }));
    }
    const dispatcher = endpoints.length === 0 ? undefined : createWebhookDispatcher(config, journal, log, observeDelivery);
    topUps = gasTopUpSettings && new GasTopUps(gasTopUpSettings, lanes, log);
    for (const lane of lanes) {
      lane.onRoundDone = () => {
        dispatcher?.wake();
        topUps?.wake();
      };
    }
    dispatcher?.start();
    topUps?.wake();
    retention = config.journalRetentionDays > 0 ? startRetention(config, journal, log) : undefined;
    eviction = startWorkingCopyEviction(journal, {
      forgotten: (count) => log.debug({ count }, "the working copy forgot transfers settled for good; PostgreSQL keeps them"),
      failed: (error) => log.warn({ err: error }, "the working copy could not forget transfers settled for good; the next pass tries again"),
    });
    const activity = new TransferActivity(journal, () => lanes.reduce((sum, lane) => sum + lane.gasSpentWei(), 0n), {
      onError: (error) => log.warn({ err: error }, "could not count the last hours' transfers for the console's charts; the last count stays"),
    });
    activity.start();

    const head = new ChainHeadTracker(() => readLatestBlock(chain.provider), config.headMaxAgeMs);
    const lookup = new TransactionLookup(chain.provider, head, config.transactionCacheSize);
    const [first] = lanes;
    const byAddress = new Map(lanes.map((lane) => [lane.address, lane]));
    const inFlight = { maxInFlight: admittedPerLane(config.maxInFlightPerLane), maxWaitMs: config.transferSlotWaitMs };
    return {
      transfers: pooled
        ? new LanePool(lanes, journal, { ...inFlight, balancesMaxAgeMs: config.chainRefreshIntervalMs }, slots)
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
      statuses: new TransactionStatusReader(chain, lookup, journal, displacements),
      webhooks: dispatcher && { dispatcher },
      topUps,
      activity,
      async close() {
        await activity.stop();
        await retention?.stop();
        await eviction?.stop();
        await topUps?.stop();
        await Promise.all(lanes.map((lane) => lane.stopBackground()));
        await dispatcher?.stop();
        // The last writes reach the store (a shared database is written after each commit) before it closes.
        await journal.flushed().catch(() => undefined);
        journal.close();
      },
    };
  } catch (error) {
    await retention?.stop();
    await eviction?.stop();
    await topUps?.stop();
    await Promise.all(lanes.map((lane) => lane.stopBackground()));
    journal.close();
    throw error;
  }
}

/** Retention of the journal (JOURNAL_RETENTION_DAYS): a pass now and every hour, each told in the log. */
function startRetention(config: ChainServicesConfig, journal: TransferJournal, log: FastifyBaseLogger): { stop(): Promise<void> } {
  const archiveDir = config.journalArchiveDir ?? join(dirname(config.journalPath), "archive");
  return startJournalRetention(journal, { days: config.journalRetentionDays, archiveDir }, {
    archived: ({ archived, into }) => log.info({ archived, into, retentionDays: config.journalRetentionDays }, "moved settled transfers older than the retention to the archive"),
    failed: (error) => log.error({ err: error }, "journal retention failed; nothing was deleted that is not archived, and the next pass tries again"),
  });
}
