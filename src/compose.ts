/**
 * Puts the service together from a configuration whose chain is known: node connection, chain services,
 * API keys, transfer policy, metrics, readiness checks and the app. server.ts, the tests and the
 * benchmarks all start the service through here, so none of them runs a differently wired one.
 */
import type { Logger } from "pino";
import { type App, buildApp } from "./app.js";
import { ApiKeyRing } from "./auth/api-keys.js";
import { type ChainServices, type JournalOpener, type NetworkToStart, startChainServices } from "./chain-services.js";
import type { NetworkServices } from "./network/network-services.js";
import { type ChainConnection, NodeUnreachableError, tokensOf, checkNode, closeChain, connectChain, openSigners, rpcWatchers } from "./node/connect-chain.js";
import { NATIVE_TOKEN, type ServedNetwork, type ServedToken, servedNetworkOf, tokenAt } from "./network-settings/network-choice.js";
import { getAddress } from "ethers";
import { type ChainConfig, type DeploymentConfig, settingsForAudit } from "./config.js";
import { approvalKeysProblem } from "./approvals/settings.js";
import { ConfigError } from "./settings/settings-part.js";
import { InvalidAddressError, parseRecipientAddress } from "./domain/recipient-address.js";
import { InvalidAmountError, parseTokenAmount } from "./domain/token-amount.js";
import { TransferPolicy, type TransferPolicyLimits } from "./domain/transfer-policy.js";
import type { ReadinessCheck } from "./http/routes/health.js";
import { type LaneReadings, ServiceMetrics, type WalletReadings } from "./metrics.js";
import { ServiceError } from "./errors.js";
import { tokenBalanceOf, transferGasCost } from "./send-path/wallet-snapshot.js";
import { isJammed, readUnconfirmedTransfers } from "./send-path/unconfirmed-transfers.js";
import { steadyWallClockNow } from "./clock.js";
import { SigningPause, pausableSigner } from "./signers/signing-pause.js";
import type { WalletSigner } from "./signers/wallet-signer.js";
import { paysWithoutApproval } from "./journal/approvals/address-book.js";
import { keyHoldersOf } from "./auth/key-holders.js";

const DAY_MS = 86_400_000;
/** A failing gas check reads the balances again when they are older than this. */
const GAS_RECHECK_MAX_AGE_MS = 5_000;

/** A replica that leads several on one database: its journal lives there, and its answers name it. */
export interface LeadingReplica {
  id: string;
  openJournal: JournalOpener;
  /** Readiness of the database session the leader writes on. */
  checkDatabase: ReadinessCheck;
}

export interface RunningService {
  app: App;
  /** The default network's connection made at startup; undefined when its node had not answered then (several networks only). */
  chain: ChainConnection | undefined;
  services: ChainServices;
  metrics: ServiceMetrics;
  /** Closes the app (finishing requests in flight), then background work, the journal and the node connection. */
  close(): Promise<void>;
}

/**
 * Connects every network (one set of signers serves them all), reconciles and builds the app; does not
 * listen. Throws ConfigError for a bad policy variable.
 */
export async function composeService(config: DeploymentConfig, logger: Logger, replica?: LeadingReplica): Promise<RunningService> {
  const metrics = new ServiceMetrics();
  const watchers = rpcWatchers(logger, metrics.observeRpc);
  const networkConfigs = [config, ...(config.otherNetworks ?? [])];
  // Every signature goes through the pause: an unexpected outflow can stop them all (PAUSE_ON_UNEXPECTED_OUTFLOW).
  const signing = new SigningPause();
  const signers = (await openSigners(config.signers)).map((signer) => pausableSigner(signer, signing));
  const chains: ChainConnection[] = [];
  let services: ChainServices | undefined;
  const closeChains = async () => {
    // A network that joined after startup connected itself: its connection is closed here too.
    const joined = services?.networks.map((network) => network.chain).filter((connected) => !chains.includes(connected)) ?? [];
    for (const connected of [...chains, ...joined]) await closeChain(connected, { signers: false });
    await Promise.all(signers.map((signer) => signer.close()));
  };
  try {
    const networks = await connectNetworks(config, { watchers, signers, logger, connected: chains });
    const [home] = networks;
    const chain = "chain" in home ? home.chain : undefined;
    // Every reached network's limits are checked before anything starts: a limit a token cannot hold stops
    // the start before the journal is opened or anything is sent.
    for (const [index, network] of networks.entries()) {
      if ("chain" in network) for (const token of network.chain.tokens) policyLimitsOf(networkConfigs[index], network.chain, token);
    }
    services = await startChainServices(config, networks, logger, signing, (outcome) => metrics.countWebhookDelivery(outcome), replica?.openJournal);
    // What this process runs with, in the audit log (secrets only as set): a change of settings is on record.
    services.journal.recordAudit({ kind: "service.started", actor: null, detail: { replica: replica?.id ?? null, settings: settingsForAudit(config) } });
    await services.journal.flushed();
    if (replica) metrics.watchReplica(replica.id, () => true);
    const policyOf = transferPolicies(config);
    for (const network of services.networks) for (const token of network.network.tokens) policyOf(network, token);
    watchServices(metrics, services, signing);
    const running = services;
    const app = buildApp(config, {
      services,
      logger,
      metrics,
      apiKeys: config.authDisabled ? undefined : ApiKeyRing.parse(config.apiKeys ?? ""),
      policyOf,
      readinessChecks: { ...readinessChecks(services), ...(replica && { database: replica.checkDatabase }) },
      replicaId: replica?.id,
    });
    return {
      app,
      chain,
      services,
      metrics,
      async close() {
        await app.close();
        await running.close();
        await closeChains();
      },
    };
  } catch (error) {
    await services?.close();
    await closeChains();
    throw error;
  }
}

/** Every network's connection or its unreached start, the default first; `connected` collects the connections made, for the caller to close. */
async function connectNetworks(
  config: DeploymentConfig,
  { watchers, signers, logger, connected: chains }: { watchers: ReturnType<typeof rpcWatchers>; signers: WalletSigner[]; logger: Logger; connected: ChainConnection[] },
): Promise<NetworkToStart[]> {
  const networkConfigs = [config, ...(config.otherNetworks ?? [])];
  const networks: NetworkToStart[] = [];
  for (const [index, networkConfig] of networkConfigs.entries()) {
    try {
      const connected = await connectChain(networkConfig, watchers, signers);
      chains.push(connected);
      networks.push({ config: networkConfig, chain: connected });
    } catch (error) {
      // A network with a wrong setting is a mistake to fix now; one whose node does not answer must not stop
      // the rest: it joins once it answers. With several networks that holds for the default too (the file
      // names its chain id, so the journal opens without its node); one network alone stops the start.
      if ((index === 0 && !config.otherNetworks?.length) || !(error instanceof NodeUnreachableError)) throw error;
      logger.warn({ network: networkConfig.served?.network, reason: error.message }, "a network's node cannot be reached: its transfers are answered 503 until it can; the others start");
      // A network besides the default comes from NETWORKS_FILE, which always names its chain id.
      const tokens = networkConfig.tokens?.map(({ symbol, address }) => ({ symbol, address: address === NATIVE_TOKEN ? address : getAddress(address.toLowerCase()) }));
      const tokenAddress = getAddress(networkConfig.tokenAddress.toLowerCase());
      const served = servedNetworkOf(networkConfig.served, { chainId: BigInt(networkConfig.chainId as number), tokenAddress, tokens });
      const lanes = signers.map((signer) => signer.address);
      networks.push({ config: networkConfig, served, lanes, tokenAddress, connect: () => connectChain(networkConfig, watchers, signers), unreachable: error.message });
    }
  }
  return networks;
}

/**
 * Each token's transfer policy on each network. Its limits are in the token's own units; the per-key cap
 * counts what was spent in that token there.
 */
function transferPolicies(config: DeploymentConfig): (network: NetworkServices, token: ServedToken) => TransferPolicy {
  const networkConfigs = [config, ...(config.otherNetworks ?? [])];
  // Made when a network is first used: one that joins later has no decimals before, and a limit its token
  // cannot hold keeps its transfers refused (503), as the start would have been.
  const policies = new Map<string, TransferPolicy>();
  // APPROVAL_ABOVE_PER_DAY counts what a person's keys sent together (API_KEY_HOLDERS).
  const holders = keyHoldersOf(config);
  return (network: NetworkServices, token: ServedToken) => {
    const key = `${network.chain.chainId}:${token.address.toLowerCase()}`;
    let policy = policies.get(key);
    if (!policy) {
      const networkConfig = networkConfigs.find((candidate) => candidate.chainId !== undefined && BigInt(candidate.chainId) === network.chain.chainId) ?? config;
      let limits: TransferPolicyLimits;
      try {
        limits = policyLimitsOf(networkConfig, network.chain, token);
      } catch (error) {
        if (error instanceof ConfigError) throw new ServiceError("NETWORK_UNAVAILABLE", `network ${network.network.name} cannot take transfers in ${token.symbol}: ${error.message}`);
        throw error;
      }
      // ADDRESS_BOOK: one book for every network, read from memory.
      const book = config.addressBook ? network.journal.addressBook : undefined;
      const paysWithoutApprovalNow = book && ((recipient: string) => paysWithoutApproval(book, recipient, steadyWallClockNow()));
      policy = new TransferPolicy({ ...limits, paysWithoutApproval: paysWithoutApprovalNow, personOf: (apiKeyId) => holders.identityOf(apiKeyId) }, network.journal.forNetwork(network.chain.chainId, token.address).spentSince(steadyWallClockNow() - DAY_MS));
      policies.set(key, policy);
    }
    return policy;
  };
}

/** The metrics that read the running service at each scrape: every running network's, so a network that joins later is in the next one. */
function watchServices(metrics: ServiceMetrics, running: ChainServices, signing: SigningPause): void {
  const { journal } = running;
  metrics.watchWallets(() => running.networks.map(walletReadingsOf));
  metrics.watchLanes(() => running.networks.flatMap(laneReadingsOf));
  metrics.watchEndpoints(() => running.networks.map(({ network, chain: connected }) => ({ network: network.name, reports: connected.endpoints.reports() })));
  metrics.watchJournal(() => journal.failure === undefined);
  if (running.webhooks) metrics.watchWebhooks(() => journal.deliveryBacklog());
  metrics.watchOutflows(() => running.outflows.counts());
  metrics.watchSigningPause(() => signing.paused !== undefined);
  metrics.watchAuditHead(() => running.auditHead.published);
}

/**
 * The limits of `token` on the network `chain` is connected to: its own in NETWORKS_FILE, else the
 * variables'; ConfigError, naming the setting, for a limit the token's decimals cannot hold.
 */
function policyLimitsOf(networkConfig: ChainConfig, chain: ChainConnection, token: ServedToken): TransferPolicyLimits {
  const own = tokenAt(networkConfig.tokens ?? [], token.address);
  const decimals = tokenAt(chain.tokens, token.address)?.decimals ?? chain.tokenDecimals;
  const place = `NETWORKS_FILE networks "${chain.network.name}" tokens.${token.symbol}`;
  const names = {
    max: own?.maxTransferAmount === undefined ? "MAX_TRANSFER_AMOUNT" : `${place}.maxTransferAmount`,
    cap: own?.transferCapPerDay === undefined ? "TRANSFER_CAP_PER_DAY" : `${place}.transferCapPerDay`,
    approval: own?.approvalAbove === undefined ? "APPROVAL_ABOVE" : `${place}.approvalAbove`,
    approvalPerDay: own?.approvalAbovePerDay === undefined ? "APPROVAL_ABOVE_PER_DAY" : `${place}.approvalAbovePerDay`,
  };
  const limits = readPolicyLimits(
    {
      ...networkConfig,
      maxTransferAmount: own?.maxTransferAmount ?? networkConfig.maxTransferAmount,
      transferCapPerDay: own?.transferCapPerDay ?? networkConfig.transferCapPerDay,
      approvalAbove: own?.approvalAbove ?? networkConfig.approvalAbove,
      approvalAbovePerDay: own?.approvalAbovePerDay ?? networkConfig.approvalAbovePerDay,
    },
    decimals,
    names,
  );
  return { ...limits, unit: { symbol: token.symbol, decimals } };
}

function readPolicyLimits(config: ChainConfig, decimals: number, names: { max: string; cap: string; approval: string; approvalPerDay: string }): TransferPolicyLimits {
  const inUnits = (variable: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    try {
      return parseTokenAmount(value, decimals);
    } catch (error) {
      if (error instanceof InvalidAmountError) throw new ConfigError(`${variable}: ${error.message}`);
      throw error;
    }
  };
  const recipients = config.allowedRecipients?.split(",").map((entry) => entry.trim()).filter(Boolean);
  const approvalAboveUnits = inUnits(names.approval, config.approvalAbove);
  const approvalAbovePerPeriodUnits = inUnits(names.approvalPerDay, config.approvalAbovePerDay);
  // Also for a token's own approvalAbove in NETWORKS_FILE, which the variables' check does not see.
  const keysProblem = approvalAboveUnits === undefined && approvalAbovePerPeriodUnits === undefined ? undefined : approvalKeysProblem({ apiKeys: config.apiKeys, authDisabled: config.authDisabled });
  if (keysProblem) throw new ConfigError(`${approvalAboveUnits === undefined ? names.approvalPerDay : names.approval}: ${keysProblem}`);
  return {
    maxUnitsPerTransfer: inUnits(names.max, config.maxTransferAmount),
    capUnitsPerPeriod: inUnits(names.cap, config.transferCapPerDay),
    approvalAboveUnits,
    approvalAbovePerPeriodUnits,
    periodMs: DAY_MS,
    allowedRecipients: recipients && new Set(recipients.map((address) => checkedRecipient(address))),
  };
}

function checkedRecipient(address: string): string {
  try {
    return parseRecipientAddress(address);
  } catch (error) {
    if (error instanceof InvalidAddressError) throw new ConfigError(`ALLOWED_RECIPIENTS: ${address}: ${error.message}`);
    throw error;
  }
}

/**
 * Every network's checks, and the journal's: the default network's under their own names (node, chainId,
 * journal, gas, as a service of one network has always answered), another's prefixed with its name (one
 * that does not run yet fails its node check, saying why).
 */
function readinessChecks(services: ChainServices): Record<string, ReadinessCheck> {
  const journal: ReadinessCheck = async () => (services.journal.failure ? "the transfer journal failed to commit and records nothing until the service is restarted" : undefined);
  const ofNetwork = (served: ServedNetwork) => {
    let checks: ReturnType<typeof networkReadinessChecks> | undefined;
    const ofRunning = (name: keyof ReturnType<typeof networkReadinessChecks>): ReadinessCheck => async () => {
      const running = services.networkOf(served.chainId);
      if (!running) return name === "node" ? `not started: ${services.unavailable(served.chainId) ?? "starting"}` : undefined;
      checks ??= networkReadinessChecks(running);
      return checks[name]();
    };
    return { node: ofRunning("node"), chainId: ofRunning("chainId"), gas: ofRunning("gas") };
  };
  const [home, ...others] = services.configured;
  const { node, chainId, gas } = ofNetwork(home);
  const prefixed = others.flatMap((served) => Object.entries(ofNetwork(served)).map(([name, check]) => [`${served.name}.${name}`, check] as const));
  return { node, chainId, journal, gas, ...Object.fromEntries(prefixed) };
}

function networkReadinessChecks(services: NetworkServices): { node: ReadinessCheck; chainId: ReadinessCheck; gas: ReadinessCheck } {
  const { chain } = services;
  return {
    node: () => checkNode(chain.endpoints, services.head),
    chainId: async () => {
      const served = BigInt(await chain.provider.send("eth_chainId", []));
      return served === chain.chainId ? undefined : `the node now serves chain ${served}, expected ${chain.chainId}`;
    },
    gas: async () => {
      // A pool is ready while any of its wallets can pay.
      const canPay = () => services.lanes.some(({ ledger }) => ledger.snapshot.ethBalance >= transferGasCost(ledger.snapshot));
      // An idle service reads balances only on demand: a wallet that looks short is read again, so that a
      // top-up takes it back into rotation.
      if (!canPay()) await Promise.all(services.lanes.map((lane) => lane.ensureSnapshot(GAS_RECHECK_MAX_AGE_MS)));
      // The balance itself is for GET /wallet (behind an API key), not for an open route.
      const who = services.lanes.length > 1 ? "no wallet of the pool can" : "the wallet cannot";
      return canPay() ? undefined : `${who} pay the gas of one more transfer at the current fees`;
    },
  };
}

/** What a network's wallet gauges read: its first lane, "the wallet". */
function walletReadingsOf(network: NetworkServices): WalletReadings {
  const { ledger, submitter, journal, replacer } = network;
  return {
    network: network.network.name,
    ethBalanceWei: () => ledger.snapshot.ethBalance,
    tokens: tokensOf(network.chain).map((token) => ({ token: token.symbol, decimals: token.decimals, balanceUnits: () => tokenBalanceOf(ledger.snapshot, network.chain, token) })),
    transfersInFlight: () => Math.max(ledger.unminedCount, submitter.inFlightCount),
    gasCostPerTransferWei: () => transferGasCost(ledger.snapshot),
    unconfirmed: () => {
      const unconfirmed = readUnconfirmedTransfers(journal);
      return { oldestAgeSeconds: unconfirmed.oldest?.ageSeconds ?? 0, stuck: unconfirmed.stuck, jammed: isJammed(unconfirmed, ledger.snapshot.minedNonceCount) };
    },
    atFeeCap: () => replacer.stuckAtCap.length,
    feesOfDay: () => ({ spentWei: network.feeBudget.spentTodayWei(), budgetWei: network.feeBudget.budgetWei }),
  };
}

/** What the gauges of each of a network's lanes read. */
function laneReadingsOf(network: NetworkServices): LaneReadings[] {
  return network.lanes.map((lane) => ({
    network: network.network.name,
    address: lane.address,
    tokenDecimals: network.chain.tokenDecimals,
    ethBalanceWei: () => lane.ledger.snapshot.ethBalance,
    tokenBalanceUnits: () => lane.ledger.snapshot.tokenBalance,
    transfersInFlight: () => lane.ledger.unminedCount,
    jammed: () => isJammed(readUnconfirmedTransfers(lane.journal), lane.ledger.snapshot.minedNonceCount),
    hold: lane.hold,
    gasSpentWei: lane.gasSpentWei,
    gasTopUps: () => network.topUps?.sentTo(lane.address) ?? 0,
    unexplainedNonces: () => lane.unexplainedNonces.count,
  }));
}
