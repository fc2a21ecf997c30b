/** Bearer API keys on every route but the open ones (health, readiness, API docs). */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { type ApiKeyRing, type IdentifiedKey, ROLES, type Role } from "../auth/api-keys.js";
import { ServiceError } from "../errors.js";
import { monotonicNow } from "../clock.js";
import { FixedWindowCounter } from "./fixed-window-counter.js";
import { appendOnRequest } from "./route-hooks.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The id of the caller's API key (never the key), or "anonymous" when auth is disabled. */
    apiKeyId: string;
    /** The caller's role; admin when auth is disabled. */
    apiKeyRole: Role;
  }
}

/** The apiKeyId of every request while AUTH_DISABLED is set. */
export const ANONYMOUS_KEY_ID = "anonymous";

/**
 * Which roles may call each route ("METHOD /path" as registered). A route not listed is for admin only,
 * so a new route is closed until it is placed here.
 */
export const ROUTE_ROLES: Readonly<Record<string, readonly Role[]>> = {
  "POST /transfer": ["transfer", "admin"],
  "POST /payouts": ["transfer", "admin"],
  // A transfer key sees its own batches only (the route answers others' as not found).
  "GET /payouts/:id": ROLES,
  "POST /getTransaction": ROLES,
  "GET /transactions/:hash": ROLES,
  // A transfer key sees its own transfers only (the route narrows the list).
  "GET /transfers": ROLES,
  // Every client's transfers, counted: not for a transfer key, which sees its own only.
  "GET /transfers/activity": ["read", "admin"],
  "POST /transactions/:hash/cancel": ["transfer", "admin"],
  "POST /transactions/:hash/reprice": ["transfer", "admin"],
  "GET /metrics": ["read", "admin"],
  // Names only, as requests use them: what a client may pay in.
  "GET /networks": ROLES,
  "GET /wallet": ["admin"],
  "POST /wallet/resume": ["admin"],
  "GET /webhooks/deliveries": ["admin"],
  // Who is paid without approval: an auditor may read it; only an admin changes it (POST, DELETE: admin by default).
  "GET /address-book": ["read", "admin"],
  "POST /webhooks/deliveries/:id/retry": ["admin"],
};

/**
 * Whether the caller may see what the journal knows of a transfer sent with key `senderKeyId` (its
 * attempts, Idempotency-Key, refusal, replacements, payout items). One rule for every route that
 * describes transfers, as GET /transfers lists them: a transfer key sees its own; a read key (an auditor's,
 * a dashboard's) and an admin see every one. Others see what the chain shows.
 */
export function seesTransferOf(request: FastifyRequest, senderKeyId: string | undefined): boolean {
  return request.apiKeyRole === "admin" || request.apiKeyRole === "read" || (senderKeyId !== undefined && senderKeyId === request.apiKeyId);
}

/** Whether the caller may change (cancel, re-price) a transfer sent with key `senderKeyId`: its own key, or an admin. */
export function actsOnTransferOf(request: FastifyRequest, senderKeyId: string | undefined): boolean {
  return request.apiKeyRole === "admin" || (senderKeyId !== undefined && senderKeyId === request.apiKeyId);
}

/** Route config of a follower's route that forwards to the leader: the leader checks the role, by its own route. */
export const ROLE_CHECKED_BY_LEADER = { roleCheckedByLeader: true } as const;

/**
 * Checks the caller's role on each route that is not open, by the roles decided for the route (and each of
 * its methods) as it is declared: the check then costs a lookup in a small map per request.
 */
function checkRolesPerRoute(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    if (isOpenPath(route.url) || (route.config as { roleCheckedByLeader?: boolean } | undefined)?.roleCheckedByLeader) return;
    // A route not listed is for admin only.
    const rolesByMethod = new Map([route.method].flat().map((method) => [method, ROUTE_ROLES[`${method} ${route.url}`] ?? ["admin"]]));
    appendOnRequest(route, (request, _reply, done) => {
      if (rolesByMethod.get(request.method)?.includes(request.apiKeyRole)) return done();
      done(new ServiceError("FORBIDDEN_FOR_ROLE", `an API key of role ${request.apiKeyRole} may not call ${request.method} ${route.url}`));
    });
  });
}

// The console's page and files hold no data: what it shows, it asks the API for with the operator's key.
const OPEN_PATHS = new Set(["/health", "/ready", "/openapi.json", "/console"]);

/** Requests without a valid key allowed per client address per window before it is told to wait (429). */
const FAILED_CHECKS_PER_WINDOW = 60;
const FAILED_CHECKS_WINDOW_MS = 60_000;

// A file of the console: its stylesheet or a compiled module, by plain names only. No dot segment and no
// escape passes: on a follower, whatever is open is forwarded to the leader without the key check.
const CONSOLE_FILE = /^\/console\/(?:[A-Za-z0-9_-]+\/)*[A-Za-z0-9_-]+\.(?:js|css)$/;
/** The route that serves the console's modules, as the role check and the rate limit see it (they ask by route): open, as its files are. */
const CONSOLE_FILES_ROUTE = "/console/*";

/** Paths anyone may call: liveness, readiness, the API description and the console's page, stylesheet and modules. */
export function isOpenPath(path: string): boolean {
  return OPEN_PATHS.has(path) || CONSOLE_FILE.test(path) || path === CONSOLE_FILES_ROUTE || path === "/docs" || path.startsWith("/docs/");
}

function isOpenRoute(request: FastifyRequest): boolean {
  const query = request.url.indexOf("?");
  return isOpenPath(query < 0 ? request.url : request.url.slice(0, query));
}

/**
 * Adds the check to every request: 401 AUTH_REQUIRED without `Authorization: Bearer <key>`, 401
 * AUTH_INVALID with a key that is not one of API_KEYS, 403 FORBIDDEN_FOR_ROLE on a route the key's role
 * may not call. `keys` undefined means AUTH_DISABLED.
 */
export function requireApiKeys(app: FastifyInstance, keys: ApiKeyRing | undefined): void {
  app.decorateRequest("apiKeyId", "");
  app.decorateRequest("apiKeyRole", "transfer");
  // Requests without a valid key, per address.
  const failedChecks = new FixedWindowCounter(FAILED_CHECKS_PER_WINDOW, FAILED_CHECKS_WINDOW_MS);
  // Hashing the presented key is the largest cost of a cached lookup, and a keep-alive connection sends
  // the same header with every request. The last valid header is remembered per connection (entries go
  // with their connection) and compared in constant time, since a proxy may carry several clients on one.
  const verifiedOnConnection = new WeakMap<object, { header: string; key: IdentifiedKey }>();
  // A callback hook, not an async one: it runs on every request, and a promise per request is measurable.
  app.addHook("onRequest", (request, reply, done) => {
    if (!keys) {
      request.apiKeyId = ANONYMOUS_KEY_ID;
      request.apiKeyRole = "admin";
      return done();
    }
    if (isOpenRoute(request)) return done();
    const header = request.headers.authorization;
    const verified = verifiedOnConnection.get(request.raw.socket);
    if (header !== undefined && verified !== undefined && sameInConstantTime(header, verified.header)) {
      request.apiKeyId = verified.key.id;
      request.apiKeyRole = verified.key.role;
      return done();
    }
    const presented = !header ? undefined : /^Bearer +([\x21-\x7e]{1,512})$/i.exec(header)?.[1];
    const key = presented === undefined ? undefined : keys.identify(presented);
    if (key !== undefined) {
      verifiedOnConnection.set(request.raw.socket, { header: header as string, key });
      request.apiKeyId = key.id;
      request.apiKeyRole = key.role;
      return done();
    }
    // The per-key rate limit only sees valid keys; guessing is slowed here, per client address.
    const { left, resetInMs } = failedChecks.count(request.ip, monotonicNow());
    const waitSeconds = left < 0 ? Math.ceil(resetInMs / 1000) : undefined;
    if (waitSeconds !== undefined) {
      reply.header("retry-after", String(waitSeconds));
      return done(new ServiceError("RATE_LIMITED", `too many requests without a valid API key from this address; retry in ${waitSeconds} s`));
    }
    if (!header) {
      reply.header("www-authenticate", 'Bearer realm="token-transfer-service"');
      return done(new ServiceError("AUTH_REQUIRED", "send the API key as Authorization: Bearer <key>"));
    }
    reply.header("www-authenticate", 'Bearer realm="token-transfer-service", error="invalid_token"');
    done(new ServiceError("AUTH_INVALID", "the API key is not valid"));
  });
  if (keys) checkRolesPerRoute(app);
}

/**
 * Whether two strings are equal, in a time that depends only on the length of `presented` (which its
 * sender knows): no early exit at the first difference, and a length mismatch is folded into the result.
 */
export function sameInConstantTime(presented: string, expected: string): boolean {
  let difference = presented.length ^ expected.length;
  for (let index = 0; index < presented.length; index++) {
    // Past the end of `expected`, charCodeAt gives NaN, which | and ^ read as 0.
    difference |= presented.charCodeAt(index) ^ expected.charCodeAt(index);
  }
  return difference === 0;
}
