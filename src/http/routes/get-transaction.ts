/** POST /getTransaction: a transaction by hash, as ethers v5 returned it, with a fresh confirmation count. */
import { seesTransferOf } from "../auth.js";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Static } from "@sinclair/typebox";
import type { JournalEntry } from "../../journal/transfer-journal.js";
import { findCarryingAttempt } from "../../lookup/carrying-attempt.js";
import type { TransactionLookup } from "../../lookup/transaction-lookup.js";
import { type ServedNetwork, checkNetworkChoice } from "../../network-settings/network-choice.js";
import { serializeV5LookupReply } from "../../wire/v5-record.js";
import { GetTransactionBodySchema, GetTransactionReplySchema, errorReplies } from "../schemas.js";

/** Finds the transfer a hash belongs to when it has several attempts: the journal, or a follower's database reader. */
export interface SeveralAttemptsFinder {
  findWithSeveralAttempts(hash: string): JournalEntry | undefined | Promise<JournalEntry | undefined>;
}

export interface GetTransactionRouteOptions {
  /** What `network` may name. */
  network: ServedNetwork;
  lookup: TransactionLookup;
  journal: SeveralAttemptsFinder;
}

export const getTransactionRoute: FastifyPluginAsyncTypebox<GetTransactionRouteOptions> = async (app, { network, lookup, journal }) => {
  app.post(
    "/getTransaction",
    {
      schema: {
        summary: "Look a transaction up by hash",
        description:
          "Any transaction on the chain. confirmations 0 means pending, 1 or more confirmed. " +
          "A hash the node does not know answers `{\"result\": null}`. For any hash of a transfer of this service, " +
          "the record of the attempt that carries the transfer: the mined one once mined (its own hash in result.hash), " +
          "otherwise the latest one the node knows. A client polling the first hash thus sees a re-priced transfer confirm. " +
          "`network`, when sent, must name the network the service pays on (400 UNKNOWN_NETWORK otherwise).",
        tags: ["transactions"],
        operationId: "getTransaction",
        body: GetTransactionBodySchema,
        response: { 200: GetTransactionReplySchema, ...errorReplies(400, 413, 415, 500, 503) },
      },
    },
    async (request, reply) => {
      checkNetworkChoice(network, request.body);
      const hash = request.body.Tx.toLowerCase();
      const sent = await journal.findWithSeveralAttempts(hash);
      // Which attempt carries another key's transfer is the journal's knowledge, not the chain's.
      const entry = sent && seesTransferOf(request, sent.apiKeyId) ? sent : undefined;
      const found = entry ? (await findCarryingAttempt(entry, lookup)).found : await lookup.find(hash);
      // Already JSON (see serializeV5LookupReply): Fastify sends a string body as it is.
      const body = serializeV5LookupReply(found) as unknown as Static<typeof GetTransactionReplySchema>;
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );
};
