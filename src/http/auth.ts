/** Bearer API keys on every route but the open ones (health, readiness, API docs). */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ApiKeyRing } from "../auth/api-keys.js";
import { ServiceError } from "../errors.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The id of the caller's API key (never the key), or "anonymous" when auth is disabled. */
    apiKeyId: string;
  }
}

const OPEN_PATHS = new Set(["/health", "/ready", "/openapi.json"]);

/** Routes anyone may call: liveness, readiness and the API description. */
export function isOpenRoute(request: FastifyRequest): boolean {
  const path = request.url.split("?")[0];
  return OPEN_PATHS.has(path) || path === "/docs" || path.startsWith("/docs/");
}

/**
 * Adds the check to every request: 401 AUTH_REQUIRED without `Authorization: Bearer <key>`, 401
 * AUTH_INVALID with a key that is not one of API_KEYS. `keys` undefined means AUTH_DISABLED.
 */
export function requireApiKeys(app: FastifyInstance, keys: ApiKeyRing | undefined): void {
  app.decorateRequest("apiKeyId", "");
  app.addHook("onRequest", async (request, reply) => {
    if (!keys) {
      request.apiKeyId = "anonymous";
      return;
    }
    if (isOpenRoute(request)) return;
    const header = request.headers.authorization;
    if (!header) {
      reply.header("www-authenticate", 'Bearer realm="token-transfer-service"');
      throw new ServiceError("AUTH_REQUIRED", "send the API key as Authorization: Bearer <key>");
    }
    const presented = /^Bearer +([\x21-\x7e]{1,512})$/i.exec(header)?.[1];
    const keyId = presented === undefined ? undefined : keys.identify(presented);
    if (keyId === undefined) {
      reply.header("www-authenticate", 'Bearer realm="token-transfer-service", error="invalid_token"');
      throw new ServiceError("AUTH_INVALID", "the API key is not valid");
    }
    request.apiKeyId = keyId;
  });
}
