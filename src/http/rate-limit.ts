/** The per-key rate limit, the same on the leader's app and a follower's (a follower is no way around it). */
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import { isOpenPath } from "./auth.js";
import { envelope } from "./error-handler.js";

/**
 * RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS per API key (per address without one). Register after
 * the key check, which it counts by. Open routes are left out when they are declared (an allowList would
 * be asked on every request of every route), unless they bring a limit of their own (/ready asks the node).
 */
export function registerRateLimit(app: FastifyInstance, config: { rateLimitMax: number; rateLimitWindowMs: number }): void {
  app.addHook("onRoute", (route) => {
    const ownLimit = (route.config as { rateLimit?: unknown } | undefined)?.rateLimit;
    if (isOpenPath(route.url) && !ownLimit) route.config = { ...route.config, rateLimit: false };
  });
  app.register(rateLimit, {
    global: true,
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowMs,
    keyGenerator: (request) => request.apiKeyId || request.ip,
    errorResponseBuilder: (_request, context) => ({
      ...envelope(429, "RATE_LIMITED", `more than ${context.max} requests in ${context.after}; retry after ${context.ttl} ms`),
    }),
  });
}
