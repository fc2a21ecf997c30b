/** POST /getTransaction: a transaction by hash, as ethers v5 returned it, with a fresh confirmation count. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Static } from "@sinclair/typebox";
import type { TransactionLookup } from "../../chain/transaction-lookup.js";
import { serializeV5LookupReply } from "../../wire/v5-record.js";
import { GetTransactionBodySchema, GetTransactionReplySchema, errorReplies } from "../schemas.js";

export interface GetTransactionRouteOptions {
  lookup: TransactionLookup;
}

export const getTransactionRoute: FastifyPluginAsyncTypebox<GetTransactionRouteOptions> = async (app, { lookup }) => {
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
    async (request, reply) => {
      const found = await lookup.find(request.body.Tx.toLowerCase());
      // Already JSON (see serializeV5LookupReply): Fastify sends a string body as it is.
      const body = serializeV5LookupReply(found) as unknown as Static<typeof GetTransactionReplySchema>;
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );
};
