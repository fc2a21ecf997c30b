/** POST /getTransaction: a transaction by hash, as ethers v5 returned it, with a fresh confirmation count. */
import { seesTransferOf } from "../auth.js";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Static } from "@sinclair/typebox";
import type { JournalEntry } from "../../journal/transfer-journal.js";
import { findCarryingAttempt } from "../../lookup/carrying-attempt.js";
import type { TransactionLookup } from "../../lookup/transaction-lookup.js";
import type { ServedNetwork } from "../../network-settings/network-choice.js";
import { serializeV5LookupReply } from "../../wire/v5-record.js";
import { GetTransactionBodySchema, GetTransactionReplySchema, errorReplies } from "../schemas.js";

/** Finds the transfer a hash belongs to when it has several attempts: the journal, or a follower's database reader. */
export interface SeveralAttemptsFinder {
  findWithSeveralAttempts(hash: string): JournalEntry | undefined | Promise<JournalEntry | undefined>;
}

/** A network the service pays on, as lookups use it. */
export interface LookupNetwork {
  /** What `network` may name. */
  network: ServedNetwork;
  lookup: TransactionLookup;
}

export interface GetTransactionRouteOptions {
  /** The network a request names (the default when it names none): 400 for one not configured, 503 for one not running. */
  networkFor: (choice: { network?: string | number }) => LookupNetwork;
  /** With several networks: the network of a hash the journal knows (any attempt of any transfer); undefined for any other. */
  networkOfHash?: (hash: string) => Promise<LookupNetwork | undefined>;
  journal: SeveralAttemptsFinder;
}

export const getTransactionRoute: FastifyPluginAsyncTypebox<GetTransactionRouteOptions> = async (app, { networkFor, networkOfHash, journal }) => {
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
          "`network` (a name or chain id) says where to look; without it a hash of the service's own transfer is looked up on its network, " +
          "any other on the default network (400 UNKNOWN_NETWORK for a network not served).",
        tags: ["transactions"],
        operationId: "getTransaction",
        body: GetTransactionBodySchema,
        response: { 200: GetTransactionReplySchema, ...errorReplies(400, 413, 415, 500, 503) },
      },
    },
    async (request, reply) => {
      const hash = request.body.Tx.toLowerCase();
      // A network named is asked; else a hash of the service's own transfer is looked up on its network, any other on the default.
      const named = request.body.network === undefined ? undefined : networkFor(request.body);
      const { lookup, network } = named ?? (networkOfHash && (await networkOfHash(hash))) ?? networkFor({});
      const sent = await journal.findWithSeveralAttempts(hash);
      // Which attempt carries another key's transfer is the journal's knowledge, not the chain's; and only on its own network.
      const entry = sent && seesTransferOf(request, sent.apiKeyId) && BigInt(sent.chainId) === network.chainId ? sent : undefined;
      const found = entry ? (await findCarryingAttempt(entry, lookup)).found : await lookup.find(hash);
      // Already JSON (see serializeV5LookupReply): Fastify sends a string body as it is.
      const body = serializeV5LookupReply(found) as unknown as Static<typeof GetTransactionReplySchema>;
      return reply.type("application/json; charset=utf-8").send(body);
    },
  );
};
