/** Hooks a plugin adds to one route as it is declared, to decide per route once instead of per request. */
import type { RouteOptions, onRequestHookHandler } from "fastify";

/** Runs `hook` on the route's requests after the app's own onRequest hooks (the key check among them). */
export function appendOnRequest(route: RouteOptions, hook: onRequestHookHandler): void {
  route.onRequest = route.onRequest === undefined ? [hook] : [...[route.onRequest].flat(), hook];
}
