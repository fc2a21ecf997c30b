/** POST /getTransaction: a transaction by hash, as ethers v5 returned it, with a fresh confirmation count. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { JsonRpcProvider } from "ethers";
import { findTransaction } from "../../chain/transaction-lookup.js";
import { toV5LookupRecord } from "../../wire/v5-record.js";
import { GetTransactionBodySchema, GetTransactionReplySchema, errorReplies } from "../schemas.js";

export interface GetTransactionRouteOptions {
  provider: JsonRpcProvider;
}

export const getTransactionRoute: FastifyPluginAsyncTypebox<GetTransactionRouteOptions> = async (app, { provider }) => {
  app.post(
    "/getTransaction",
    {
      schema: {
        summary: "Look a transaction up by hash",
        description:
          "Any transaction on the chain. confirmations 0 means pending, 1 or more confirmed. " +
          "A hash the node does not know answers `{\"result\": null}`.",
        tags: ["transactions"],
        operationId: "getTransaction",
        body: GetTransactionBodySchema,
        response: { 200: GetTransactionReplySchema, ...errorReplies(400, 413, 415, 500, 503) },
      },
    },
    async (request) => {
      const found = await findTransaction(provider, request.body.Tx.toLowerCase());
      return { result: found && toV5LookupRecord(found.transaction, found.latestBlockNumber) };
    },
  );
};
