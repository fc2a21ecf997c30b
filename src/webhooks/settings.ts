/** Where transfer events go, signed with which secrets, and how deliveries are retried. */
import { Type } from "@sinclair/typebox";
import { InvalidWebhookSettingError, parseWebhookSecrets, parseWebhookUrls } from "../domain/webhook-settings.js";
import { settingsPart } from "../settings/settings-part.js";

export const WEBHOOK_SETTINGS = settingsPart({
  schema: {
    webhookUrl: Type.Optional(Type.String({ description: "comma-separated http(s) URLs that receive transfer events" })),
    webhookSecret: Type.Optional(Type.String({ description: "Standard Webhooks secrets (whsec_...), comma-separated; every event is signed with each" })),
    webhookConfirmations: Type.Integer({ minimum: 1, maximum: 1000, default: 1, description: "confirmations at which transfer.confirmed is sent" }),
    webhookRetryInitialMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 5_000, description: "first retry delay of a failed delivery; doubles each time" }),
  },
  variables: {
    webhookUrl: "WEBHOOK_URL",
    webhookSecret: "WEBHOOK_SECRET",
    webhookConfirmations: "WEBHOOK_CONFIRMATIONS",
    webhookRetryInitialMs: "WEBHOOK_RETRY_INITIAL_MS",
  },
  secrets: ["webhookSecret"],
  urls: { webhookUrl: "several" },
  check(raw, problems) {
    const check = (variable: string, value: unknown, parse: (value: string) => unknown) => {
      if (typeof value !== "string") return;
      try {
        parse(value);
      } catch (error) {
        if (!(error instanceof InvalidWebhookSettingError)) throw error;
        problems.push(`${variable}: ${error.message}`);
      }
    };
    check("WEBHOOK_URL", raw.webhookUrl, parseWebhookUrls);
    check("WEBHOOK_SECRET", raw.webhookSecret, parseWebhookSecrets);
    if (raw.webhookUrl && !raw.webhookSecret) problems.push("WEBHOOK_SECRET: required when WEBHOOK_URL is set (whsec_ + base64 of random bytes)");
  },
});
