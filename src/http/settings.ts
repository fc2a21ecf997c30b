/** The HTTP server: where it listens, what it logs, who may call it and how often. */
import { Type } from "@sinclair/typebox";
import { ApiKeyRing, InvalidApiKeysError } from "../auth/api-keys.js";
import { InvalidKeyHoldersError, KeyHolders } from "../auth/key-holders.js";
import { type RawSettings, namesARealChain, settingsPart } from "../settings/settings-part.js";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export const HTTP_SETTINGS = settingsPart({
  schema: {
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
    host: Type.String({ minLength: 1, default: "127.0.0.1" }),
    logLevel: Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)), { default: "info" }),
    apiKeys: Type.Optional(Type.String({ description: "comma-separated API keys, plain or sha256:<hex>" })),
    apiKeyHolders: Type.Optional(
      Type.String({ description: "who holds each API key, comma-separated <key id>=<holder>: the keys of one holder count as one person for two-person approval and a second admin's resume" }),
    ),
    authDisabled: Type.Boolean({ default: false }),
    rateLimitMax: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 600, description: "requests per key per window" }),
    rateLimitWindowMs: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 60_000 }),
    trustProxy: Type.Optional(
      Type.String({
        pattern: "^(true|false|[0-9]+|[0-9a-fA-F.:/]+(,[0-9a-fA-F.:/]+)*)$",
        description: "which proxies' X-Forwarded-For to believe: true, a hop count, or comma-separated addresses/CIDRs",
      }),
    ),
  },
  variables: {
    port: "PORT",
    host: "HOST",
    logLevel: "LOG_LEVEL",
    apiKeys: "API_KEYS",
    apiKeyHolders: "API_KEY_HOLDERS",
    authDisabled: "AUTH_DISABLED",
    rateLimitMax: "RATE_LIMIT_MAX",
    rateLimitWindowMs: "RATE_LIMIT_WINDOW_MS",
    trustProxy: "TRUST_PROXY",
  },
  expectations: {
    logLevel: `must be one of ${LOG_LEVELS.join(", ")}`,
    trustProxy: "must be true, false, a number of proxy hops, or comma-separated addresses or CIDR ranges",
  },
  check(raw, problems) {
    if (namesARealChain(raw) && !raw.apiKeys && raw.authDisabled !== "true") {
      problems.push("API_KEYS: required (comma-separated keys, or sha256:<hex> of keys); or set AUTH_DISABLED=true to run without");
    }
    checkApiKeys(raw, problems);
  },
});

/** API_KEYS and API_KEY_HOLDERS parse, and the holders are of keys that exist. */
function checkApiKeys(raw: RawSettings, problems: string[]): void {
  if (typeof raw.apiKeys !== "string") {
    if (raw.apiKeyHolders !== undefined) problems.push("API_KEY_HOLDERS: names the holders of API_KEYS's keys, which is not set");
    return;
  }
  try {
    const ring = ApiKeyRing.parse(raw.apiKeys);
    if (typeof raw.apiKeyHolders === "string") KeyHolders.parse(raw.apiKeyHolders, ring.ids);
  } catch (error) {
    if (error instanceof InvalidKeyHoldersError) problems.push(`API_KEY_HOLDERS: ${error.message}`);
    else if (error instanceof InvalidApiKeysError) problems.push(`API_KEYS: ${error.message}`);
    else throw error;
  }
}
