/**
 * The app of a replica that does not lead. It looks transactions up itself (its own node connection and
 * cache, the journal read from the database) and answers /health, /ready and /metrics for itself; every
 * other request (transfers, cancels, status documents, /wallet, webhook operations) is the leader's to
 * answer, and is forwarded to it.
 */
import { type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyRequest } from "fastify";
import type { Logger } from "pino";
import { type AppConfig, serverOptions } from "../app.js";
import type { ApiKeyRing } from "../auth/api-keys.js";
import { ROLE_CHECKED_BY_LEADER, requireApiKeys } from "../http/auth.js";
import { registerRateLimit } from "../http/rate-limit.js";
import { envelope, handleError } from "../http/error-handler.js";
import { type SeveralAttemptsFinder, getTransactionRoute } from "../http/routes/get-transaction.js";
import { type ReadinessCheck, healthRoutes } from "../http/routes/health.js";
import { PAYOUT_BODY_LIMIT_BYTES } from "../http/routes/payouts.js";
import { metricsRoute } from "../http/routes/metrics.js";
import type { TransactionLookup } from "../lookup/transaction-lookup.js";
import { type ServedNetwork, chooseNetwork } from "../network-settings/network-choice.js";
import type { ServiceMetrics } from "../metrics.js";
import { FORWARDED_MARK, type LeaderDirectory, forwardToLeader, refuseForwarded } from "./forward-to-leader.js";

export interface FollowerAppDependencies {
  replicaId: string;
  logger: Logger;
  metrics: ServiceMetrics;
  apiKeys: ApiKeyRing | undefined;
  /** The default network: the one this replica connects to and looks transactions up on. */
  network: ServedNetwork;
  /**
   * With several networks: whether a lookup is another network's (it names one, or the journal knows the
   * hash as another network's transfer); the leader, connected to every network, answers those.
   */
  isAnotherNetworks?: (body: { Tx: string; network?: string | number }) => Promise<boolean>;
  lookup: TransactionLookup;
  attempts: SeveralAttemptsFinder;
  readinessChecks: Record<string, ReadinessCheck>;
  /** The RPC endpoints' states, for /ready. */
  endpointStates: () => Record<string, string>;
  leaders: LeaderDirectory;
}

const FORWARDED_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** The routes a follower forwards to the leader: a request forwarded to it for one of them is refused (MISDIRECTED). */
const LEADERS_ONLY: ReadonlySet<string> = new Set(["/wallet", "/*"]);

export function buildFollowerApp(config: Pick<AppConfig, "rateLimitMax" | "rateLimitWindowMs" | "trustProxy">, deps: FollowerAppDependencies) {
  const app = Fastify(serverOptions(config, deps.logger)).withTypeProvider<TypeBoxTypeProvider>();
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(handleError);
  // The body is forwarded as its very bytes (a JSON number re-printed could change an amount), and parsed
  // for the routes answered here.
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser(["application/json", "text/plain"]);
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    (request as FastifyRequest & { rawBody?: string }).rawBody = body as string;
    parseJson(request, body as string, done);
  });
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    done();
  });
  // As on the leader: the key first, then the rate limit, which counts per key.
  requireApiKeys(app, deps.apiKeys);
  // A request another replica forwarded here, for what only the leader does, is refused before the rate
  // limit: the forwarder tries again until the next leader answers, and each hop counted here spent its
  // client's limit on a replica that did nothing for it (a burst during a takeover was answered 429).
  app.addHook("onRequest", async (request, reply) => {
    if (request.headers[FORWARDED_MARK] && LEADERS_ONLY.has(request.routeOptions.url ?? "")) return refuseForwarded(reply);
  });
  registerRateLimit(app, config);

  // Declared inside a plugin, so that the rate limit (registered above) applies to them.
  app.register(async (routes) => {
    routes.register(healthRoutes, { checks: deps.readinessChecks, endpoints: deps.endpointStates });
    routes.register(metricsRoute, { metrics: deps.metrics });
    // Lookups on the default network: a follower connects to that one only (several networks: see docs/networks.md).
    const home = [{ network: deps.network, lookup: deps.lookup }];
    const { isAnotherNetworks } = deps;
    if (isAnotherNetworks) {
      routes.addHook("preHandler", async (request, reply) => {
        if (request.routeOptions.url !== "/getTransaction" || request.headers[FORWARDED_MARK]) return;
        if (await isAnotherNetworks(request.body as { Tx: string; network?: string | number })) {
          await forwardToLeader(request, reply, deps.leaders);
          return reply;
        }
      });
    }
    routes.register(getTransactionRoute, { networkFor: (choice) => chooseNetwork(home, choice).chosen, journal: deps.attempts });
    // /wallet is the leader's view of the wallet; which replica answered is this one.
    routes.get("/wallet", { schema: { hide: true }, config: ROLE_CHECKED_BY_LEADER }, async (request, reply) =>
      forwardToLeader(request, reply, deps.leaders, (body) => JSON.stringify({ ...JSON.parse(body), replica: { id: deps.replicaId, leads: false } })),
    );
    routes.route({
      method: [...FORWARDED_METHODS],
      url: "/*",
      // The leader checks each route's own limit; a payout batch is the largest body any route takes.
      bodyLimit: PAYOUT_BODY_LIMIT_BYTES,
      schema: { hide: true },
      config: ROLE_CHECKED_BY_LEADER,
      handler: async (request, reply) => forwardToLeader(request, reply, deps.leaders),
    });
  });
  app.setNotFoundHandler((request, reply) => reply.status(404).send(envelope(404, "ROUTE_NOT_FOUND", `no route ${request.method} ${request.url.split("?")[0]}`)));
  return app;
}
