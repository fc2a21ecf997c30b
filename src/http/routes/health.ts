/** GET /health (the process is alive) and GET /ready (it can do its job): open, for orchestrators. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { envelope } from "../error-handler.js";

/** One readiness check: undefined when it passes, else what is wrong. */
export type ReadinessCheck = () => Promise<string | undefined>;

export interface HealthRouteOptions {
  checks: Record<string, ReadinessCheck>;
}

const CheckResultsSchema = Type.Record(Type.String(), Type.String(), { description: '"ok", or what is wrong, per check' });

export const healthRoutes: FastifyPluginAsyncTypebox<HealthRouteOptions> = async (app, { checks }) => {
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
      config: { rateLimit: false },
      schema: {
        summary: "Readiness: the node answers, serves the expected chain, and the wallet can pay for gas",
        tags: ["operations"],
        operationId: "ready",
        security: [],
        response: {
          200: Type.Object({ status: Type.Literal("ready"), checks: CheckResultsSchema }),
          503: Type.Object({ statusCode: Type.Integer(), code: Type.String(), error: Type.String(), message: Type.String(), checks: CheckResultsSchema }),
        },
      },
    },
    async (_request, reply) => {
      const names = Object.keys(checks);
      const outcomes = await Promise.all(names.map((name) => checks[name]().catch(() => "the check itself failed")));
      const results = Object.fromEntries(names.map((name, index) => [name, outcomes[index] ?? "ok"]));
      const failing = names.filter((_, index) => outcomes[index] !== undefined);
      if (failing.length === 0) return { status: "ready" as const, checks: results };
      const message = `not ready: ${failing.map((name) => `${name} (${results[name]})`).join("; ")}`;
      return reply.status(503).send({ ...envelope(503, "NOT_READY", message), checks: results });
    },
  );
};
