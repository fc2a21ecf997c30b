/**
 * What happens around every request: its id on the answer, its place among the answers in flight (so a
 * close ends keep-alive connections after them), its metrics, and its one log line when it completes.
 */
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { ServiceMetrics } from "../metrics.js";
import { requestLineWriter } from "./request-line.js";
import { ResponsesInFlight } from "./responses-in-flight.js";

export function trackRequests(app: FastifyInstance, logger: Logger, metrics: ServiceMetrics): void {
  // Callers correlate their logs with ours through the request id, theirs or ours. Set as the request
  // comes in, not in an onSend hook: that ran for every answer and cost a cached lookup 2 µs of 25.
  const inFlight = new ResponsesInFlight();
  app.decorateRequest("inFlightSlot", -1);
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    request.inFlightSlot = inFlight.add(reply.raw);
    done();
  });
  // While closing, requests in flight still finish, but their keep-alive connections must not hold the
  // close up: answers go out with Connection: close.
  app.addHook("preClose", async () => inFlight.endConnectionsAfterAnswers());
  // Decided once: the level does not change while the app runs, and the line is the costliest part.
  const logCompleted = requestLineWriter(logger);
  // Each route's own query parameters, from its schema: their values are logged, any other's are not.
  const ownQueryParameters = new Map<string, ReadonlySet<string>>();
  app.addHook("onRoute", (route) => {
    const properties = (route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties;
    if (properties) ownQueryParameters.set(route.url, new Set(Object.keys(properties)));
  });
  app.addHook("onResponse", (request, reply, done) => {
    inFlight.delete(request.inFlightSlot, reply.raw);
    const route = request.routeOptions.url ?? "unmatched";
    const elapsedMs = reply.elapsedTime;
    metrics.observeHttp(route, request.method, reply.statusCode, elapsedMs / 1000);
    // Written for the request, with its id as the request's own logger would print it: that logger is
    // then made only for requests that log more (see lazyRequestLogger).
    logCompleted?.({
      reqId: request.id,
      method: request.method,
      url: withQueryValuesRedacted(request.url, ownQueryParameters.get(route)),
      route,
      status: reply.statusCode,
      ms: Math.round(elapsedMs * 10) / 10,
      apiKeyId: request.apiKeyId || undefined,
    });
    done();
  });
}

// Query parameters the service reads: their values are safe to log. Any other value may be a credential
// a client put in the wrong place (?api_key=..., ?token=...).
/**
 * The request URL for the log: the path, and the query string with the values of parameters other than
 * the route's own (`loggable`) redacted.
 */
export function withQueryValuesRedacted(url: string, loggable: ReadonlySet<string> = new Set()): string {
  const queryAt = url.indexOf("?");
  if (queryAt < 0) return url;
  const parameters = url
    .slice(queryAt + 1)
    .split("&")
    .map((parameter) => {
      const [name] = parameter.split("=", 1);
      return loggable.has(name) ? parameter : `${name}=[redacted]`;
    });
  return `${url.slice(0, queryAt)}?${parameters.join("&")}`;
}
