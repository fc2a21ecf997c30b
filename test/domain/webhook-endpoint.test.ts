/** A webhook endpoint as logs and GET /webhooks/deliveries show it: no token of the receiver's, in the query or the path. */
import { describe, expect, it } from "vitest";
import { describeEndpoint } from "../../src/domain/webhook-settings.js";

describe("describeEndpoint", () => {
  it.each([
    ["https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/aB3dE5fG7hI9jK1lM3nO5pQ7", "https://hooks.slack.com/services/[redacted]/[redacted]/[redacted]"],
    ["https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCd", "https://discord.com/api/webhooks/[redacted]/[redacted]"],
    ["https://example.com/hooks/payments?token=s3cr3t", "https://example.com/hooks/payments?[redacted]"],
    ["https://example.com/hooks/0f8c2b9e-6a1d-4c3e-9b2a-7d5e4f3a2b1c", "https://example.com/hooks/[redacted]"],
    ["http://127.0.0.1:8080/", "http://127.0.0.1:8080/"],
  ])("%s is shown as %s", (endpoint, shown) => {
    expect(describeEndpoint(endpoint)).toBe(shown);
  });
});
