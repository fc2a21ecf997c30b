/** Request and response schemas shared by the routes: the HTTP contract, and the source of the OpenAPI document. */
import { type Static, Type } from "@sinclair/typebox";

import { AddressSchema, TxHashSchema } from "../domain/formats.js";

export { AddressSchema, TxHashSchema };

export const TokenAmountSchema = Type.Union([Type.Number(), Type.String({ maxLength: 100 })], {
  description:
    "amount in whole token units (1.5 is one and a half tokens), as a plain decimal number or string; " +
    "large or very precise amounts should be strings",
  examples: ["1.5", 25],
});

export const BigNumberSchema = Type.Object(
  {
    type: Type.Literal("BigNumber"),
    hex: Type.String({ pattern: "^0x[0-9a-f]+$", description: "lowercase hex quantity, even number of digits" }),
  },
  { description: "an ethers v5 BigNumber", examples: [{ type: "BigNumber", hex: "0x0de0b6b3a7640000" }] },
);

const AccessListSchema = Type.Array(
  Type.Object({ address: Type.String(), storageKeys: Type.Array(Type.String()) }),
  { description: "EIP-2930 access list" },
);

/** The /transfer record, properties in ethers v5's order (the serializer writes them in this order). */
export const TransferRecordSchema = Type.Object(
  {
    type: Type.Integer(),
    chainId: Type.Integer(),
    nonce: Type.Integer(),
    maxPriorityFeePerGas: BigNumberSchema,
    maxFeePerGas: BigNumberSchema,
    gasPrice: Type.Null(),
    gasLimit: BigNumberSchema,
    to: Type.String({ description: "the token contract" }),
    value: BigNumberSchema,
    data: Type.String({ description: "ERC-20 transfer(to, amount) call data" }),
    accessList: AccessListSchema,
    hash: Type.String(),
    v: Type.Integer(),
    r: Type.String(),
    s: Type.String(),
    from: Type.String({ description: "the hot wallet" }),
    confirmations: Type.Integer({ description: "always 0: the transaction has just been accepted by the node" }),
  },
  { description: "the transaction as ethers v5 returned it from contract.transfer(...)" },
);

/** The /transfer record on a chain without EIP-1559 (a legacy transaction), properties in ethers v5's order. */
export const LegacyTransferRecordSchema = Type.Object(
  {
    nonce: Type.Integer(),
    gasPrice: BigNumberSchema,
    gasLimit: BigNumberSchema,
    to: Type.String({ description: "the token contract" }),
    value: BigNumberSchema,
    data: Type.String({ description: "ERC-20 transfer(to, amount) call data" }),
    chainId: Type.Integer(),
    v: Type.Integer({ description: "EIP-155: chainId * 2 + 35 + parity" }),
    r: Type.String(),
    s: Type.String(),
    from: Type.String({ description: "the hot wallet" }),
    hash: Type.String(),
    type: Type.Null({ description: "ethers v5 left it unset for a legacy transaction" }),
    confirmations: Type.Integer(),
  },
  { description: "the legacy (type 0) transaction as ethers v5 returned it from contract.transfer(...) on a chain without a base fee" },
);

/** The /getTransaction record, properties in ethers v5's order. */
export const LookupRecordSchema = Type.Object(
  {
    hash: Type.String(),
    type: Type.Integer(),
    accessList: Type.Union([AccessListSchema, Type.Null()]),
    blockHash: Type.Union([Type.String(), Type.Null()]),
    blockNumber: Type.Union([Type.Integer(), Type.Null()]),
    transactionIndex: Type.Union([Type.Integer(), Type.Null()]),
    confirmations: Type.Integer({ description: "0 while pending; latest block - blockNumber + 1 once mined" }),
    from: Type.String(),
    gasPrice: Type.Optional(BigNumberSchema),
    maxPriorityFeePerGas: Type.Optional(BigNumberSchema),
    maxFeePerGas: Type.Optional(BigNumberSchema),
    gasLimit: BigNumberSchema,
    to: Type.Union([Type.String(), Type.Null()]),
    value: BigNumberSchema,
    nonce: Type.Integer(),
    data: Type.String(),
    r: Type.Optional(Type.String()),
    s: Type.Optional(Type.String()),
    v: Type.Optional(Type.Integer()),
    creates: Type.Union([Type.String(), Type.Null()], { description: "address of the created contract, else null" }),
    raw: Type.Optional(Type.String()),
    chainId: Type.Integer(),
  },
  { description: "the transaction as ethers v5 returned it from provider.getTransaction(hash)" },
);

export const NetworkChoiceSchema = Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 1 })], {
  description: "the network to pay on: its name in NETWORKS_FILE, or its chain id; without it the default network (see docs/networks.md)",
  examples: ["base", 8453],
});

export const TokenChoiceSchema = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "the token to pay in: its symbol in NETWORKS_FILE (any case), its address, or \"native\" for the network's native coin; without it the network's default token",
  examples: ["USDC"],
});

export const TransferBodySchema = Type.Object(
  {
    toAddress: Type.Optional(AddressSchema),
    to: Type.Optional({ ...AddressSchema, description: "alias of toAddress (the spec's sample body uses it)" }),
    amount: TokenAmountSchema,
    network: Type.Optional(NetworkChoiceSchema),
    token: Type.Optional(TokenChoiceSchema),
  },
  { additionalProperties: false, description: "toAddress (or to) and amount; network and token when not the default" },
);
export type TransferBody = Static<typeof TransferBodySchema>;

export const TransferHeadersSchema = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      description:
        "makes retries safe: a repeat with the same key and body answers the first result without sending again " +
        "(409 while the first is in flight, 422 with a different body); keys are kept for IDEMPOTENCY_KEY_TTL_HOURS",
      examples: ['"8e03978e-40d5-43e8-bc93-6894a57f9324"'],
    }),
  ),
});

export const GetTransactionBodySchema = Type.Object(
  {
    Tx: TxHashSchema,
    network: Type.Optional({ ...NetworkChoiceSchema, description: "the network to look the hash up on; without it the network of the service's transfer, or the default" }),
  },
  { additionalProperties: false },
);
export type GetTransactionBody = Static<typeof GetTransactionBodySchema>;

export const TransferReplySchema = Type.Object({ result: Type.Union([TransferRecordSchema, LegacyTransferRecordSchema]) });
export const GetTransactionReplySchema = Type.Object({
  result: Type.Union([LookupRecordSchema, Type.Null()], { description: "null when the node does not know the hash" }),
});

export const TransactionStatusParamsSchema = Type.Object({ hash: TxHashSchema });

/** One attempt of the service's own transfer: a transaction signed for it, with its fees and fate. */
export const AttemptStatusSchema = Type.Object({
  hash: Type.String(),
  kind: Type.Union([Type.Literal("transfer"), Type.Literal("cancel"), Type.Literal("top-up"), Type.Literal("approval")], {
    description:
      "cancel: a 0-value transaction to the wallet itself; top-up: ETH for gas sent to another lane of the pool (GAS_TOPUP_*); " +
      "approval: the wallet's approve() of the payout contract (made once per token, before its first payout)",
  }),
  signedAtBlock: Type.Integer({ description: "the chain head when it was signed" }),
  maxFeePerGas: Type.Union([Type.String(), Type.Null()], { description: "wei, decimal; null for a legacy (type 0) transaction" }),
  maxPriorityFeePerGas: Type.Union([Type.String(), Type.Null()], { description: "wei, decimal; null for a legacy (type 0) transaction" }),
  gasPrice: Type.Union([Type.String(), Type.Null()], { description: "wei, decimal; only for a legacy (type 0) transaction" }),
  fate: Type.Union(["mined", "pending", "replaced", "void"].map((fate) => Type.Literal(fate)), {
    description: "mined: carries the transfer. pending: the latest, not mined yet. replaced: replacedBy took its place. void: never mined and never will be",
  }),
  replacedBy: Type.Union([Type.String(), Type.Null()]),
});

export const TransactionStatusSchema = Type.Object(
  {
    hash: Type.String(),
    network: Type.String({ description: "the network it was looked up on: its name in NETWORKS_FILE, or its chain id in decimal without the file" }),
    chainId: Type.Integer(),
    state: Type.Union(["pending", "confirmed", "failed", "dropped", "replaced", "rejected", "cancelled", "unknown"].map((state) => Type.Literal(state)), {
      description:
        "pending: known to the node, not mined. confirmed: mined, receipt status 1. failed: mined, reverted (status 0). " +
        "dropped: signed by this service, unknown to the node now; the service keeps sending the same bytes. " +
        "replaced: another transaction was mined at its nonce (seen twice, seconds apart). " +
        "rejected: the node refused it when it was first sent; it never was and never will be on chain (the client was told 417). " +
        "cancelled: its cancel (a 0-value transaction from the wallet to itself at its nonce) was mined; the recipient got nothing. " +
        "unknown: a node took it and the chain has used its nonce, but the node does not return it now (a lagging backend, usually).",
    }),
    confirmations: Type.Integer({ description: "0 unless mined; latest block - blockNumber + 1" }),
    blockNumber: Type.Union([Type.Integer(), Type.Null()]),
    blockHash: Type.Union([Type.String(), Type.Null()]),
    gasUsed: Type.Union([Type.String(), Type.Null()], { description: "from the receipt, decimal" }),
    effectiveGasPrice: Type.Union([Type.String(), Type.Null()], { description: "from the receipt, wei, decimal" }),
    transfer: Type.Union(
      [
        Type.Object({
          token: Type.String({ description: "the ERC-20 contract, or \"native\" for a plain value transfer of the network's native coin" }),
          tokenSymbol: Type.Union([Type.String(), Type.Null()], { description: "its symbol in NETWORKS_FILE (its address without the file); null for a token this service does not send" }),
          from: Type.String(),
          to: Type.String({ description: "the recipient" }),
          amount: Type.String({
            description: "base units, decimal: once mined, what the recipient received (the token's Transfer events; less than requested for a fee-on-transfer token); before, what was requested",
          }),
          amountInTokens: Type.Union([Type.String(), Type.Null()], { description: "amount in whole token units, when decimals() is known" }),
          requestedAmount: Type.String({ description: "what the transfer(to, amount) call asks for, base units, decimal" }),
        }),
        Type.Null(),
      ],
      { description: "the ERC-20 transfer(to, amount) the transaction carries, else null" },
    ),
    carriedBy: Type.Optional(
      Type.String({
        description:
          "only for this service's transfers: the attempt that carries the transfer (the mined one once mined, else the latest); the figures above are that attempt's, the state is the transfer's",
      }),
    ),
    attempts: Type.Optional(
      Type.Array(
        AttemptStatusSchema,
        { description: "only for this service's transfers: every transaction signed for it, oldest first (the first is what POST /transfer answered)" },
      ),
    ),
    finalized: Type.Optional(
      Type.Boolean({
        description:
          "only for this service's transfers: its outcome is final, at or below the node's finalized block (or FINALITY_BLOCKS deep); no reorganisation can undo it",
      }),
    ),
    finalizedBlock: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], { description: "only for this service's transfers: the finalized block that made it final; null until then" }),
    ),
    payoutId: Type.Optional(Type.Integer({ description: "only for this service's payout batches: the batch's id; GET /payouts/{id} reports its items" })),
    displacedBy: Type.Optional(
      Type.Object(
        {
          hash: Type.String({ description: "the other transaction of the wallet mined at the transfer's nonce" }),
          blockNumber: Type.Integer(),
          blockHash: Type.String(),
          final: Type.Literal(false),
        },
        {
          description:
            "only for this service's transfers, while another transaction of the wallet is found mined at its nonce in a block not final yet: nothing is signed for it and no failure is reported until that block is final (then it is signed again at a new nonce) or leaves the chain",
        },
      ),
    ),
  },
  {
    examples: [
      {
        hash: "0x4e8508c573d248757f356dece3cc6840ee08b1211fff55bd2f01b7ebb1691512",
        state: "confirmed",
        confirmations: 3,
        blockNumber: 2,
        blockHash: "0x4fe97cb89febd511c00c1005607e42bdf80cc87627098854a000ffe89730bd80",
        gasUsed: "53750",
        effectiveGasPrice: "1880830063",
        transfer: {
          token: "0x95b1E4De48aC11f50012B691bF42628F9d175800",
          from: "0x0577A17Da00605B79cA15f1002aEdF1A7f801DdD",
          to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
          amount: "1500000000000000000",
          amountInTokens: "1.5",
          requestedAmount: "1500000000000000000",
        },
      },
    ],
  },
);

/** The most items one payout batch may pay (POST /payouts): about 6 million gas at 200 new holders. */
export const MAX_PAYOUT_ITEMS = 200;

export const PayoutBodySchema = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          toAddress: Type.String({ maxLength: 100, description: "the recipient, checksummed or all one case" }),
          amount: TokenAmountSchema,
          id: Type.String({
            maxLength: 64,
            description: "the item's id, 1 to 64 printable ASCII characters without spaces, unique per API key across batches: an item already paid or being paid is never paid again",
            examples: ["invoice-881"],
          }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_PAYOUT_ITEMS },
    ),
    network: Type.Optional(NetworkChoiceSchema),
    token: Type.Optional(TokenChoiceSchema),
  },
  { additionalProperties: false, description: `1 to ${MAX_PAYOUT_ITEMS} items; network and token when not the default (an ERC-20 token)` },
);
export type PayoutBody = Static<typeof PayoutBodySchema>;

export const PayoutHeadersSchema = Type.Object({
  // Required, and checked by the route: its absence is answered IDEMPOTENCY_KEY_REQUIRED, not a schema error.
  "idempotency-key": Type.Optional(
    Type.String({
      description:
        "required (400 IDEMPOTENCY_KEY_REQUIRED without it): a repeat with the same key and items answers the first batch without paying again (409 while the first is in flight, 422 with other items)",
      examples: ['"payroll-2026-11"'],
    }),
  ),
});

export const PayoutParamsSchema = Type.Object({ id: Type.String({ pattern: "^[0-9]{1,15}$", description: "the batch's id, as POST /payouts answered it" }) });

const PayoutItemSchema = Type.Object({
  id: Type.String(),
  toAddress: Type.String(),
  amount: Type.String({ description: "whole tokens" }),
  units: Type.String({ description: "base units, decimal" }),
  state: Type.Union([Type.Literal("pending"), Type.Literal("paid"), Type.Literal("failed")], {
    description:
      "pending: the batch is not mined yet (or its receipt not read yet), or the item failed in a block not final yet (reason); " +
      "paid: mined, and the item's tokens moved; failed, for good: in a final block the item's transfer failed (reason), " +
      "or the batch reverted, was cancelled or lost its nonce; or the node refused the batch",
  }),
  reason: Type.Union([Type.String(), Type.Null()], { description: "why it failed (or, pending, will fail unless a reorganisation changes it), with the token's own words" }),
  duplicateOf: Type.Union([Type.Integer(), Type.Null()], {
    description: "an earlier batch of this API key holds the item's id: this batch did not pay it, and state and reason are that batch's",
  }),
});

export const PayoutReplySchema = Type.Object({
  id: Type.Integer({ description: "the batch's id (GET /payouts/{id}; also its id in GET /transfers)" }),
  network: Type.String(),
  token: Type.String({ description: "the token's symbol (its address without NETWORKS_FILE)" }),
  contract: Type.String({ description: "the payout contract that pays the batch" }),
  transaction: Type.Union([TransferRecordSchema, LegacyTransferRecordSchema], { description: "the ethers v5 record of the batch's transaction, as POST /transfer answers it" }),
  items: Type.Array(PayoutItemSchema),
  status: Type.Optional({ ...TransactionStatusSchema, description: "GET /payouts/{id} only: the status document of the batch's transaction (GET /transactions/{hash})" }),
});

export const TransferQuerySchema = Type.Object(
  {
    waitConfirmations: Type.Optional(
      Type.String({ pattern: "^([0-9]|1[0-2])$", description: "answer only once the transfer has this many confirmations (0 to 12)" }),
    ),
    waitTimeoutMs: Type.Optional(
      Type.String({ pattern: "^[0-9]{1,6}$", description: "how long to wait at most, in ms (up to 120000; default 60000); then answer as it stands" }),
    ),
  },
  { additionalProperties: false },
);

/** Every error, ours or Fastify's, in Fastify's envelope. */
export const ErrorReplySchema = Type.Object(
  {
    statusCode: Type.Integer(),
    code: Type.String({ description: "machine-readable error code" }),
    error: Type.String({ description: "HTTP reason phrase" }),
    message: Type.String({ description: "what went wrong, for people" }),
  },
  { examples: [{ statusCode: 417, code: "INSUFFICIENT_TOKEN_BALANCE", error: "Expectation Failed", message: "the hot wallet can spend 0 USDC (0 base units) of the token after transfers in flight, 1.5 USDC (1500000 base units) requested" }] },
);

/** The error replies a route can send, keyed by status, for its response schema. */
export const ApprovalParamsSchema = Type.Object({ id: Type.String({ pattern: "^[0-9]{1,15}$", description: "the transfer's id, as the 202 answered it (GET /transfers lists it)" }) });

/** A transfer or payout above APPROVAL_ABOVE, as it waits for (or was refused) a second admin key's approval. */
export const ApprovalSchema = Type.Object(
  {
    id: Type.Integer({ description: "the transfer's id: GET /transfers lists it, POST /transfers/{id}/approve and /reject take it" }),
    state: Type.Union([Type.Literal("awaiting_approval"), Type.Literal("rejected"), Type.Literal("expired")], {
      description: "awaiting_approval: nothing signed yet; rejected (by an admin) and expired (APPROVAL_TTL_HOURS): never sent, the key answers 417",
    }),
    network: Type.String(),
    token: Type.String({ description: "the token's symbol (its address for a token the deployment does not name)" }),
    toAddress: Type.String({ description: "the recipient; for a payout batch, the payout contract" }),
    amount: Type.String({ description: "whole tokens (a batch: the total of the items it pays)" }),
    units: Type.String({ description: "base units, decimal" }),
    payoutItems: Type.Union([Type.Integer(), Type.Null()], { description: "a payout batch: how many items it pays; null for a transfer" }),
    apiKeyId: Type.Union([Type.String(), Type.Null()], { description: "the API key that asked for it: it may not decide it" }),
    expiresAt: Type.String({ description: "when it expires undecided (ISO time)" }),
    decidedBy: Type.Union([Type.String(), Type.Null()], { description: "the admin key that decided it, or expiry; null while it waits" }),
    decidedAt: Type.Union([Type.String(), Type.Null()], { description: "ISO time; null while it waits" }),
  },
  { description: "A transfer that waits for an admin's approval (POST /transfer and POST /payouts answer it with 202); nothing of it is signed until approved" },
);

export type Approval = Static<typeof ApprovalSchema>;

export function errorReplies(...statusCodes: number[]): Record<number, typeof ErrorReplySchema> {
  return Object.fromEntries(statusCodes.map((statusCode) => [statusCode, ErrorReplySchema]));
}
