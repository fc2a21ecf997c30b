/** Standard Webhooks signing: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, one per secret. */
import { createHmac } from "node:crypto";

/** The `webhook-signature` header for this attempt: every secret's signature, space-separated (for rotation). */
export function signWebhook(secrets: readonly Buffer[], id: string, timestampSeconds: number, body: string): string {
  const content = `${id}.${timestampSeconds}.${body}`;
  return secrets.map((secret) => `v1,${createHmac("sha256", secret).update(content).digest("base64")}`).join(" ");
}
