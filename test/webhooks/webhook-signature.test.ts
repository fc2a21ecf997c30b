import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signWebhook } from "../../src/webhooks/webhook-signature.js";
import { parseWebhookSecrets } from "../../src/domain/webhook-settings.js";

describe("webhook signatures", () => {
  it("sign with every configured secret, so a receiver verifies with the old one or the new one during a rotation", () => {
    const [oldSecret, newSecret] = [randomBytes(32), randomBytes(32)].map((key) => `whsec_${key.toString("base64")}`);
    const body = JSON.stringify({ type: "transfer.confirmed", timestamp: "2026-11-22T12:00:00.000Z", data: {} });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signWebhook(parseWebhookSecrets(`${oldSecret},${newSecret}`), "msg_1", timestamp, body),
    };
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    for (const secret of [oldSecret, newSecret]) expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(`whsec_${randomBytes(32).toString("base64")}`).verify(body, headers)).toThrow();
    // The body is signed: one changed byte fails.
    expect(() => new Webhook(oldSecret).verify(body.replace("12:00", "12:01"), headers)).toThrow();
  });
});
