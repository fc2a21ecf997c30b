/** The per-key rate limit, the same on the leader's app and a follower's (a follower is no way around it). */
import type { FastifyInstance, onRequestHookHandler } from "fastify";
import { ServiceError } from "../errors.js";
import { isOpenPath } from "./auth.js";
import { appendOnRequest } from "./route-hooks.js";

/** A route's own limit (`config.rateLimit`), or false for none; routes without one get the service's. */
export type RouteRateLimit = false | { max: number; timeWindow: number };

declare module "fastify" {
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit;
  }
}

/** Clients counted at once per limit; past this, windows that ended are dropped, then the oldest. */
const TRACKED_CLIENTS = 10_000;

/** Where a client stands after a request was counted. */
export interface WindowCount {
  /** Requests left in the window; negative once over the limit. */
  left: number;
  /** Milliseconds until the window ends and the count starts again. */
  resetInMs: number;
}

/**
 * Counts requests per client in fixed windows, each starting at the client's first request after the last
 * one ended. Synchronous and in memory: it runs on every request, which a promise per request would slow.
 */
export class FixedWindowCounter {
  readonly #windows = new Map<string, { count: number; endsAt: number }>();

  constructor(
    readonly max: number,
    readonly windowMs: number,
  ) {}

  /** Counts one request of `client` at `now`. */
  count(client: string, now: number): WindowCount {
    let window = this.#windows.get(client);
    if (window === undefined) {
      if (this.#windows.size >= TRACKED_CLIENTS) this.#makeRoom(now);
      window = { count: 0, endsAt: now + this.windowMs };
      this.#windows.set(client, window);
    } else if (window.endsAt <= now) {
      window.count = 0;
      window.endsAt = now + this.windowMs;
    }
    window.count++;
    return { left: this.max - window.count, resetInMs: window.endsAt - now };
  }

  #makeRoom(now: number): void {
    for (const [client, window] of this.#windows) if (window.endsAt <= now) this.#windows.delete(client);
    // Still full: the client first seen longest ago goes (its count starts again if it comes back).
    if (this.#windows.size >= TRACKED_CLIENTS) this.#windows.delete(this.#windows.keys().next().value as string);
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
