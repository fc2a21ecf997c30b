/**
 * Checks a webhook delivery as Standard Webhooks signs it (docs/webhooks.md): HMAC-SHA256 with the secret's
 * bytes (base64 after "whsec_") over "<webhook-id>.<webhook-timestamp>.<raw body>", base64, as "v1,<sig>"
 * among the space-separated signatures of `webhook-signature`; a timestamp more than `toleranceSeconds` away
 * is refused (a replayed delivery).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { WebhookEvents } from "./api-types.js";
import { WebhookVerificationError } from "./errors.js";

/** An event as delivered: its `type` names which of WebhookEvents it is. */
export type WebhookEvent = WebhookEvents[keyof WebhookEvents];

export interface VerifyOptions {
  /** How far the delivery's timestamp may be from now (default 300 s). */
  toleranceSeconds?: number;
  /** Now, in seconds since 1970 (for tests). */
  nowSeconds?: number;
}

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === "function") return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The event of a delivery whose signature checks; throws WebhookVerificationError otherwise. `body` must be
 * the raw bytes (or text) received, before any JSON parsing.
 */
export function verifyWebhook(secret: string, headers: Headers, body: string | Uint8Array, options: VerifyOptions = {}): WebhookEvent {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature");
  const sentAt = Number(timestamp);
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (!/^\d+$/.test(timestamp) || Math.abs(now - sentAt) > (options.toleranceSeconds ?? 300)) throw new WebhookVerificationError("webhook-timestamp is too far from now");
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
  const expected = createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64")).update(`${id}.${timestamp}.${text}`).digest();
  const matches = signatures.split(" ").some((signature) => {
    const [version, value] = signature.split(",");
    if (version !== "v1" || !value) return false;
    const given = Buffer.from(value, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError("no webhook-signature matches the secret");
  return JSON.parse(text) as WebhookEvent;
}
