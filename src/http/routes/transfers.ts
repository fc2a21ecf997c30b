/**
 * GET /transfers: the service's own transfers, newest first, in pages (JSON) or as one CSV export
 * (`Accept: text/csv`), from the journal only. A `transfer` key sees the transfers it made; `read` and
 * `admin` keys see every one.
 */
import { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { getAddress } from "ethers";
import { ServiceError } from "../../errors.js";
import type { HistoryFilter, TransferJournal } from "../../journal/transfer-journal.js";
import { wantsCsv } from "../csv-request.js";
import { HISTORY_CSV_COLUMNS, HISTORY_STATES, type HistoryNetwork, type HistoryState, historyCsv, historyItem, historyTokenOf, journalStatesOf } from "../../lookup/transfer-history.js";
import type { ServedNetwork, ServedToken } from "../../network-settings/network-choice.js";
import { AddressSchema, AttemptStatusSchema, errorReplies } from "../schemas.js";

export interface TransfersRouteOptions {
  journal: TransferJournal;
  /** Every configured network, the default first: how rows are named (decimals of a network not running yet: null). */
  networks: () => readonly HistoryNetwork[];
  /** The configured network and token the `network` and `token` filters name (each its default when not named); 400 for another. */
  named: (choice: { network?: string; token?: string }) => { network: ServedNetwork; token: ServedToken };
  /** The id of every configured API key: an Idempotency-Key is found under whichever sent it. */
  apiKeyIds: readonly string[];
}

/** The most items one JSON page holds. */
const MAX_PAGE = 500; // the limit pattern below says the same
const DEFAULT_PAGE = 100;

const HistoryItemSchema = Type.Object({
  id: Type.Integer({ description: "its place in the history; pages continue below the last one (nextCursor)" }),
  hash: Type.Union([Type.String(), Type.Null()], { description: "what POST /transfer answered; null while nothing is signed (sending) or when refused before signing" }),
  state: Type.Union(
    HISTORY_STATES.map((state) => Type.Literal(state)),
    {
      description:
        "as the journal knows it: awaiting_approval (above APPROVAL_ABOVE: waits for a second admin key, nothing signed), sending (key claimed, nothing signed yet), pending (signed, not mined), mined (the chain used its nonce with one of its attempts; " +
        "receipt figures: GET /transactions/{hash}), replaced (another transaction took its nonce), rejected (refused before or at its first broadcast: 417; " +
        "also rejected by an admin or expired while awaiting approval: refusal.code APPROVAL_REJECTED, APPROVAL_EXPIRED), cancelled (its cancel was mined)",
    },
  ),
  kind: Type.Union([Type.Literal("transfer"), Type.Literal("payout"), Type.Literal("gas-top-up"), Type.Literal("payout-approval"), Type.Literal("nonce-filler")], {
    description:
      "transfer: a client's; payout: a client's payout batch (POST /payouts; its recipient is the payout contract, its amount the total it pays); " +
      "gas-top-up: ETH sent to another lane of the pool; payout-approval: the wallet's approve() of the payout contract; " +
      "nonce-filler: a 0-value transaction to the wallet itself that filled a nonce",
  }),
  network: Type.String({ description: "the network's name in NETWORKS_FILE; without the file, its chain id in decimal" }),
  chainId: Type.Integer(),
  transfer: Type.Object({
    token: Type.String({ description: "the token contract's address, or \"native\" for the network's native coin" }),
    tokenSymbol: Type.String({ description: "the token's symbol in NETWORKS_FILE; without the file (or for a token it no longer names), its address" }),
    from: Type.String({ description: "the lane (wallet) that sends it" }),
    to: Type.String({ description: "the recipient" }),
    amount: Type.String({ description: "base units requested, decimal (0 for a top-up or filler)" }),
    amountInTokens: Type.Union([Type.String(), Type.Null()], { description: "null for a token or network the service no longer pays in, or a network not reached since it started" }),
    requestedAmount: Type.String(),
  }),
  carriedBy: Type.Union([Type.String(), Type.Null()], { description: "the attempt that carries it: the mined one once known, else the latest" }),
  approval: Type.Optional(
    Type.Object(
      {
        expiresAt: Type.String({ description: "when it expires undecided (ISO time)" }),
        decidedBy: Type.Union([Type.String(), Type.Null()], { description: "the admin key that approved or rejected it, or expiry; null while it waits" }),
        decidedAt: Type.Union([Type.String(), Type.Null()], { description: "ISO time; null while it waits" }),
      },
      { description: "only for a transfer that needed a second admin key's approval (APPROVAL_ABOVE): POST /transfers/{id}/approve or /reject decide it" },
    ),
  ),
  items: Type.Optional(
    Type.Array(
      Type.Object({ id: Type.String(), toAddress: Type.String(), amount: Type.String({ description: "base units" }), amountInTokens: Type.Union([Type.String(), Type.Null()]) }),
      { description: "a payout batch only: the items it pays (not those an earlier batch holds); each item's outcome: GET /payouts/{id}. In CSV, one more row per item (kind payout-item, payoutItemId)" },
    ),
  ),
  nonce: Type.Union([Type.Integer(), Type.Null()]),
  idempotencyKey: Type.Union([Type.String(), Type.Null()], { description: "null once older than IDEMPOTENCY_KEY_TTL_HOURS" }),
  apiKeyId: Type.Union([Type.String(), Type.Null()], { description: "the id of the API key that asked for it (never the key)" }),
  refusal: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], { description: "what a rejected transfer's client was told" }),
  attempts: Type.Array(AttemptStatusSchema),
  finalized: Type.Boolean(),
  finalizedBlock: Type.Union([Type.Integer(), Type.Null()]),
  createdAt: Type.String({ description: "ISO time it was asked for" }),
});

const TransfersQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$", description: "nextCursor of the previous page" })),
    limit: Type.Optional(
      Type.String({ pattern: "^([1-9][0-9]?|[1-4][0-9]{2}|500)$", description: `items per page, 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE}); with CSV, at most this many rows (default: all)` }),
    ),
    state: Type.Optional(
      Type.String({
        pattern: `^(${HISTORY_STATES.join("|")})(,(${HISTORY_STATES.join("|")}))*$`,
        description: "comma-separated states to list",
        examples: ["pending,sending"],
      }),
    ),
    since: Type.Optional(Type.String({ maxLength: 40, description: "made at or after this ISO time", examples: ["2026-11-01T00:00:00Z"] })),
    until: Type.Optional(Type.String({ maxLength: 40, description: "made before this ISO time" })),
    recipient: Type.Optional(AddressSchema),
    apiKeyId: Type.Optional(Type.String({ pattern: "^(key_[0-9a-f]{12}|anonymous)$", description: "the id of an API key (as logs and this list show it)", examples: ["key_3f9a0c41d2e7"] })),
    idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "as the client sent it, under any configured API key (or the one apiKeyId names)" })),
    payoutItemId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: "a payout item's id: the batch that pays it, under any configured API key (or the one apiKeyId names)", examples: ["invoice-881"] }),
    ),
    lane: Type.Optional({ ...AddressSchema, description: "the sending wallet (a lane of the pool)" }),
    network: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "a network's name or chain id (400 UNKNOWN_NETWORK for one not served)" })),
    token: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "a token's symbol, address or \"native\", of the network named (else the default network); 400 UNKNOWN_TOKEN for one not served" })),
  },
  { additionalProperties: false },
);

export const transfersRoute: FastifyPluginAsyncTypebox<TransfersRouteOptions> = async (app, { journal, networks, named: namedNetwork, apiKeyIds }) => {
  app.get(
    "/transfers",
    {
      schema: {
        summary: "The service's transfers, newest first",
        description:
          "Pages of the journal's transfers, newest first: follow nextCursor until it is null (a page may be short, even empty, and still have one). Filters combine (all must hold). " +
          "With `Accept: text/csv`, the same rows as one CSV export (RFC 4180; every matching row unless limit is given), streamed in constant memory. " +
          "Read from the journal only (no node calls). A `transfer` key sees its own transfers; `read` and `admin` keys see all.",
        tags: ["transactions"],
        operationId: "listTransfers",
        querystring: TransfersQuerySchema,
        response: {
          200: {
            description: "a page of the history, or with Accept: text/csv the CSV export",
            content: {
              "application/json": {
                schema: Type.Object({
                  transfers: Type.Array(HistoryItemSchema),
                  nextCursor: Type.Union([Type.String(), Type.Null()], { description: "the cursor of the next page; null on the last" }),
                }),
              },
              "text/csv": { schema: Type.String({ description: `columns: ${HISTORY_CSV_COLUMNS.join(", ")}; attempts: their hashes, space-separated` }) },
            },
          },
          ...errorReplies(400, 401, 403, 429, 500),
        },
      },
    },
    async (request, reply) => {
      const { query } = request;
      // A network or token named must be one served (else 400); its rows are those of its chain.
      const named = query.network === undefined && query.token === undefined ? undefined : namedNetwork(query);
      const described = networks();
      const filter: HistoryFilter = {
        states: query.state === undefined ? undefined : journalStatesOf(query.state.split(",") as HistoryState[]),
        since: timeOf(query.since, "since"),
        until: timeOf(query.until, "until"),
        recipient: query.recipient && getAddress(query.recipient),
        apiKeyId: query.apiKeyId,
        lane: query.lane && getAddress(query.lane),
        // With one network (or one token) every row is its own: naming it filters nothing out.
        chainId: named && described.length > 1 ? named.network.chainId.toString() : undefined,
        token: named && query.token !== undefined && named.network.tokens.length > 1 ? named.token.address : undefined,
      };
      // A transfer key's history is its own: asking for another key's finds nothing (no state matches).
      if (request.apiKeyRole === "transfer") {
        if (filter.apiKeyId !== undefined && filter.apiKeyId !== request.apiKeyId) filter.states = [];
        filter.apiKeyId = request.apiKeyId;
      }
      const { idempotencyKey, payoutItemId } = query;
      const senders = filter.apiKeyId === undefined ? apiKeyIds : [filter.apiKeyId];
      if (idempotencyKey !== undefined) filter.idempotencyKeys = senders.map((sender) => `${sender}/${idempotencyKey}`);
      if (payoutItemId !== undefined) {
        if (idempotencyKey !== undefined) throw new ServiceError("INVALID_QUERY", "idempotencyKey and payoutItemId: name one of them");
        filter.payoutItem = { itemId: payoutItemId, apiKeyIds: senders };
      }
      const beforeId = query.cursor === undefined ? undefined : Number(query.cursor);
      if (wantsCsv(request.headers.accept)) {
        const stamp = new Date().toISOString().replaceAll(":", "-").slice(0, 19);
        return reply
          .type("text/csv; charset=utf-8")
          .header("content-disposition", `attachment; filename="transfers-${stamp}.csv"`)
          // The CSV text, streamed: the schema's type is what the client receives, not how it is sent.
          .send(Readable.from(historyCsv(journal, filter, beforeId, query.limit === undefined ? undefined : Number(query.limit), described)) as unknown as string);
      }
      const { entries, nextBefore } = await journal.history(filter, beforeId, query.limit === undefined ? DEFAULT_PAGE : Number(query.limit));
      return {
        transfers: entries.map((entry) => historyItem(entry, historyTokenOf(described, entry))),
        nextCursor: nextBefore === undefined ? null : String(nextBefore),
      };
    },
  );
};

function timeOf(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(time)) throw new ServiceError("INVALID_QUERY", `${name}: not an ISO time such as 2026-11-24T00:00:00Z`);
  return time;
}
