/** The OpenAPI 3.1 `webhooks` of the service: each transfer, payout item and wallet event, its payload and an example. */
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

const PAYOUT_ITEM_EVENTS = {
  "payout.item.paid": "An item of a payout batch was paid: the batch is mined (with WEBHOOK_CONFIRMATIONS confirmations) and the item's tokens moved. Sent after the batch's own transfer.confirmed.",
  "payout.item.failed":
    "An item of a payout batch failed: the batch is mined and the item's transfer failed (reason: the token's words), or the whole batch reverted, was cancelled or lost its nonce. Pay it again (under a new id) only after its payout.item.finalized.",
  "payout.item.reorged": "The block holding the item's reported outcome left the chain: it is pending again, and its outcome is reported again once the batch is mined again.",
  "payout.item.finalized": "The item's outcome reported before (state: paid or failed) is final: no reorganisation undoes it.",
} as const;

const WALLET_EVENTS = {
  "wallet.unexpected_outflow":
    "A transaction of a service wallet, a Transfer out of it of any ERC-20 (also one the service does not pay in), or code at it (an EIP-7702 delegation), that the service never made (its key used elsewhere, or compromised; a spender it approved). " +
    "Sent once the chain shows it, within a block or so of it being mined (OUTFLOW_CHECK_INTERVAL_MS); a restart may send one again. " +
    "With PAUSE_ON_UNEXPECTED_OUTFLOW the service stops signing until an admin resumes (POST /wallet/resume).",
} as const;

const AUDIT_EVENTS = {
  "audit.head":
    "The audit log's head: its last entry's number and hash, published every AUDIT_HEAD_INTERVAL_MS while the log grows, so that a copy lives outside the database. " +
    "Keep it: npm run audit:verify -- --expect <seq>:<hash> then proves that no entry up to it was changed or removed since, whatever someone with the database did.",
} as const;

const APPROVAL_EVENTS = {
  "transfer.awaiting_approval":
    "A transfer or payout batch above APPROVAL_ABOVE was journaled and answered 202: nothing is signed until an admin key other than the one that asked approves it (POST /transfers/{id}/approve). " +
    "Once approved it is reported as any transfer (transfer.confirmed ...); its Idempotency-Key then answers the record.",
  "transfer.rejected":
    "A transfer that awaited approval will never be sent: an admin rejected it (reason.code APPROVAL_REJECTED), no admin approved it within APPROVAL_TTL_HOURS (APPROVAL_EXPIRED), " +
    "or it was refused when approved (the 417's code: the wallet short of tokens, the call would revert). Its Idempotency-Key answers 417 with that code.",
} as const;

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
// The service's own address and hash formats, with a description of what this one is.
const Hash = (description: string) => Type.String({ pattern: TxHashSchema.pattern, description });
const Address = (description: string) => Type.String({ pattern: AddressSchema.pattern, description });
const NullableInteger = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });

/** The name of a transfer event, as in a payload's `type`. */
export type TransferEventName = keyof typeof TRANSFER_EVENTS;

/** The name of a payout item event. */
export type PayoutItemEventName = keyof typeof PAYOUT_ITEM_EVENTS;

/** The name of an event about a wallet rather than a transfer. */
export type WalletEventName = keyof typeof WALLET_EVENTS;

/** The name of an event about the audit log. */
export type AuditEventName = keyof typeof AUDIT_EVENTS;

/** The name of an event of a transfer's two-person approval. */
export type ApprovalEventName = keyof typeof APPROVAL_EVENTS;

/** The name of any event. */
export type EventName = TransferEventName | PayoutItemEventName | WalletEventName | AuditEventName | ApprovalEventName;

/** The payload schema of any event. */
export function eventSchema(type: EventName): TSchema {
  if (type in WALLET_EVENTS) return unexpectedOutflowEventSchema();
  if (type in AUDIT_EVENTS) return auditHeadEventSchema();
  if (type in APPROVAL_EVENTS) return approvalEventSchema(type as ApprovalEventName);
  return type in PAYOUT_ITEM_EVENTS ? payoutItemEventSchema(type as PayoutItemEventName) : transferEventSchema(type as TransferEventName);
}

/** The payload schema of wallet.unexpected_outflow, with its example. */
export function unexpectedOutflowEventSchema(): TSchema {
  return Type.Object(
    {
      type: Type.Literal("wallet.unexpected_outflow"),
      timestamp: Type.String({ description: "when the event was made, ISO 8601" }),
      data: Type.Object(
        {
          network: Type.String({ description: "the network's name in NETWORKS_FILE; without the file, its chain id in decimal" }),
          chainId: Type.Integer(),
          wallet: Address("the service's wallet (a lane of the pool) it left"),
          hash: Hash("the transaction that did it"),
          blockNumber: Type.Integer(),
          blockHash: Type.String(),
          nonce: NullableInteger("a transaction of the wallet: the nonce it used; null for a token transfer another account's transaction made (transferFrom by a spender)"),
          token: NullableString("a token Transfer out of the wallet: the token's address; null for the wallet's transaction itself"),
          logIndex: NullableInteger("a token Transfer: its log's index in the block (one transaction can move tokens out several times); null for the wallet's transaction itself"),
          to: NullableString("the token's recipient, or the transaction's to; null when the node did not return the transaction"),
          amount: NullableString("base units of the token, or the transaction's value in wei; decimal; null when the node did not return the transaction"),
          code: NullableString(
            "code found at the wallet (an EIP-7702 delegation: 0xef0100 and the delegate): the account can move funds with no nonce of its own and no log; hash is then the keccak-256 of the wallet's address and the code, and the block the head it was read at. Null for a transaction or a log",
          ),
          otherToken: Type.Boolean({ description: "a Transfer of a contract this network does not pay in: any contract can emit one (fake tokens do), so it never pauses signing" }),
          detectedAt: Type.String({ description: "when the service noticed it, ISO 8601" }),
          signingPaused: Type.Boolean({ description: "true when the service signs nothing until an admin resumes (PAUSE_ON_UNEXPECTED_OUTFLOW)" }),
        },
        { additionalProperties: false },
      ),
    },
    {
      additionalProperties: false,
      examples: [
        {
          type: "wallet.unexpected_outflow",
          timestamp: "2026-11-27T12:00:00.000Z",
          data: {
            network: "base",
            chainId: 8453,
            wallet: "0xaF54306D85c3E017287f182cD48b4604a100414D",
            hash: "0x9a1c4b0f3d1e6a3f6c2b7d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2",
            blockNumber: 1240,
            blockHash: "0x5404b41df8ec10004ec0c7c7723c00c2008bf2d1f8a9646adf61a8198cb892cb",
            nonce: null,
            token: "0xd923D15f86D1D81785106eaA85aa53FDbb3a4721",
            logIndex: 3,
            to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            amount: "7000000",
            code: null,
            otherToken: false,
            detectedAt: "2026-11-27T12:00:00.000Z",
            signingPaused: true,
          },
        },
      ],
    },
  );
}

/** The payload schema of audit.head, with its example. */
export function auditHeadEventSchema(): TSchema {
  return Type.Object(
    {
      type: Type.Literal("audit.head"),
      timestamp: Type.String({ description: "when the event was made, ISO 8601" }),
      data: Type.Object(
        {
          seq: Type.Integer({ minimum: 1, description: "the audit log's last sealed entry" }),
          hash: Type.String({ pattern: "^[0-9a-f]{64}$", description: "its hash: what audit:verify --expect <seq>:<hash> checks against" }),
          at: Type.String({ description: "when that entry was written, ISO 8601" }),
          keyed: Type.Boolean({ description: "true when the log is sealed with AUDIT_KEY_FILE's key (the hash is an HMAC)" }),
          expect: Type.String({ description: "the argument of npm run audit:verify -- --expect, ready to keep" }),
        },
        { additionalProperties: false },
      ),
    },
    {
      additionalProperties: false,
      examples: [
        {
          type: "audit.head",
          timestamp: "2026-12-03T12:00:00.000Z",
          data: {
            seq: 912,
            hash: "5b0c6f3d1e2a4b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e",
            at: "2026-12-03T11:59:58.120Z",
            keyed: true,
            expect: "912:5b0c6f3d1e2a4b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e",
          },
        },
      ],
    },
  );
}

/** The payload schema of an approval event, with its example. */
export function approvalEventSchema(type: ApprovalEventName): TSchema {
  const rejected = type === "transfer.rejected";
  return Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({ description: "when the event was made, ISO 8601" }),
      data: Type.Object(
        {
          id: Type.Integer({ description: "the transfer's id, as the 202 answered it: GET /transfers lists it, POST /transfers/{id}/approve and /reject take it" }),
          network: Type.String({ description: "the network's name in NETWORKS_FILE; without the file, its chain id in decimal" }),
          chainId: Type.Integer(),
          token: Type.String({ description: "the token contract's address, or \"native\"" }),
          tokenSymbol: Type.String({ description: "the token's symbol in NETWORKS_FILE; its address without one" }),
          recipient: Address("the recipient; for a payout batch, the payout contract"),
          amount: Type.String({ description: "base units, decimal (a batch: the total of the items it pays)" }),
          amountInTokens: NullableString("whole tokens; null for a token the service no longer pays in"),
          payoutItems: NullableInteger("a payout batch: how many items it pays; null for a transfer"),
          apiKeyId: NullableString("the API key that asked for it (its id)"),
          idempotencyKey: NullableString("the client's Idempotency-Key; null when it sent none"),
          expiresAt: Type.String({ description: "when it expires undecided (APPROVAL_TTL_HOURS after it was asked for), ISO 8601" }),
          decidedBy: NullableString("the admin key that decided it, or expiry; null while it waits"),
          reason: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false }), Type.Null()], {
            description: "transfer.rejected: why (APPROVAL_REJECTED, APPROVAL_EXPIRED, or the 417's code when it was refused as it was approved); null for transfer.awaiting_approval",
          }),
        },
        { additionalProperties: false },
      ),
    },
    {
      additionalProperties: false,
      examples: [
        {
          type,
          timestamp: "2026-11-27T12:00:00.000Z",
          data: {
            id: 4182,
            network: "base",
            chainId: 8453,
            token: "0xd923D15f86D1D81785106eaA85aa53FDbb3a4721",
            tokenSymbol: "USDC",
            recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            amount: "25000000000",
            amountInTokens: "25000",
            payoutItems: null,
            apiKeyId: "key_3f1a9c0d2b7e",
            idempotencyKey: "invoice-8812",
            expiresAt: "2026-11-28T12:00:00.000Z",
            decidedBy: rejected ? "key_8b20e4f61c3a" : null,
            reason: rejected ? { code: "APPROVAL_REJECTED", message: "admin key key_8b20e4f61c3a rejected transfer 4182; nothing of it was or will be sent" } : null,
          },
        },
      ],
    },
  );
}

/** The payload schema of one payout item event, with its example. */
export function payoutItemEventSchema(type: PayoutItemEventName): TSchema {
  const state = type === "payout.item.reorged" ? "pending" : type === "payout.item.failed" ? "failed" : "paid";
  return Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({ description: "when the event was made, ISO 8601" }),
      data: Type.Object(
        {
          payoutId: Type.Integer({ description: "the batch's id, as POST /payouts answered it" }),
          itemId: Type.String({ description: "the item's id, as the client sent it" }),
          toAddress: Address("the item's recipient"),
          amount: Type.String({ description: "what the item pays, base units, decimal" }),
          amountInTokens: NullableString("amount in whole token units; null for a token the deployment no longer pays in"),
          state: Type.Union([Type.Literal("paid"), Type.Literal("failed"), Type.Literal("pending")], { description: "the item's outcome; pending again after a reorganisation" }),
          reason: NullableString("why it failed, with the token's own words; null unless failed"),
          transferHash: Hash("the batch's first hash, as POST /payouts answered it"),
          hash: Hash("the attempt that carries the batch now (the mined one once mined)"),
          network: Type.String({ description: "the network's name in NETWORKS_FILE; without the file, its chain id in decimal" }),
          chainId: Type.Integer(),
          token: Type.String({ description: "the token contract's address" }),
          tokenSymbol: Type.String({ description: "the token's symbol in NETWORKS_FILE; without the file, its address" }),
          apiKeyId: NullableString("the id of the API key that sent the batch (never the key)"),
          idempotencyKey: NullableString("the batch's Idempotency-Key"),
          blockNumber: NullableInteger("where the batch was mined; null after a reorganisation"),
          blockHash: NullableString("where the batch was mined; null after a reorganisation"),
          confirmations: Type.Integer(),
        },
        { additionalProperties: false },
      ),
    },
    {
      additionalProperties: false,
      examples: [
        {
          type,
          timestamp: "2026-11-22T12:00:00.000Z",
          data: {
            payoutId: 42,
            itemId: "invoice-881",
            toAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            amount: "12500000",
            amountInTokens: "12.5",
            state,
            reason: state === "failed" ? "the token reverted the transfer: Blocklistable: account is blocked" : null,
            transferHash: "0x20388f41055ac91d1f948e5d43e6fbbb865407d78e148d1812009509f78d395b",
            hash: "0x20388f41055ac91d1f948e5d43e6fbbb865407d78e148d1812009509f78d395b",
            network: "base",
            chainId: 8453,
            token: "0xd923D15f86D1D81785106eaA85aa53FDbb3a4721",
            tokenSymbol: "USDC",
            apiKeyId: "key_3f9a",
            idempotencyKey: "payroll-2026-11",
            blockNumber: state === "pending" ? null : 1234,
            blockHash: state === "pending" ? null : "0x5404b41df8ec10004ec0c7c7723c00c2008bf2d1f8a9646adf61a8198cb892cb",
            confirmations: state === "pending" ? 0 : type === "payout.item.finalized" ? 65 : 1,
          },
        },
      ],
    },
  );
}

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
  Object.entries({ ...TRANSFER_EVENTS, ...PAYOUT_ITEM_EVENTS, ...WALLET_EVENTS, ...AUDIT_EVENTS, ...APPROVAL_EVENTS }).map(([type, description]) => [
    type,
    {
      post: {
        summary: type,
        description:
          `${description} Sent to every WEBHOOK_URL with the Standard Webhooks headers webhook-id (the same on every retry), ` +
          "webhook-timestamp and webhook-signature (v1, HMAC-SHA256 with each WEBHOOK_SECRET). Answer 2xx to acknowledge; " +
          "410 stops this event for the endpoint; anything else is retried with backoff for 24 h.",
        requestBody: { required: true, content: { "application/json": { schema: eventSchema(type as EventName) } } },
        responses: { "200": { description: "acknowledged (any 2xx)" }, "410": { description: "stop delivering this event to this endpoint" } },
      },
    },
  ]),
);
