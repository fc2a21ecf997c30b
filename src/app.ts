/** buildApp(config, deps): the whole HTTP service, configured the same way for the server and the tests. */
import { randomUUID } from "node:crypto";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { Logger } from "pino";
import type { ApiKeyRing } from "./auth/api-keys.js";
import type { ChainServices } from "./chain-services.js";
import { NetworkDirectory } from "./network/network-directory.js";
import type { NetworkServices } from "./network/network-services.js";
import { waitForConfirmations } from "./lookup/confirmation-wait.js";
import type { Config } from "./config.js";
import type { TransferPolicy } from "./domain/transfer-policy.js";
import { ANONYMOUS_KEY_ID, requireApiKeys } from "./http/auth.js";
import { auditRefusedControls } from "./http/refusal-audit.js";
import { registerRateLimit } from "./http/rate-limit.js";
import { lazyRequestLogger } from "./http/request-logger.js";
import { trackRequests } from "./http/request-lifecycle.js";
import { envelope, handleError } from "./http/error-handler.js";
import { OPENAPI_DOCUMENT_BASE } from "./http/openapi.js";
import { approvalRoutes } from "./http/routes/approvals.js";
import { auditRoute } from "./http/routes/audit.js";
import { addressBookRoute } from "./http/routes/address-book.js";
import type { JournalEntry } from "./journal/transfer-journal.js";
import { cancelTransferRoute } from "./http/routes/cancel-transfer.js";
import { getTransactionRoute } from "./http/routes/get-transaction.js";
import { type ReadinessCheck, healthRoutes } from "./http/routes/health.js";
import { metricsRoute } from "./http/routes/metrics.js";
import { transactionStatusRoute } from "./http/routes/transaction-status.js";
import { transferRoute } from "./http/routes/transfer.js";
import type { TransferNetwork } from "./http/transfer-network.js";
import { consoleRoute } from "./http/routes/console.js";
import { transferActivityRoute } from "./http/routes/transfer-activity.js";
import { transfersRoute } from "./http/routes/transfers.js";
import { payoutRoutes } from "./http/routes/payouts.js";
import { ServiceError } from "./errors.js";
import { signerRefusalAnswer } from "./send-path/signer-refusal.js";
import { networksRoute } from "./http/routes/networks.js";
import { walletRoute } from "./http/routes/wallet.js";
import { webhookDeliveriesRoute } from "./http/routes/webhook-deliveries.js";
import type { ServiceMetrics } from "./metrics.js";
import { type ServedToken, tokenAt } from "./network-settings/network-choice.js";

/** How often a transfer waiting for confirmations looks again (the head it sees is HEAD_MAX_AGE_MS fresh). */
const CONFIRMATION_POLL_MS = 250;

/** Requests are a few hundred bytes of JSON; anything much larger is refused before parsing. */
export const BODY_LIMIT_BYTES = 4096;

/** What the app is built from besides its configuration. */
export interface AppDependencies {
  services: ChainServices;
  /** The process logger (createLogger), shared with the chain services. */
  logger: Logger;
  metrics: ServiceMetrics;
  /** Undefined only with AUTH_DISABLED. */
  apiKeys: ApiKeyRing | undefined;
  /** The transfer policy of a token on a network (its limits are in the token's units). */
  policyOf: (network: NetworkServices, token: ServedToken) => TransferPolicy;
  readinessChecks: Record<string, ReadinessCheck>;
  /** Set when several replicas share one database (this one leads). */
  replicaId?: string;
}

export type AppConfig = Pick<Config, "rateLimitMax" | "rateLimitWindowMs" | "trustProxy" | "addressBook" | "addressBookCoolingOffHours">;

/** Builds the Fastify app with every route, auth, limits, metrics and the error envelope. Does not listen. */
export function buildApp(config: AppConfig, deps: AppDependencies) {
  const app = Fastify({
    ...serverOptions(config, deps.logger),
    // One line per request, written when it completes (trackRequests), instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // During shutdown Fastify would answer requests on open keep-alive connections with a bare 503 of its
    // own; serving them (with Connection: close) keeps every answer truthful and in our envelope.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON only: without this Fastify would also parse text/plain bodies.
  app.removeContentTypeParser("text/plain");
  // Replies are written by JSON.stringify, as ethers v5 records were: the schema-driven serializer would
  // move optional keys to the end and break the byte-for-byte v5 format. Schemas still document replies.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(envelope(404, "ROUTE_NOT_FOUND", `no route ${request.method} ${request.url.split("?")[0]}`)),
  );
  trackRequests(app, deps.logger, deps.metrics);

  // Order matters: the key is checked before the rate limit, which counts per key.
  requireApiKeys(app, deps.apiKeys);
  auditRefusedControls(app, deps.services.journal);
  registerRateLimit(app, config);
  app.register(swagger, { openapi: OPENAPI_DOCUMENT_BASE });
  app.register(swaggerUi, { routePrefix: "/docs" });

  app.register(async (routes) => {
    routes.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
    // Requests name any configured network (400 for another); one not reached since startup is answered 503.
    const directory = new NetworkDirectory(deps.services);
    registerHealthRoutes(routes, deps);
    registerMoneyRoutes(routes, deps, directory);
    registerTransactionRoutes(routes, deps, directory);
    registerReadRoutes(routes, config, deps, directory);
  });
  return app;
}

/** The network and token a request is served on, as the routes that send see it: one per token of each running network, made on first use. */
function transferNetworksOf(deps: AppDependencies): (served: { network: NetworkServices; token: ServedToken }) => TransferNetwork {
  const transferNetworks = new WeakMap<NetworkServices, Map<string, TransferNetwork>>();
  return ({ network, token }) => {
    const ofNetwork = transferNetworks.get(network) ?? new Map<string, TransferNetwork>();
    transferNetworks.set(network, ofNetwork);
    let made = ofNetwork.get(token.address);
    if (!made) {
      made = {
        network: network.network,
        token,
        transfers: network.transfers,
        tokenDecimals: tokenAt(network.chain.tokens, token.address)?.decimals ?? network.chain.tokenDecimals,
        policy: deps.policyOf(network, token),
        awaitConfirmations: (hash, wanted, timeoutMs) => waitForConfirmations(network.lookup, hash, wanted, timeoutMs, CONFIRMATION_POLL_MS),
        payoutContract: network.chain.payoutContract,
        payouts: network.payouts,
        journal: network.journal,
        eventSource: { network: network.network, tokens: network.chain.tokens },
      };
      ofNetwork.set(token.address, made);
    }
    return made;
  };
}

/** Liveness and readiness, with each endpoint's state. */
function registerHealthRoutes(routes: FastifyInstance, deps: AppDependencies): void {
  const { services } = deps;
  routes.register(healthRoutes, {
    checks: deps.readinessChecks,
    // Another network's endpoints are named with the network's name first.
    endpoints: () =>
      Object.fromEntries(
        services.networks.flatMap(({ network, chain }) =>
          Object.entries(chain.endpoints.states()).map(([endpoint, state]) => [network.chainId === services.configured[0].chainId ? endpoint : `${network.name} ${endpoint}`, state]),
        ),
      ),
  });
}

/** The routes that sign or may for a new request: transfers, payouts, approvals. */
function registerMoneyRoutes(routes: FastifyInstance, deps: AppDependencies, directory: NetworkDirectory): void {
  const { services, metrics } = deps;
  const transferNetworkOf = transferNetworksOf(deps);
  // A ServiceError of its own: a pool asks before any lane holds the request (see lane-pool.ts).
  const assertSigning = () => {
    try {
      services.signing.assertSigning();
    } catch (error) {
      throw signerRefusalAnswer(error) ?? error;
    }
  };
  // The network and token a journaled transfer was asked for on.
  const networkOfEntry = (entry: JournalEntry) => {
    const network = directory.ofEntry(entry);
    const token = tokenAt(network.network.tokens, entry.token);
    if (!token) throw new ServiceError("NETWORK_NOT_SERVED", `transfer ${entry.id} paid in token ${entry.token}, which network ${network.network.name} no longer pays in`);
    return transferNetworkOf({ network, token });
  };
  routes.register(transferRoute, {
    networkFor: (choice) => transferNetworkOf(directory.chosenWithToken(choice)),
    countOutcome: (outcome, code) => metrics.countTransfer(outcome, code),
    countUnitsSent: (units, { network, token, tokenDecimals }) => metrics.countTokensSent(Number(units) / 10 ** tokenDecimals, { network: network.name, token: token.symbol }),
    assertSigning,
    approvals: services.approvals,
  });
  routes.register(payoutRoutes, {
    networkFor: (choice) => transferNetworkOf(directory.chosenWithToken(choice)),
    networkOfEntry,
    journal: services.journal,
    assertSigning,
    approvals: services.approvals,
  });
  routes.register(approvalRoutes, { approvals: services.approvals, networkOfEntry, assertSigning });
}

/** A transaction by its hash: looked up, described, cancelled and re-priced. */
function registerTransactionRoutes(routes: FastifyInstance, deps: AppDependencies, directory: NetworkDirectory): void {
  const { services } = deps;
  // The network of a transfer of the service, found by any of its hashes: a transfer of a network no
  // longer configured is looked up as any other hash.
  const networkOfHash = async (hash: string) => {
    const entry = await services.journal.lookUpByHash(hash);
    return entry && services.configured.some((served) => served.chainId === BigInt(entry.chainId)) ? directory.ofEntry(entry) : undefined;
  };
  routes.register(getTransactionRoute, {
    networkFor: (choice) => directory.chosen(choice),
    networkOfHash: directory.several ? networkOfHash : undefined,
    journal: services.journal,
  });
  // A transfer is described, cancelled and re-priced on its own network; any other hash on the default.
  routes.register(transactionStatusRoute, {
    // One network: no journal read to find it (the reader reads the journal anyway, and refuses another chain's).
    // The default network's (503 while it has not been reached) for any other hash.
    statusesOf: directory.several ? async (hash) => ((await networkOfHash(hash)) ?? directory.chosen({})).statuses : async () => directory.chosen({}).statuses,
  });
  routes.register(cancelTransferRoute, {
    journal: services.journal,
    replacerOf: (entry) => directory.ofEntry(entry).laneOf(entry.lane)?.replacer,
    statusesOf: (entry) => directory.ofEntry(entry).statuses,
  });
}

/** The lists, the networks, and the controls of the wallet, webhooks and address book. */
function registerReadRoutes(routes: FastifyInstance, config: AppConfig, deps: AppDependencies, directory: NetworkDirectory): void {
  const { services } = deps;
  routes.register(transfersRoute, {
    journal: services.journal,
    networks: () => services.configured.map((network) => ({ network, tokens: services.networkOf(network.chainId)?.chain.tokens ?? null })),
    named: (choice) => directory.namedWithToken(choice),
    apiKeyIds: [...(deps.apiKeys?.ids ?? []), ANONYMOUS_KEY_ID],
  });
  routes.register(transferActivityRoute, { activity: services.activity });
  routes.register(networksRoute, {
    configured: () => services.configured,
    tokensOf: (served) => {
      const running = services.networkOf(served.chainId);
      return running && new Map(running.chain.tokens.map((token) => [token.address, token]));
    },
  });
  routes.register(walletRoute, { networks: services.networks, defaultChainId: services.configured[0].chainId, replicaId: deps.replicaId, outflows: services.outflows, signing: services.signing, resumes: services.resumes });
  routes.register(webhookDeliveriesRoute, { journal: services.journal, dispatcher: services.webhooks?.dispatcher });
  routes.register(auditRoute, { journal: services.journal });
  routes.register(addressBookRoute, { journal: services.journal, enforced: config.addressBook, coolingOffMs: config.addressBookCoolingOffHours * 3_600_000 });
  routes.register(metricsRoute, { metrics: deps.metrics });
  routes.register(consoleRoute);
}

/** What every app of the service shares: body limit, poisoning checks, request ids, proxies, strict input. */
export function serverOptions(config: Pick<AppConfig, "trustProxy">, logger: Logger) {
  return {
    loggerInstance: logger as FastifyBaseLogger,
    childLoggerFactory: lazyRequestLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    onProtoPoisoning: "error" as const,
    onConstructorPoisoning: "error" as const,
    requestIdHeader: "x-request-id",
    genReqId: () => randomUUID(),
    // Behind a TLS proxy or load balancer, the client's address (for the failed-key throttle, the rate
    // limit of open routes and the logs) comes from X-Forwarded-For, trusted only as far as configured.
    trustProxy: parseTrustProxy(config.trustProxy),
    // Unknown fields are refused rather than dropped, and nothing is coerced: "12" is not 12.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
  };
}

/** TRUST_PROXY: "true" (any proxy), a number of hops, or comma-separated addresses and CIDR ranges. */
export function parseTrustProxy(value: string | undefined): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  if (/^[0-9]+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return value.split(",").map((entry) => entry.trim()).filter(Boolean);
}

/** The app as buildApp returns it. */
export type App = ReturnType<typeof buildApp>;
