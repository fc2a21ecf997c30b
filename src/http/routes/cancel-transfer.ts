/**
 * POST /transactions/:hash/cancel: replaces a pending transfer with a 0-value transaction to the wallet
 * itself. POST /transactions/:hash/reprice: replaces it with its latest attempt at a price that wins, now
 * (the background does it after STUCK_AFTER_BLOCKS).
 */
import { actsOnTransferOf } from "../auth.js";
import { type FastifyPluginAsyncTypebox, Type } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { type ErrorCode, ServiceError } from "../../errors.js";
import { signerRefusalAnswer } from "../../send-path/signer-refusal.js";
import type { JournalEntry, TransferJournal } from "../../journal/transfer-journal.js";
import type { TransactionStatusReader } from "../../lookup/transaction-status.js";
import { FEE_CEILING_MULTIPLE } from "../../send-path/replacement-fees.js";
import { type CancelRefusal, CancelRefusedError, type TransferReplacer } from "../../send-path/transfer-replacer.js";
import { TransactionStatusParamsSchema, TransactionStatusSchema, errorReplies } from "../schemas.js";

export interface CancelTransferRouteOptions {
  journal: TransferJournal;
  /** The replacer of the lane that sent a transfer (the wallet's, for one wallet); undefined for a wallet taken out of the pool. */
  /** The replacer of the lane and network that sent a transfer; undefined for a wallet or network no longer configured. */
  replacerOf: (entry: JournalEntry) => TransferReplacer | undefined;
  /** The status reader of a transfer's network. */
  statusesOf: (entry: JournalEntry) => TransactionStatusReader;
}

/** Re-pricings of one transfer (its attempts after the first, the background's included) its sender's key may ask for; beyond, an admin key. */
export const SENDER_REPRICES = 3;

const CODE_OF_REFUSAL = {
  "already-mined": "TRANSFER_ALREADY_MINED",
  "not-pending": "TRANSFER_NOT_PENDING",
  "at-fee-cap": "CANCEL_AT_FEE_CAP",
  "being-sent": "TRANSFER_BEING_SENT",
  "too-many-reprices": "REPRICE_NEEDS_ADMIN",
} as const satisfies Record<CancelRefusal, ErrorCode>;

const CANCEL_SCHEMA = {
  summary: "Cancel a pending transfer",
  description:
    "Replaces the transfer (any of its hashes) with a 0-value transaction from the wallet to itself at the same nonce, priced to win " +
    "(12.5% above its latest attempt, at least what the chain needs now, within the fee caps). 202: the cancel is sent, the transfer is " +
    "pending until one of them is mined; 200: it is cancelled. The transfer ends `cancelled` once the cancel is mined, or `confirmed` if " +
    "the transfer itself wins the race, which a repeat of this request then answers with 409 TRANSFER_ALREADY_MINED. A repeat never sends a second cancel. " +
    "Only the API key that sent the transfer may cancel it, or an admin key.",
  tags: ["transactions"],
  operationId: "cancelTransfer",
  params: TransactionStatusParamsSchema,
  response: { 200: TransactionStatusSchema, 202: TransactionStatusSchema, ...errorReplies(400, 401, 403, 404, 409, 429, 500, 503) },
};

const REPRICE_SCHEMA = {
  summary: "Re-price a pending transfer now",
  description:
    "Replaces the transfer's latest attempt (any of its hashes) with the same transaction priced to win (12.5% above it, at least what the chain needs now, " +
    `within the fee caps and at most ${FEE_CEILING_MULTIPLE} times the fee cap of its first attempt), without waiting for STUCK_AFTER_BLOCKS. 202 with the status ` +
    "document: the new attempt is sent, and the transfer is pending until one of its attempts is mined. Only the API key that sent the transfer may " +
    `re-price it, ${SENDER_REPRICES} times (the background's re-pricings count too; 403 REPRICE_NEEDS_ADMIN beyond), or an admin key; an admin alone may pass ` +
    "the ceiling, explicitly (aboveCeiling=true), never the caps.",
  tags: ["transactions"],
  operationId: "repriceTransfer",
  params: TransactionStatusParamsSchema,
  querystring: Type.Object(
    {
      aboveCeiling: Type.Optional(
        Type.Union([Type.Literal("true"), Type.Literal("false")], { description: `true: an admin's explicit say to offer more than ${FEE_CEILING_MULTIPLE} times the first attempt's fee cap (never above the caps)` }),
      ),
    },
    { additionalProperties: false },
  ),
  response: { 202: TransactionStatusSchema, ...errorReplies(400, 401, 403, 404, 409, 429, 500, 503) },
};

export const cancelTransferRoute: FastifyPluginAsyncTypebox<CancelTransferRouteOptions> = async (app, { journal, replacerOf, statusesOf }) => {
  // The transfer that has `hash` among its attempts, if the caller's key sent it (or is an admin's).
  const ownTransfer = async (request: FastifyRequest, hash: string): Promise<JournalEntry> => {
    const entry = await journal.lookUpByHash(hash);
    if (!entry) throw new ServiceError("TRANSACTION_NOT_FOUND", `transaction ${hash} is not a transfer of this service`);
    if (!actsOnTransferOf(request, entry.apiKeyId)) throw new ServiceError("CANCEL_NOT_ALLOWED", `transfer ${hash} was sent with another API key`);
    return entry;
  };

  app.post("/transactions/:hash/cancel", { schema: CANCEL_SCHEMA }, async (request, reply) => {
    const hash = request.params.hash.toLowerCase();
    const entry = await ownTransfer(request, hash);
    // A wallet taken out of the pool: its transfers are settled, or they would have held the start up.
    const replacer = replacerOf(entry);
    await audited(journal, request, "operator.cancel", entry, hash);
    await replaceOrRefuse(() => replacer?.cancel(hash), CODE_OF_REFUSAL);
    const status = await statusesOf(entry).read(hash);
    if (!replacer && status.state !== "confirmed" && status.state !== "failed") {
      throw new ServiceError("TRANSFER_NOT_PENDING", `transfer ${hash} was sent by ${entry.lane}, a wallet no longer configured; it is settled (${status.state})`);
    }
    if (status.state === "confirmed" || status.state === "failed") {
      throw new ServiceError("TRANSFER_ALREADY_MINED", `transfer ${hash} was mined (${status.carriedBy ?? hash}) before its cancel`);
    }
    return reply.code(status.state === "cancelled" ? 200 : 202).send(status);
  });

  app.post("/transactions/:hash/reprice", { schema: REPRICE_SCHEMA }, async (request, reply) => {
    const hash = request.params.hash.toLowerCase();
    const entry = await ownTransfer(request, hash);
    const replacer = replacerOf(entry);
    if (!replacer) throw new ServiceError("TRANSFER_NOT_PENDING", `transfer ${hash} was sent by ${entry.lane}, a wallet no longer configured; it is settled`);
    const aboveCeiling = request.query.aboveCeiling === "true";
    const admin = request.apiKeyRole === "admin";
    if (!admin && aboveCeiling) {
      await audited(journal, request, "operator.reprice_refused", entry, hash);
      throw new ServiceError("REPRICE_NEEDS_ADMIN", "passing the fee ceiling: only an admin key may");
    }
    await audited(journal, request, "operator.reprice", entry, hash);
    try {
      // The sender's key: its transfer's first attempt and SENDER_REPRICES more at most (counted by the replacer, one request at a time).
      await replaceOrRefuse(() => replacer.reprice(hash, { aboveCeiling, attemptsAtMost: admin ? undefined : SENDER_REPRICES + 1 }), { ...CODE_OF_REFUSAL, "at-fee-cap": "REPRICE_AT_FEE_CAP" });
    } catch (error) {
      if (error instanceof ServiceError && error.code === "REPRICE_NEEDS_ADMIN") await audited(journal, request, "operator.reprice_refused", entry, hash);
      throw error;
    }
    return reply.code(202).send(await statusesOf(entry).read(hash));
  });
};

// The audit log's entry of an operator's cancel or re-pricing, durable before anything is signed for it: the
// attempt it signs follows it (its own entry); a refusal (409) leaves the request on record alone.
async function audited(journal: TransferJournal, request: FastifyRequest, kind: string, entry: JournalEntry, hash: string): Promise<void> {
  journal.recordAudit({ kind, actor: request.apiKeyId, transferId: entry.id, detail: { hash } });
  await journal.flushed();
}

async function replaceOrRefuse(replace: () => Promise<unknown> | undefined, codes: Record<CancelRefusal, ErrorCode>): Promise<void> {
  try {
    await replace();
  } catch (error) {
    if (error instanceof CancelRefusedError) throw new ServiceError(codes[error.reason], error.message);
    // Nothing was signed: not a fault of the service, a 503 to retry (after an admin's resume, when paused).
    throw signerRefusalAnswer(error) ?? error;
  }
}
