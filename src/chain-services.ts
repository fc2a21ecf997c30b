/**
 * The chain side of the service: the journal, every network (network/network-services.ts: its lanes and
 * what they share), and what works on the journal as a whole: the webhook dispatcher, retention, the
 * working copy's eviction and the activity counts. Each part builds itself; this file only orders them.
 */
import { dirname, join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "./config.js";
import { parseWebhookUrls } from "./domain/webhook-settings.js";
import { startJournalRetention } from "./journal/journal-retention.js";
import { type JournalOwner, openSqliteJournal } from "./journal/sqlite-transfer-journal.js";
import { type JournalEntry, type TransferJournal, refuseUnfollowedNetworks } from "./journal/transfer-journal.js";
import { startWorkingCopyEviction } from "./journal/working-copy-eviction.js";
import { TransferActivity } from "./lookup/transfer-activity.js";
import { type NetworkConfig, type NetworkServices, type RunningNetwork, startNetwork } from "./network/network-services.js";
import type { ChainConnection } from "./node/connect-chain.js";
import { createWebhookDispatcher } from "./webhooks/create-webhooks.js";
import type { DeliveryOutcome, WebhookDispatcher } from "./webhooks/webhook-dispatcher.js";

/** The default network's parts (what the routes use where a request names no network), and the service-wide ones. */
export interface ChainServices extends NetworkServices {
  /** Every network, the default first. */
  networks: readonly NetworkServices[];
  /** The network of a chain id, if the service pays on it. */
  networkOf(chainId: bigint | number): NetworkServices | undefined;
  /** Present when WEBHOOK_URL is set. */
  webhooks: { dispatcher: WebhookDispatcher } | undefined;
  /** The last hours of transfers and gas, tallied in the background. */
  activity: TransferActivity;
  /** Stops background work, waits for it, and closes the journal. Call after the HTTP server closed. */
  close(): Promise<void>;
}

export type ChainServicesConfig = NetworkConfig &
  Pick<Config, "journalPath" | "journalSynchronous" | "journalRetentionDays" | "journalArchiveDir" | "webhookUrl" | "webhookSecret" | "webhookRetryInitialMs">;

/** Opens the journal of this wallet; `notify`: webhooks report on the transfers made from now on. */
export type JournalOpener = (owner: JournalOwner, options: { notify: boolean }) => TransferJournal | Promise<TransferJournal>;

/** A network to start: its connection, and its configuration (the deployment's, with the network's own settings). */
export interface NetworkToStart {
  config: NetworkConfig;
  chain: ChainConnection;
}

/**
 * Opens the journal (its owner is the default network's wallet and token), starts every network, and the
 * parts that work on the journal as a whole. `networks`: the default first.
 */
export async function startChainServices(
  config: ChainServicesConfig,
  networks: readonly NetworkToStart[],
  log: FastifyBaseLogger,
  observeDelivery?: (outcome: DeliveryOutcome) => void,
  openJournal: JournalOpener = (owner, { notify }) => openSqliteJournal(config.journalPath, owner, { synchronous: config.journalSynchronous, notify }),
): Promise<ChainServices> {
  const endpoints = config.webhookUrl ? parseWebhookUrls(config.webhookUrl) : [];
  const [home] = networks;
  const journal = await openJournal(
    { chainId: home.chain.chainId, walletAddress: home.chain.wallet.address, tokenAddress: home.chain.tokenAddress, severalNetworks: networks.length > 1 },
    { notify: endpoints.length > 0 },
  );
  const started: RunningNetwork[] = [];
  let retention: { stop(): Promise<void> } | undefined;
  let eviction: { stop(): Promise<void> } | undefined;
  try {
    refuseUnfollowedNetworks(journal, networks.map(({ chain }) => chain.chainId));
    // Whether any lane is still sending a key's entry: a repeat may reach another lane, or another network.
    const several = networks.length > 1 || home.chain.laneSigners.length > 1;
    const isSendingAnywhere = several
      ? (key: string, entry: JournalEntry) => started.some((network) => network.lanes.some((lane) => lane.transfers.isSending(key, entry)))
      : undefined;
    for (const { config: networkConfig, chain } of networks) {
      const view = chain === home.chain ? journal : journal.forNetwork(chain.chainId, chain.tokenAddress);
      // With several networks, every line a network logs names it.
      const networkLog = networks.length > 1 ? log.child({ network: chain.network.name }) : log;
      started.push(await startNetwork(networkConfig, { chain, journal: view, log: networkLog, endpoints, isSendingAnywhere }));
    }
    const dispatcher = endpoints.length === 0 ? undefined : createWebhookDispatcher(config, journal, log, observeDelivery);
    for (const network of started) network.onRoundDone = () => dispatcher?.wake();
    dispatcher?.start();
    retention = config.journalRetentionDays > 0 ? startRetention(config, journal, log) : undefined;
    eviction = startWorkingCopyEviction(journal, {
      forgotten: (count) => log.debug({ count }, "the working copy forgot transfers settled for good; PostgreSQL keeps them"),
      failed: (error) => log.warn({ err: error }, "the working copy could not forget transfers settled for good; the next pass tries again"),
    });
    const [first] = started;
    // Gas is counted in the default network's coin: another chain's is another currency.
    const activity = new TransferActivity(journal, () => first.gasSpentWei(), {
      onError: (error) => log.warn({ err: error }, "could not count the last hours' transfers for the console's charts; the last count stays"),
    });
    activity.start();
    const byChain = new Map(started.map((network) => [network.chain.chainId, network]));
    const { onRoundDone: _onRoundDone, gasSpentWei: _gasSpentWei, stop: _stop, ...defaultNetwork } = first;
    return {
      ...defaultNetwork,
      networks: started,
      networkOf: (chainId) => byChain.get(BigInt(chainId)),
      webhooks: dispatcher && { dispatcher },
      activity,
      async close() {
        await activity.stop();
        await retention?.stop();
        await eviction?.stop();
        await Promise.all(started.map((network) => network.stop()));
        await dispatcher?.stop();
        // The last writes reach the store (a shared database is written after each commit) before it closes.
        await journal.flushed().catch(() => undefined);
        journal.close();
      },
    };
  } catch (error) {
    await retention?.stop();
    await eviction?.stop();
    await Promise.all(started.map((network) => network.stop()));
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
