/** The OpenAPI document's frame; the paths come from the routes' TypeBox schemas (@fastify/swagger). */
import { ERROR_CODES } from "../errors.js";
import { WEBHOOKS_OPENAPI } from "../webhooks/webhook-openapi.js";

const errorTable = Object.entries(ERROR_CODES)
  .map(([code, { statusCode, description }]) => `| ${statusCode} | ${code} | ${description} |`)
  .join("\n");

export const OPENAPI_DOCUMENT_BASE = {
  openapi: "3.1.0",
  info: {
    title: "Token transfer service",
    version: "1.0.0",
    description:
      "Sends ERC-20 tokens from one hot wallet and reports transactions in the ethers v5 wire format.\n\n" +
      "Every error comes as `{statusCode, code, error, message}`. Codes:\n\n| Status | Code | Meaning |\n|---|---|---|\n" +
      errorTable,
  },
  components: {
    securitySchemes: { bearerAuth: { type: "http" as const, scheme: "bearer", description: "one of API_KEYS" } },
  },
  security: [{ bearerAuth: [] }],
  webhooks: WEBHOOKS_OPENAPI,
  tags: [
    { name: "transfers", description: "sending tokens" },
    { name: "transactions", description: "looking transactions up" },
    { name: "operations", description: "health, readiness, wallet, metrics, webhook deliveries" },
  ],
};
