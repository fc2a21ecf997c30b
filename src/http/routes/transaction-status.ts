/** GET /transactions/:hash: what happened to a transaction, in plain words (not the v5 record). */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { seesTransferOf } from "../auth.js";
import type { TransactionStatusReader } from "../../lookup/transaction-status.js";
import { TransactionStatusParamsSchema, TransactionStatusSchema, errorReplies } from "../schemas.js";

export interface TransactionStatusRouteOptions {
  /** The status reader of the network a hash is on: its transfer's, or the default network's for any other hash. */
  statusesOf: (hash: string) => Promise<TransactionStatusReader>;
}

export const transactionStatusRoute: FastifyPluginAsyncTypebox<TransactionStatusRouteOptions> = async (app, { statusesOf }) => {
  app.get(
    "/transactions/:hash",
    {
      schema: {
        summary: "What happened to a transaction",
        description:
          "A status document for people and dashboards: pending, confirmed, failed (mined but reverted), " +
          "dropped (this service sent it, the node no longer has it) or replaced (its nonce went to another " +
          "transaction), with confirmations, receipt figures and the decoded ERC-20 transfer. A transfer sent with another " +
          "API key is described to a transfer key as the chain shows it (read and admin keys see everything).",
        tags: ["transactions"],
        operationId: "getTransactionStatus",
        params: TransactionStatusParamsSchema,
        response: { 200: TransactionStatusSchema, ...errorReplies(400, 404, 500, 503) },
      },
    },
    async (request) => {
      const hash = request.params.hash.toLowerCase();
      return (await statusesOf(hash)).read(hash, (senderKeyId) => seesTransferOf(request, senderKeyId));
    },
  );
};
