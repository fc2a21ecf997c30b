/** GET /health (the process is alive) and GET /ready (it can do its job): open, for orchestrators. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { monotonicNow } from "../../clock.js";
import { envelope } from "../error-handler.js";

/** One readiness check: undefined when it passes, else what is wrong. */
export type ReadinessCheck = () => Promise<string | undefined>;

export interface HealthRouteOptions {
  checks: Record<string, ReadinessCheck>;
  /** The RPC endpoints by host: "in" (in rotation) or why one is left out. Readiness needs one in rotation (the node check). */
  endpoints: () => Record<string, string>;
}

/**
 * /ready is open (orchestrators call it without a key), so anyone can call it as often as they like: its
 * answer is worked out at most once per this interval, concurrent callers sharing it, and each address
 * may ask READY_REQUESTS_PER_MINUTE times. A paid RPC quota cannot be burnt through it.
 */
export const READINESS_CACHE_MS = 1_000;
const READY_REQUESTS_PER_MINUTE = 120;

interface Readiness {
  results: Record<string, string>;
  failing: string[];
}

const CheckResultsSchema = Type.Record(Type.String(), Type.String(), { description: '"ok", or what is wrong, per check' });
const EndpointStatesSchema = Type.Record(Type.String(), Type.String(), {
  description: 'each RPC endpoint (protocol and host): "in" while in rotation, else why it is left out; the service is ready while one is in',
});

export const healthRoutes: FastifyPluginAsyncTypebox<HealthRouteOptions> = async (app, { checks, endpoints }) => {
  const names = Object.keys(checks);
  let cached: { readiness: Promise<Readiness>; at: number } | undefined;
  const evaluate = async (): Promise<Readiness> => {
    const outcomes = await Promise.all(names.map((name) => checks[name]().catch(() => "the check itself failed")));
    const results = Object.fromEntries(names.map((name, index) => [name, outcomes[index] ?? "ok"]));
    return { results, failing: names.filter((_, index) => outcomes[index] !== undefined) };
  };
  const readiness = (): Promise<Readiness> => {
    if (!cached || monotonicNow() - cached.at > READINESS_CACHE_MS) cached = { readiness: evaluate(), at: monotonicNow() };
    return cached.readiness;
  };

  app.get(
    "/health",
    {
      config: { rateLimit: false },
      schema: {
        summary: "Liveness: the process answers",
        tags: ["operations"],
        operationId: "health",
        security: [],
        response: { 200: Type.Object({ status: Type.Literal("ok") }) },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/ready",
    {
      config: { rateLimit: { max: READY_REQUESTS_PER_MINUTE, timeWindow: 60_000 } },
      schema: {
        summary: "Readiness: the node answers, serves the expected chain, the journal records, and the wallet can pay for gas",
        description: `Worked out at most once per ${READINESS_CACHE_MS} ms, whoever asks; at most ${READY_REQUESTS_PER_MINUTE} requests per minute per address.`,
        tags: ["operations"],
        operationId: "ready",
        security: [],
        response: {
          200: Type.Object({ status: Type.Literal("ready"), checks: CheckResultsSchema, endpoints: EndpointStatesSchema }),
          503: Type.Object({
            statusCode: Type.Integer(),
            code: Type.String(),
            error: Type.String(),
            message: Type.String(),
            checks: CheckResultsSchema,
            endpoints: EndpointStatesSchema,
          }),
        },
      },
    },
    async (_request, reply) => {
      const { results, failing } = await readiness();
      if (failing.length === 0) return { status: "ready" as const, checks: results, endpoints: endpoints() };
      const message = `not ready: ${failing.map((name) => `${name} (${results[name]})`).join("; ")}`;
      return reply.status(503).send({ ...envelope(503, "NOT_READY", message), checks: results, endpoints: endpoints() });
    },
  );
};
