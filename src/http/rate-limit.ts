/** The per-key rate limit, the same on the leader's app and a follower's (a follower is no way around it). */
import type { FastifyInstance, onRequestHookHandler } from "fastify";
import { ServiceError } from "../errors.js";
import { isOpenPath } from "./auth.js";
import { FixedWindowCounter } from "./fixed-window-counter.js";
import { appendOnRequest } from "./route-hooks.js";

/** A route's own limit (`config.rateLimit`), or false for none; routes without one get the service's. */
export type RouteRateLimit = false | { max: number; timeWindow: number };

declare module "fastify" {
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit;
  }
}

/**
 * RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS per API key (per address without one): past it, 429
 * RATE_LIMITED with Retry-After. Every counted answer says where its client stands (X-RateLimit-Limit,
 * -Remaining, -Reset in seconds). Register after the key check, which it counts by. Open routes are not
 * limited unless they declare a limit of their own (/ready asks the node), which is counted apart.
 */
export function registerRateLimit(app: FastifyInstance, config: { rateLimitMax: number; rateLimitWindowMs: number }): void {
  const serviceLimit = limitRequests(new FixedWindowCounter(config.rateLimitMax, config.rateLimitWindowMs));
  // Decided once per route, as it is declared; a route-level hook runs after the key check (a global one).
  app.addHook("onRoute", (route) => {
    const own = route.config?.rateLimit;
    const limit = own === undefined ? (isOpenPath(route.url) ? undefined : serviceLimit) : own && limitRequests(new FixedWindowCounter(own.max, own.timeWindow));
    if (limit) appendOnRequest(route, limit);
  });
}

function limitRequests(counter: FixedWindowCounter): onRequestHookHandler {
  return (request, reply, done) => {
    const { left, resetInMs } = counter.count(request.apiKeyId || request.ip, Date.now());
    const resetInSeconds = Math.ceil(resetInMs / 1000);
    reply.header("x-ratelimit-limit", counter.max);
    reply.header("x-ratelimit-remaining", Math.max(0, left));
    reply.header("x-ratelimit-reset", resetInSeconds);
    if (left >= 0) return done();
    reply.header("retry-after", resetInSeconds);
    done(new ServiceError("RATE_LIMITED", `more than ${counter.max} requests in ${counter.windowMs / 1000} s; retry after ${resetInMs} ms`));
  };
}
