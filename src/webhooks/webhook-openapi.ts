/** The OpenAPI 3.1 `webhooks` of the service: each transfer event, its payload and an example. */
import { type TSchema, Type } from "@sinclair/typebox";
import { AddressSchema, TxHashSchema } from "../domain/formats.js";

const TRANSFER_EVENTS = {
  "transfer.confirmed": "The transfer is mined and moved the tokens, with WEBHOOK_CONFIRMATIONS confirmations.",
  "transfer.failed": "The transfer was mined and reverted (or moved nothing), or another transaction took its nonce: nothing was sent.",
  "transfer.replaced": "The transfer was re-priced: a new attempt (data.hash) at the same nonce carries it now.",
  "transfer.cancelled": "Its cancel (a 0-value transaction to the wallet itself, data.hash) was mined: the recipient got nothing.",
  "transfer.reorged":
    "A block holding the transfer's reported outcome (confirmed, failed or cancelled) left the chain; it is pending again, and its outcome is reported again once it is mined again.",
  "transfer.finalized":
    "The outcome reported before (confirmed, failed or cancelled) is final: its block is at or below the node's finalized block (or FINALITY_BLOCKS deep). No reorganisation undoes it.",
} as const;

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
// The service's own address and hash formats, with a description of what this one is.
const Hash = (description: string) => Type.String({ pattern: TxHashSchema.pattern, description });
const Address = (description: string) => Type.String({ pattern: AddressSchema.pattern, description });
const NullableInteger = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });

/** The name of a transfer event, as in a payload's `type`. */
export type TransferEventName = keyof typeof TRANSFER_EVENTS;

/** The payload schema of one event, with its example: what the OpenAPI document promises receivers. */
export function transferEventSchema(type: TransferEventName): TSchema {
  return Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({ description: "when the event was made, ISO 8601" }),
      data: Type.Object({
        transferHash: Hash("the transfer's first hash, as POST /transfer answered it"),
        hash: Hash("the attempt that carries the transfer now (the mined one once mined)"),
        nonce: Type.Integer(),
        network: Type.String({ description: "the network's name in NETWORKS_FILE; without the file, its chain id in decimal" }),
        chainId: Type.Integer(),
        from: Address("the hot wallet"),
        token: Type.String({ description: "the token contract's address, or \"native\" for the network's native coin" }),
        tokenSymbol: Type.String({ description: "the token's symbol in NETWORKS_FILE; without the file, its address" }),
        recipient: Address("who receives the tokens"),
        amount: Type.String({ description: "base units, decimal: what the recipient got ('0' for a failed or cancelled transfer), else what was requested, as in the status document" }),
        amountInTokens: NullableString("amount in whole token units; null for a token the deployment no longer pays in"),
        requestedAmount: Type.String({ description: "what the transfer asked to send, base units, decimal" }),
        apiKeyId: NullableString("the id of the API key that sent it (never the key)"),
        idempotencyKey: NullableString("the Idempotency-Key the client sent, if any"),
        blockNumber: NullableInteger("where it was mined; null before"),
        blockHash: NullableString("where it was mined; null before"),
        confirmations: Type.Integer(),
        gasUsed: NullableString("from the receipt, where read (failed, cancelled); decimal"),
        effectiveGasPrice: NullableString("from the receipt, where read; wei, decimal"),
      }, { additionalProperties: false }),
    },
    {
      // Receivers may validate strictly: an event carries exactly these fields.
      additionalProperties: false,
      examples: [
        {
          type,
          timestamp: "2026-11-22T12:00:00.000Z",
          data: {
            transferHash: "0x20388f41055ac91d1f948e5d43e6fbbb865407d78e148d1812009509f78d395b",
            hash: "0x20388f41055ac91d1f948e5d43e6fbbb865407d78e148d1812009509f78d395b",
            nonce: 7,
            network: "base",
            chainId: 8453,
            from: "0xaF54306D85c3E017287f182cD48b4604a100414D",
            token: "0xd923D15f86D1D81785106eaA85aa53FDbb3a4721",
            tokenSymbol: "USDC",
            recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            amount: type === "transfer.failed" || type === "transfer.cancelled" ? "0" : "1500000000000000000",
            amountInTokens: type === "transfer.failed" || type === "transfer.cancelled" ? "0" : "1.5",
            requestedAmount: "1500000000000000000",
            apiKeyId: "key_3f9a",
            idempotencyKey: "order-4711",
            blockNumber: type === "transfer.replaced" ? null : 1234,
            blockHash: type === "transfer.replaced" ? null : "0x5404b41df8ec10004ec0c7c7723c00c2008bf2d1f8a9646adf61a8198cb892cb",
            confirmations: type === "transfer.replaced" ? 0 : 1,
            gasUsed: null,
            effectiveGasPrice: null,
          },
        },
      ],
    },
  );
}

/** OpenAPI 3.1 `webhooks`: one POST per event type, signed per Standard Webhooks. */
export const WEBHOOKS_OPENAPI = Object.fromEntries(
  Object.entries(TRANSFER_EVENTS).map(([type, description]) => [
    type,
    {
      post: {
        summary: type,
        description:
          `${description} Sent to every WEBHOOK_URL with the Standard Webhooks headers webhook-id (the same on every retry), ` +
          "webhook-timestamp and webhook-signature (v1, HMAC-SHA256 with each WEBHOOK_SECRET). Answer 2xx to acknowledge; " +
          "410 stops this event for the endpoint; anything else is retried with backoff for 24 h.",
        requestBody: { required: true, content: { "application/json": { schema: transferEventSchema(type as TransferEventName) } } },
        responses: { "200": { description: "acknowledged (any 2xx)" }, "410": { description: "stop delivering this event to this endpoint" } },
      },
    },
  ]),
);
