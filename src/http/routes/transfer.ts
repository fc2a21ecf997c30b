/** POST /transfer: send tokens from the hot wallet; answers the ethers v5 record as soon as the node accepts it. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { ApprovalDesk, AwaitingApproval } from "../../approvals/approval-desk.js";
import { describeApproval } from "../approval-reply.js";
import type { TransferNetwork } from "../transfer-network.js";
import { InvalidAddressError, parseRecipientAddress } from "../../domain/recipient-address.js";
import { InvalidAmountError, parseTokenAmount } from "../../domain/token-amount.js";
import { ServiceError } from "../../errors.js";
import { readIdempotencyKey } from "../idempotency-key.js";
import { toV5TransferRecord } from "../../wire/v5-record.js";
import { ApprovalSchema, type TransferBody, TransferBodySchema, TransferHeadersSchema, TransferQuerySchema, TransferReplySchema, errorReplies } from "../schemas.js";

export interface TransferRouteOptions {
  /** The network a request names (the default when it names none): 400 for one not configured, 503 for one not running. */
  networkFor: (choice: { network?: string | number; token?: string }) => TransferNetwork;
  /** Told how each request ended, for the transfers_total metric. */
  countOutcome: (outcome: "sent" | "awaiting_approval" | "replayed" | "refused", code?: string) => void;
  /** Told the base units of every transfer sent, and on which network, for the transfer_tokens_sent_total metric. */
  countUnitsSent: (units: bigint, network: TransferNetwork) => void;
  /** Throws while the service does not sign (PAUSE_ON_UNEXPECTED_OUTFLOW): a new transfer is answered 503, a repeat its first answer. */
  assertSigning: () => void;
  /** Where a transfer above APPROVAL_ABOVE waits for a second admin key. */
  approvals: Pick<ApprovalDesk, "request" | "sendUnlessWaiting">;
}

const MAX_WAIT_MS = 120_000;
const DEFAULT_WAIT_MS = 60_000;

const TRANSFER_SCHEMA = {
  summary: "Send tokens from the hot wallet",
  description:
    "Sends `amount` tokens to `toAddress` (or `to`) and answers at once, before the transaction is mined " +
    "(confirmations 0). Anything that would make the transfer fail is checked first and answered with 417. " +
    "200 means the service signed and journaled the transfer and owns it until it is mined or reported failed " +
    "(GET /transactions/{hash}); 417 that nothing of it was or will be sent; 503 (NODE_RATE_LIMITED, SIGNER_UNAVAILABLE, SIGNING_PAUSED, " +
    "JOURNAL_UNAVAILABLE) that nothing was done: retry; 503 TRANSFER_OUTCOME_UNKNOWN (the shared database did not confirm " +
    "the record, or the journal could not record the node's refusal) that it may still be sent: retry with the same key, or look its hash up first. " +
    "A repeat of an Idempotency-Key gets the first answer. " +
    "Above APPROVAL_ABOVE: 202 with the transfer's id, awaiting_approval, and nothing signed until another admin key approves it " +
    "(POST /transfers/{id}/approve); a repeat of its key answers the 202 again while it waits, then the record (or 417 once rejected or expired). " +
    "With ?waitConfirmations=N it answers once the transfer has N confirmations, or when waitTimeoutMs runs out, " +
    "with the record as it stands then.",
  tags: ["transfers"],
  operationId: "transfer",
  headers: TransferHeadersSchema,
  querystring: TransferQuerySchema,
  body: TransferBodySchema,
  response: { 200: TransferReplySchema, 202: ApprovalSchema, ...errorReplies(400, 401, 403, 409, 413, 415, 417, 422, 429, 500, 503) },
};

export const transferRoute: FastifyPluginAsyncTypebox<TransferRouteOptions> = async (app, options) => {
  const { networkFor, countOutcome, countUnitsSent, assertSigning, approvals } = options;
  app.post(
    "/transfer",
    {
      schema: TRANSFER_SCHEMA,
      onError: async (_request, _reply, error) => {
        countOutcome("refused", (error as { code?: string }).code ?? "INTERNAL_ERROR");
      },
    },
    async (request, reply) => {
      // First: which network and token decide how the rest reads (an amount's decimals).
      const chosen = networkFor(request.body);
      const { transfers, tokenDecimals, policy } = chosen;
      const recipient = readRecipient(request.body);
      const units = readUnits(request.body.amount, tokenDecimals);
      const idempotencyKey = readIdempotencyKey(request.headers["idempotency-key"]);
      const { apiKeyId } = request;
      // Keys are per API key: two clients choosing the same key never see each other's transfers.
      const journalKey = idempotencyKey === undefined ? undefined : `${apiKeyId}/${idempotencyKey}`;
      const authorize = () => {
        assertSigning();
        return policy.authorize(apiKeyId, recipient, units);
      };
      const transferRequest = { recipient, units, apiKeyId, token: chosen.token.address };
      const answerWaiting = (awaiting: AwaitingApproval) => {
        countOutcome(awaiting.replayed ? "replayed" : "awaiting_approval");
        if (awaiting.replayed) reply.header("idempotent-replayed", "true");
        request.log.info({ id: awaiting.entry.id, network: chosen.network.name, token: chosen.token.symbol, recipient, units: units.toString(), idempotencyKey, apiKeyId, replayed: awaiting.replayed }, "transfer awaits an admin's approval");
        return reply.code(202).send(describeApproval(awaiting.entry, chosen));
      };
      const decision = policy.decideApproval(apiKeyId, units, [recipient]);
      let outcome;
      try {
        if (decision.needsApproval) {
          // Checked now (403, a pause's 503), counted against the key's cap only when it is approved and sent.
          const awaiting = await approvals.request(chosen, transferRequest, journalKey, () => authorize()());
          if (awaiting) return answerWaiting(awaiting);
        }
        outcome = await approvals.sendUnlessWaiting(chosen, transferRequest, journalKey, () => transfers.sendTokenTransfer(transferRequest, journalKey, authorize));
      } finally {
        decision.release();
      }
      if ("awaiting" in outcome) return answerWaiting(outcome.awaiting);
      const { transfer, replayed } = outcome.sent;
      countOutcome(replayed ? "replayed" : "sent");
      if (!replayed) countUnitsSent(units, chosen);
      const logged = { hash: transfer.hash, network: chosen.network.name, token: chosen.token.symbol, nonce: transfer.transaction.nonce, recipient, units: units.toString(), idempotencyKey, apiKeyId };
      if (replayed) {
        reply.header("idempotent-replayed", "true");
        request.log.info(logged, "transfer answered from the journal (repeated Idempotency-Key)");
      } else {
        request.log.info(logged, "transfer sent");
      }
      const record = toV5TransferRecord(transfer);
      const { waitConfirmations, waitTimeoutMs } = request.query;
      if (waitConfirmations === undefined || waitConfirmations === "0") return { result: record };
      const timeoutMs = Math.min(MAX_WAIT_MS, waitTimeoutMs === undefined ? DEFAULT_WAIT_MS : Number(waitTimeoutMs));
      const confirmations = await chosen.awaitConfirmations(transfer.hash, Number(waitConfirmations), timeoutMs);
      return { result: { ...record, confirmations } };
    },
  );
};

function readRecipient({ toAddress, to }: TransferBody): string {
  if (toAddress !== undefined && to !== undefined && toAddress.toLowerCase() !== to.toLowerCase()) {
    throw new ServiceError("CONFLICTING_RECIPIENT", "toAddress and to name different addresses; send only toAddress");
  }
  const address = toAddress ?? to;
  if (address === undefined) throw new ServiceError("MISSING_RECIPIENT", "body must have toAddress");
  try {
    return parseRecipientAddress(address);
  } catch (error) {
    if (error instanceof InvalidAddressError) throw new ServiceError("INVALID_ADDRESS", `toAddress: ${error.message}`);
    throw error;
  }
}

function readUnits(amount: number | string, decimals: number): bigint {
  try {
    return parseTokenAmount(amount, decimals);
  } catch (error) {
    if (error instanceof InvalidAmountError) throw new ServiceError("INVALID_AMOUNT", error.message);
    throw error;
  }
}
