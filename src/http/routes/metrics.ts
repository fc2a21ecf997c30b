/** GET /metrics: Prometheus text format (send the API key as a bearer token from Prometheus). */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { ServiceMetrics } from "../../metrics.js";
import { errorReplies } from "../schemas.js";

export interface MetricsRouteOptions {
  metrics: ServiceMetrics;
}

export const metricsRoute: FastifyPluginAsyncTypebox<MetricsRouteOptions> = async (app, { metrics }) => {
  app.get(
    "/metrics",
    {
      config: { rateLimit: false },
      schema: {
        summary: "Prometheus metrics",
        tags: ["operations"],
        operationId: "metrics",
        produces: ["text/plain"],
        response: { 200: Type.String({ description: "Prometheus text exposition format" }), ...errorReplies(401, 500) },
      },
    },
    async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
};
