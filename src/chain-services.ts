/**
 * The chain side of the service: the journal, every network (network/network-services.ts: its lanes and
 * what they share), and what works on the journal as a whole: the webhook dispatcher, retention, the
 * working copy's eviction and the activity counts. Each part builds itself; this file only orders them.
 */
import { dirname, join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "./config.js";
import { parseWebhookUrls } from "./domain/webhook-settings.js";
import { keyHoldersOf } from "./auth/key-holders.js";
import { auditKeyOf } from "./journal/audit-chain.js";
import { startJournalRetention } from "./journal/journal-retention.js";
import { type JournalOwner, openSqliteJournal } from "./journal/sqlite-transfer-journal.js";
import { type JournalEntry, type TransferJournal, refuseUnfollowedNetworks } from "./journal/transfer-journal.js";
import { startWorkingCopyEviction } from "./journal/working-copy-eviction.js";
import { TransferActivity } from "./lookup/transfer-activity.js";
import { type NetworkConfig, type NetworkServices, type RunningNetwork, startNetwork } from "./network/network-services.js";
import { type ChainConnection, closeChain } from "./node/connect-chain.js";
import type { ServedNetwork } from "./network-settings/network-choice.js";
import { UnexpectedOutflows } from "./outflows/unexpected-outflows.js";
import { journaledPause, outflowReporter } from "./outflows/outflow-reports.js";
import { AuditHeadPublisher } from "./webhooks/audit-head.js";
import { SecondAdminResume } from "./signers/second-admin-resume.js";
import type { SigningPause } from "./signers/signing-pause.js";
import { ApprovalDesk } from "./approvals/approval-desk.js";
import { createWebhookDispatcher } from "./webhooks/create-webhooks.js";
import type { DeliveryOutcome, WebhookDispatcher } from "./webhooks/webhook-dispatcher.js";

/** Every network's parts, and the service-wide ones. */
export interface ChainServices {
  /** The journal of every network. */
  journal: TransferJournal;
  /** Every network the configuration names, the default first, whether it runs yet or not. */
  configured: readonly ServedNetwork[];
  /** Every network that runs, in the configured order, the default first while it runs (one unreachable at startup joins once reachable). */
  networks: readonly NetworkServices[];
  /** The running network of a chain id. */
  networkOf(chainId: bigint | number): NetworkServices | undefined;
  /** Why a configured network does not run (its node has not been reached since startup); undefined once it runs. */
  unavailable(chainId: bigint | number): string | undefined;
  /** Present when WEBHOOK_URL is set. */
  webhooks: { dispatcher: WebhookDispatcher } | undefined;
  /** The last hours of transfers and gas, tallied in the background. */
  activity: TransferActivity;
  /** Transactions and token transfers out of the wallets that the service never made, seen since it started. */
  outflows: UnexpectedOutflows;
  /** Whether the service signs (PAUSE_ON_UNEXPECTED_OUTFLOW stops it), and the admin's resume. */
  signing: SigningPause;
  /** Transfers above APPROVAL_ABOVE, waiting for a second admin key. */
  approvals: ApprovalDesk;
  /** Publishes the audit log's head outside the database (AUDIT_HEAD_INTERVAL_MS). */
  auditHead: AuditHeadPublisher;
  /** With RESUME_NEEDS_SECOND_ADMIN: a resume is asked by one admin and confirmed by another person's. */
  resumes: SecondAdminResume | undefined;
  /** Stops background work, waits for it, and closes the journal. Call after the HTTP server closed. */
  close(): Promise<void>;
}

export type ChainServicesConfig = NetworkConfig &
  Pick<Config, "journalPath" | "journalSynchronous" | "journalRetentionDays" | "journalArchiveDir" | "webhookUrl" | "webhookSecret" | "webhookRetryInitialMs" | "pauseOnUnexpectedOutflow" | "approvalTtlHours" | "auditKey" | "auditHeadIntervalMs" | "apiKeys" | "apiKeyHolders" | "authDisabled" | "resumeNeedsSecondAdmin">;

/** Opens the journal of this wallet; `notify`: webhooks report on the transfers made from now on. */
export type JournalOpener = (owner: JournalOwner, options: { notify: boolean }) => TransferJournal | Promise<TransferJournal>;

/**
 * A network to start: its connection and its configuration (the deployment's, with the network's own
 * settings); or, for one whose node did not answer at startup, how to connect it, tried again until it answers.
 */
export type NetworkToStart =
  | { config: NetworkConfig; chain: ChainConnection }
  | {
      config: NetworkConfig;
      served: ServedNetwork;
      /** The address of each lane's wallet (the signers'), and the network's first ERC-20 token: the journal's owner when this is the default network. */
      lanes: readonly string[];
      tokenAddress: string;
      connect: () => Promise<ChainConnection>;
      unreachable: string;
    };

/** How often a network unreachable at startup is tried again. */
const UNREACHABLE_RETRY_MS = 5_000;

/**
 * Opens the journal (its owner is the default network's wallet and token, from the configuration when its
 * node has not answered yet), starts every network it can, and the parts that work on the journal as a
 * whole. `networks`: the default first.
 */
export async function startChainServices(
  config: ChainServicesConfig,
  networks: readonly NetworkToStart[],
  log: FastifyBaseLogger,
  signing: SigningPause,
  observeDelivery?: (outcome: DeliveryOutcome) => void,
  openJournal: JournalOpener = (owner, { notify }) => openSqliteJournal(config.journalPath, owner, { synchronous: config.journalSynchronous, notify, auditKey: auditKeyOf(config.auditKey) }),
): Promise<ChainServices> {
  const endpoints = config.webhookUrl ? parseWebhookUrls(config.webhookUrl) : [];
  const [home] = networks;
  const homeChainId = servedOfNetwork(home).chainId;
  const lanesOf = (network: NetworkToStart) => ("chain" in network ? network.chain.laneSigners.map((signer) => signer.address) : network.lanes);
  const journal = await openJournal(
    {
      chainId: homeChainId,
      walletAddress: lanesOf(home)[0],
      // The network's first ERC-20 token, as its connection would name it.
      tokenAddress: "chain" in home ? home.chain.tokenAddress : home.tokenAddress,
      severalNetworks: networks.length > 1,
    },
    { notify: endpoints.length > 0 },
  );
  const started: RunningNetwork[] = [];
  const byChain = new Map<bigint, RunningNetwork>();
  const unreachable = new Map<bigint, string>();
  const retries: { stop(): Promise<void> }[] = [];
  let retention: { stop(): Promise<void> } | undefined;
  let eviction: { stop(): Promise<void> } | undefined;
  let approvals: ApprovalDesk | undefined;
  let auditHead: AuditHeadPublisher | undefined;
  const holders = keyHoldersOf(config);
  const servedOf = servedOfNetwork;
  const outflows = new UnexpectedOutflows();
  // Where each network goes among the running ones: the configured order, whenever it starts.
  const placeOf = (chainId: bigint) => networks.findIndex((network) => servedOf(network).chainId === chainId);
  try {
    refuseUnfollowedNetworks(journal, networks.map((network) => servedOf(network).chainId));
    if (journal.addressBook.ignored.length > 0) {
      log.error(
        { addresses: journal.addressBook.ignored.slice(0, 20), ignored: journal.addressBook.ignored.length },
        "ADDRESS BOOK ENTRIES IGNORED: their rows do not check with AUDIT_KEY_FILE's key (written outside the service, or before the key was set): transfers to them wait for approval; check the audit log, then add them again",
      );
    }
    // A pause an earlier process began holds before any lane signs (see SigningPause.keepIn).
    signing.keepIn(journaledPause(journal));
    if (signing.paused) log.error({ signingPaused: signing.paused }, "SIGNING PAUSED since an earlier start (PAUSE_ON_UNEXPECTED_OUTFLOW): nothing is signed until an admin resumes with POST /wallet/resume");
    // Whether any lane is still sending a key's entry: a repeat may reach another lane, or another network.
    const several = networks.length > 1 || lanesOf(home).length > 1;
    const isSendingAnywhere = several
      ? (key: string, entry: JournalEntry) => started.some((network) => network.lanes.some((lane) => lane.transfers.isSending(key, entry)))
      : undefined;
    let dispatcher: WebhookDispatcher | undefined;
    const reports = { journal, signing, outflows, pauseOnOutflow: config.pauseOnUnexpectedOutflow, endpoints, onEvent: () => dispatcher?.wake() };
    const start = async (networkConfig: NetworkConfig, chain: ChainConnection) => {
      const view = chain.chainId === homeChainId ? journal : journal.forNetwork(chain.chainId, chain.tokenAddress);
      // With several networks, every line a network logs names it.
      const networkLog = networks.length > 1 ? log.child({ network: chain.network.name }) : log;
      const onOutflow = outflowReporter(reports, { name: chain.network.name, chainId: Number(chain.chainId) }, networkLog);
      const running = await startNetwork(networkConfig, { chain, journal: view, log: networkLog, endpoints, isSendingAnywhere, onOutflow });
      running.onRoundDone = () => dispatcher?.wake();
      started.push(running);
      started.sort((a, b) => placeOf(a.chain.chainId) - placeOf(b.chain.chainId));
      byChain.set(chain.chainId, running);
      unreachable.delete(chain.chainId);
    };
    for (const network of networks) if ("chain" in network) await start(network.config, network.chain);
    dispatcher = endpoints.length === 0 ? undefined : createWebhookDispatcher(config, journal, log, observeDelivery);
    for (const network of networks) {
      if ("chain" in network) continue;
      unreachable.set(network.served.chainId, network.unreachable);
      retries.push(startWhenReachable(network, (chain) => start(network.config, chain), (reason) => unreachable.set(network.served.chainId, reason), log));
    }
    dispatcher?.start();
    auditHead = new AuditHeadPublisher(journal, { intervalMs: config.auditHeadIntervalMs, keyed: config.auditKey !== undefined, endpoints, onEvent: () => dispatcher?.wake(), log });
    auditHead.start();
    approvals = new ApprovalDesk(journal, {
      ttlMs: config.approvalTtlHours * 3_600_000,
      holders,
      endpoints,
      onEvent: () => dispatcher?.wake(),
      // A network not running is named as configured; its tokens' symbols are then their addresses.
      eventSourceOf: (chainId) => {
        const running = byChain.get(BigInt(chainId));
        if (running) return { network: running.network, tokens: running.chain.tokens };
        const served = networks.map(servedOf).find((network) => network.chainId === BigInt(chainId));
        return { network: served ?? { ...servedOf(home), name: String(chainId), chainId: BigInt(chainId) }, tokens: [] };
      },
    });
    approvals.start((error) => log.warn({ err: error }, "could not expire the approvals past APPROVAL_TTL_HOURS; the next pass tries again"));
    retention = config.journalRetentionDays > 0 ? startRetention(config, journal, log) : undefined;
    eviction = startWorkingCopyEviction(journal, {
      forgotten: (count) => log.debug({ count }, "the working copy forgot transfers settled for good; PostgreSQL keeps them"),
      failed: (error) => log.warn({ err: error }, "the working copy could not forget transfers settled for good; the next pass tries again"),
    });
    // Gas is counted in the default network's coin (nothing while it has not been reached): another chain's is another currency.
    const activity = new TransferActivity(journal, () => byChain.get(homeChainId)?.gasSpentWei() ?? 0n, {
      onError: (error) => log.warn({ err: error }, "could not count the last hours' transfers for the console's charts; the last count stays"),
    });
    activity.start();
    return {
      journal,
      configured: networks.map(servedOf),
      networks: started,
      networkOf: (chainId) => byChain.get(BigInt(chainId)),
      unavailable: (chainId) => unreachable.get(BigInt(chainId)),
      webhooks: dispatcher && { dispatcher },
      activity,
      outflows,
      signing,
      approvals,
      auditHead,
      resumes: config.resumeNeedsSecondAdmin
        ? new SecondAdminResume(
            signing,
            (keyId, other) => holders.samePerson(keyId, other),
            async ({ askedBy, latestHash, expiresAt }) => {
              journal.recordAudit({ kind: "operator.resume_asked", actor: askedBy, detail: { latestHash, expiresAt } });
              await journal.flushed();
            },
          )
        : undefined,
      async close() {
        auditHead?.stop();
        await Promise.all(retries.map((retry) => retry.stop()));
        await approvals?.stop();
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
    auditHead?.stop();
    await Promise.all(retries.map((retry) => retry.stop()));
    await approvals?.stop();
    await retention?.stop();
    await eviction?.stop();
    await Promise.all(started.map((network) => network.stop()));
    journal.close();
    throw error;
  }
}

function servedOfNetwork(network: NetworkToStart): ServedNetwork {
  return "chain" in network ? network.chain.network : network.served;
}

/**
 * Tries a network unreachable at startup again every UNREACHABLE_RETRY_MS until it connects, then starts
 * it. Each new reason it fails for is logged once (a wrong chain id found later is a mistake to fix).
 */
function startWhenReachable(
  network: Extract<NetworkToStart, { connect: unknown }>,
  start: (chain: ChainConnection) => Promise<void>,
  onFailure: (reason: string) => void,
  log: FastifyBaseLogger,
): { stop(): Promise<void> } {
  let stopped = false;
  let wake: () => void = () => undefined;
  const loop = (async () => {
    let lastReason = network.unreachable;
    while (!stopped) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, UNREACHABLE_RETRY_MS).unref();
      });
      if (stopped) return;
      let chain: ChainConnection | undefined;
      try {
        chain = await network.connect();
        if (stopped) {
          await closeChain(chain, { signers: false });
          return;
        }
        await start(chain);
        log.info({ network: network.served.name }, "a network unreachable at startup answers now: its transfers are taken from now on");
        return;
      } catch (error) {
        if (chain) await closeChain(chain, { signers: false }).catch(() => undefined);
        const reason = (error as Error).message;
        onFailure(reason);
        if (reason !== lastReason) log.warn({ network: network.served.name, reason }, "a network still cannot be started; its transfers are answered 503 until it can");
        lastReason = reason;
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake();
      await loop;
    },
  };
}

/** Retention of the journal (JOURNAL_RETENTION_DAYS): a pass now and every hour, each told in the log. */
function startRetention(config: ChainServicesConfig, journal: TransferJournal, log: FastifyBaseLogger): { stop(): Promise<void> } {
  const archiveDir = config.journalArchiveDir ?? join(dirname(config.journalPath), "archive");
  return startJournalRetention(journal, { days: config.journalRetentionDays, archiveDir }, {
    archived: ({ transfers, auditEntries }) => {
      const retentionDays = config.journalRetentionDays;
      if (transfers.archived > 0) log.info({ archived: transfers.archived, into: transfers.into, retentionDays }, "moved settled transfers older than the retention to the archive");
      if (auditEntries.archived > 0) log.info({ archived: auditEntries.archived, into: auditEntries.into, retentionDays }, "moved audit entries older than the retention to the archive");
    },
    failed: (error) => log.error({ err: error }, "journal retention failed; nothing was deleted that is not archived, and the next pass tries again"),
  });
}
