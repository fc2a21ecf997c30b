/** WEBHOOK_URL and WEBHOOK_SECRET: where events go and the Standard Webhooks secrets they are signed with. */

export class InvalidWebhookSettingError extends Error {
  override name = "InvalidWebhookSettingError";
}

/** Comma-separated http:// or https:// URLs, without credentials in them (they would reach logs). */
export function parseWebhookUrls(value: string): string[] {
  const urls = value.split(",").map((entry) => entry.trim()).filter(Boolean);
  if (urls.length === 0) throw new InvalidWebhookSettingError("must hold at least one URL");
  return urls.map((entry, index) => {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new InvalidWebhookSettingError(`URL ${index + 1} is not a URL`);
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new InvalidWebhookSettingError(`URL ${index + 1} must be http:// or https://`);
    if (url.username || url.password) throw new InvalidWebhookSettingError(`URL ${index + 1} must not carry credentials (they would be logged)`);
    return url.toString();
  });
}

/**
 * Secrets in the Standard Webhooks form, `whsec_` + base64 of at least 24 bytes, separated by commas or
 * spaces. Several are accepted at once so that a receiver can move to a new secret: every event is signed
 * with each of them.
 */
export function parseWebhookSecrets(value: string): Buffer[] {
  const secrets = value.split(/[\s,]+/).filter(Boolean);
  if (secrets.length === 0) throw new InvalidWebhookSettingError("must hold at least one secret");
  return secrets.map((secret, index) => {
    const encoded = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(secret)?.[1];
    const key = encoded === undefined ? undefined : Buffer.from(encoded, "base64");
    if (!key || key.length < 24) throw new InvalidWebhookSettingError(`secret ${index + 1} must be whsec_ followed by the base64 of at least 24 random bytes`);
    return key;
  });
}

/**
 * An endpoint as logs and the deliveries list show it: a query string may carry the receiver's token, and so
 * may the path (Slack's /services/T…/B…/<token>, Discord's /api/webhooks/<id>/<token>): the query is left
 * out, and so is every path segment that looks like a token or an id (16 characters or more, or 8 or more
 * mixing letters and digits); words such as /hooks/payments stay, to tell endpoints apart.
 */
export function describeEndpoint(endpoint: string): string {
  const url = new URL(endpoint);
  const path = url.pathname
    .split("/")
    .map((segment) => (looksLikeAToken(decodeURIComponent(segment)) ? "[redacted]" : segment))
    .join("/");
  return `${url.origin}${path}${url.search ? "?[redacted]" : ""}`;
}

function looksLikeAToken(segment: string): boolean {
  return segment.length >= 16 || (segment.length >= 8 && /[0-9]/.test(segment) && /[a-z]/i.test(segment));
}
