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
import { auditKeyOf } from "./journal/audit/audit-chain.js";
import { startJournalRetention } from "./journal/retention/journal-retention.js";
import type { JournalOwner } from "./journal/journal-records.js";
import { openSqliteJournal } from "./journal/sqlite-transfer-journal.js";
import { type JournalEntry, type TransferJournal, refuseUnfollowedNetworks } from "./journal/transfer-journal.js";
import { startWorkingCopyEviction } from "./journal/working-copy-eviction.js";
import { TransferActivity } from "./lookup/transfer-activity.js";
import { type NetworkConfig, type NetworkParts, type NetworkServices, type RunningNetwork, startNetwork } from "./network/network-services.js";
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
  const journal = await openJournal(journalOwnerOf(networks), { notify: endpoints.length > 0 });
  const roster = new NetworkRoster(networks);
  const retries: { stop(): Promise<void> }[] = [];
  let retention: { stop(): Promise<void> } | undefined;
  let eviction: { stop(): Promise<void> } | undefined;
  let approvals: ApprovalDesk | undefined;
  let auditHead: AuditHeadPublisher | undefined;
  let activity: TransferActivity | undefined;
  let dispatcher: WebhookDispatcher | undefined;
  // What runs in the background, stopped in this order, whether the start completed or failed on the way.
  const stopBackground = async () => {
    auditHead?.stop();
    await Promise.all(retries.map((retry) => retry.stop()));
    await approvals?.stop();
    await activity?.stop();
    await retention?.stop();
    await eviction?.stop();
    await Promise.all(roster.started.map((network) => network.stop()));
    await dispatcher?.stop();
  };
  const holders = keyHoldersOf(config);
  const outflows = new UnexpectedOutflows();
  try {
    refuseUnfollowedNetworks(journal, networks.map((network) => servedOfNetwork(network).chainId));
    takeOverFromEarlierStarts(journal, signing, log);
    // Whether any lane is still sending a key's entry: a repeat may reach another lane, or another network.
    const isSendingAnywhere = networks.length > 1 || lanesOf(home).length > 1 ? (key: string, entry: JournalEntry) => roster.isSending(key, entry) : undefined;
    const reports = { journal, signing, outflows, pauseOnOutflow: config.pauseOnUnexpectedOutflow, endpoints, onEvent: () => dispatcher?.wake() };
    const start = networkStarter({ journal, homeChainId, several: networks.length > 1, log, endpoints, isSendingAnywhere, reports, roster });
    for (const network of networks) if ("chain" in network) await start(network.config, network.chain);
    dispatcher = endpoints.length === 0 ? undefined : createWebhookDispatcher(config, journal, log, observeDelivery);
    for (const network of networks) if (!("chain" in network)) retries.push(retryUntilReached(network, start, roster, log));
    dispatcher?.start();
    const wake = () => dispatcher?.wake();
    auditHead = new AuditHeadPublisher(journal, { intervalMs: config.auditHeadIntervalMs, keyed: config.auditKey !== undefined, endpoints, onEvent: wake, log });
    auditHead.start();
    approvals = startApprovalDesk(config, journal, { holders, endpoints, onEvent: wake, log }, (chainId) => eventSourceOf(chainId, roster.byChain, networks));
    retention = config.journalRetentionDays > 0 ? startRetention(config, journal, log) : undefined;
    eviction = startEviction(journal, log);
    // Gas is counted in the default network's coin (nothing while it has not been reached): another chain's is another currency.
    const counted = startActivity(journal, () => roster.byChain.get(homeChainId)?.gasSpentWei() ?? 0n, log);
    activity = counted;
    return {
      journal,
      configured: networks.map(servedOfNetwork),
      networks: roster.started,
      networkOf: (chainId) => roster.byChain.get(BigInt(chainId)),
      unavailable: (chainId) => roster.unreachable.get(BigInt(chainId)),
      webhooks: dispatcher && { dispatcher },
      activity: counted,
      outflows,
      signing,
      approvals,
      auditHead,
      resumes: config.resumeNeedsSecondAdmin ? secondAdminResume(signing, holders, journal) : undefined,
      async close() {
        await stopBackground();
        // The last writes reach the store (a shared database is written after each commit) before it closes.
        await journal.flushed().catch(() => undefined);
        journal.close();
      },
    };
  } catch (error) {
    await stopBackground();
    journal.close();
    throw error;
  }
}

/** How a network is started, whether at startup or once its node answers: its view of the journal, its log, and its outflow reports. */
function networkStarter(parts: {
  journal: TransferJournal;
  homeChainId: bigint;
  several: boolean;
  log: FastifyBaseLogger;
  endpoints: readonly string[];
  isSendingAnywhere: NetworkParts["isSendingAnywhere"];
  reports: Parameters<typeof outflowReporter>[0];
  roster: NetworkRoster;
}): (networkConfig: NetworkConfig, chain: ChainConnection) => Promise<void> {
  const { journal, log, endpoints, isSendingAnywhere, reports, roster } = parts;
  return async (networkConfig, chain) => {
    const view = chain.chainId === parts.homeChainId ? journal : journal.forNetwork(chain.chainId, chain.tokenAddress);
    // With several networks, every line a network logs names it.
    const networkLog = parts.several ? log.child({ network: chain.network.name }) : log;
    const onOutflow = outflowReporter(reports, { name: chain.network.name, chainId: Number(chain.chainId) }, networkLog);
    const running = await startNetwork(networkConfig, { chain, journal: view, log: networkLog, endpoints, isSendingAnywhere, onOutflow });
    running.onRoundDone = reports.onEvent;
    roster.add(running);
  };
}

/** A network unreachable at startup, on the roster with its reason, tried again until it starts. */
function retryUntilReached(network: Extract<NetworkToStart, { connect: unknown }>, start: ReturnType<typeof networkStarter>, roster: NetworkRoster, log: FastifyBaseLogger): { stop(): Promise<void> } {
  roster.unreachable.set(network.served.chainId, network.unreachable);
  return startWhenReachable(network, (chain) => start(network.config, chain), (reason) => roster.unreachable.set(network.served.chainId, reason), log);
}

/** The networks that run, in the configured order whenever each starts, and why each other does not run yet. */
class NetworkRoster {
  readonly started: RunningNetwork[] = [];
  readonly byChain = new Map<bigint, RunningNetwork>();
  readonly unreachable = new Map<bigint, string>();

  readonly #networks: readonly NetworkToStart[];

  constructor(networks: readonly NetworkToStart[]) {
    this.#networks = networks;
  }

  add(running: RunningNetwork): void {
    this.started.push(running);
    this.started.sort((a, b) => this.#placeOf(a.chain.chainId) - this.#placeOf(b.chain.chainId));
    this.byChain.set(running.chain.chainId, running);
    this.unreachable.delete(running.chain.chainId);
  }

  /** Whether any lane of any running network is still sending a key's entry. */
  isSending(key: string, entry: JournalEntry): boolean {
    return this.started.some((network) => network.lanes.some((lane) => lane.transfers.isSending(key, entry)));
  }

  #placeOf(chainId: bigint): number {
    return this.#networks.findIndex((network) => servedOfNetwork(network).chainId === chainId);
  }
}

/** The working copy's eviction of transfers settled for good (a shared database keeps them). */
function startEviction(journal: TransferJournal, log: FastifyBaseLogger): { stop(): Promise<void> } {
  return startWorkingCopyEviction(journal, {
    forgotten: (count) => log.debug({ count }, "the working copy forgot transfers settled for good; PostgreSQL keeps them"),
    failed: (error) => log.warn({ err: error }, "the working copy could not forget transfers settled for good; the next pass tries again"),
  });
}

/** The last hours of transfers and gas, tallied in the background for the console's charts. */
function startActivity(journal: TransferJournal, gasSpentWei: () => bigint, log: FastifyBaseLogger): TransferActivity {
  const activity = new TransferActivity(journal, gasSpentWei, {
    onError: (error) => log.warn({ err: error }, "could not count the last hours' transfers for the console's charts; the last count stays"),
  });
  activity.start();
  return activity;
}

/** The journal's owner: the default network's first wallet and token, from the configuration when its node has not answered yet. */
function journalOwnerOf(networks: readonly NetworkToStart[]): JournalOwner {
  const [home] = networks;
  return {
    chainId: servedOfNetwork(home).chainId,
    walletAddress: "chain" in home ? home.chain.laneSigners[0].address : home.lanes[0],
    // The network's first ERC-20 token, as its connection would name it.
    tokenAddress: "chain" in home ? home.chain.tokenAddress : home.tokenAddress,
    severalNetworks: networks.length > 1,
  };
}

/** What an earlier process left that holds before any lane signs: a signing pause, and address book rows that do not check. */
function takeOverFromEarlierStarts(journal: TransferJournal, signing: SigningPause, log: FastifyBaseLogger): void {
  if (journal.addressBook.ignored.length > 0) {
    log.error(
      { addresses: journal.addressBook.ignored.slice(0, 20), ignored: journal.addressBook.ignored.length },
      "ADDRESS BOOK ENTRIES IGNORED: their rows do not check with AUDIT_KEY_FILE's key (written outside the service, or before the key was set): transfers to them wait for approval; check the audit log, then add them again",
    );
  }
  // A pause an earlier process began holds before any lane signs (see SigningPause.keepIn).
  signing.keepIn(journaledPause(journal));
  if (signing.paused) log.error({ signingPaused: signing.paused }, "SIGNING PAUSED since an earlier start (PAUSE_ON_UNEXPECTED_OUTFLOW): nothing is signed until an admin resumes with POST /wallet/resume");
}

/** Transfers above APPROVAL_ABOVE wait here for a second admin key; those past APPROVAL_TTL_HOURS expire in the background. */
function startApprovalDesk(
  config: ChainServicesConfig,
  journal: TransferJournal,
  { holders, endpoints, onEvent, log }: { holders: ReturnType<typeof keyHoldersOf>; endpoints: readonly string[]; onEvent: () => void; log: FastifyBaseLogger },
  eventSourceOf: ConstructorParameters<typeof ApprovalDesk>[1]["eventSourceOf"],
): ApprovalDesk {
  const approvals = new ApprovalDesk(journal, { ttlMs: config.approvalTtlHours * 3_600_000, holders, endpoints, onEvent, eventSourceOf });
  approvals.start((error) => log.warn({ err: error }, "could not expire the approvals past APPROVAL_TTL_HOURS; the next pass tries again"));
  return approvals;
}

/** How a chain's events name their network: a network not running is named as configured; its tokens' symbols are then their addresses. */
function eventSourceOf(chainId: number | bigint, byChain: ReadonlyMap<bigint, RunningNetwork>, networks: readonly NetworkToStart[]) {
  const running = byChain.get(BigInt(chainId));
  if (running) return { network: running.network, tokens: running.chain.tokens };
  const served = networks.map(servedOfNetwork).find((network) => network.chainId === BigInt(chainId));
  return { network: served ?? { ...servedOfNetwork(networks[0]), name: String(chainId), chainId: BigInt(chainId) }, tokens: [] };
}

/** RESUME_NEEDS_SECOND_ADMIN: one admin asks (on record in the audit log before it stands), another person's admin key confirms. */
function secondAdminResume(signing: SigningPause, holders: ReturnType<typeof keyHoldersOf>, journal: TransferJournal): SecondAdminResume {
  return new SecondAdminResume(
    signing,
    (keyId, other) => holders.samePerson(keyId, other),
    async ({ askedBy, latestHash, expiresAt }) => {
      journal.recordAudit({ kind: "operator.resume_asked", actor: askedBy, detail: { latestHash, expiresAt } });
      await journal.flushed();
    },
  );
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
