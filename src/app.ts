/** buildApp(config, deps): the whole HTTP service, configured the same way for the server and the tests. */
import { randomUUID } from "node:crypto";
import { type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify from "fastify";
import type { Logger } from "pino";
import type { ChainConnection } from "./chain/connect-chain.js";
import { envelope, handleError } from "./http/error-handler.js";
import { waitForConfirmations } from "./chain/confirmation-wait.js";
import { getTransactionRoute } from "./http/routes/get-transaction.js";
import { transactionStatusRoute } from "./http/routes/transaction-status.js";
import { transferRoute } from "./http/routes/transfer.js";
import type { ChainServices } from "./chain-services.js";

/** How often a transfer waiting for confirmations looks again (the head it sees is HEAD_MAX_AGE_MS fresh). */
const CONFIRMATION_POLL_MS = 250;

/** Requests are a few hundred bytes of JSON; anything much larger is refused before parsing. */
export const BODY_LIMIT_BYTES = 4096;

/** What the app is built from besides its configuration. */
export interface AppDependencies {
  chain: ChainConnection;
  services: ChainServices;
  /** The process logger (createLogger), shared with the chain services. */
  logger: Logger;
}

/** Builds the Fastify app with every route, the error envelope and the body rules. Does not listen. */
export function buildApp(deps: AppDependencies) {
  const { chain, services } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: BODY_LIMIT_BYTES,
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    requestIdHeader: "x-request-id",
    genReqId: () => randomUUID(),
    // Unknown fields are refused rather than dropped, and nothing is coerced: "12" is not 12.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // JSON only: without this Fastify would also parse text/plain bodies.
  app.removeContentTypeParser("text/plain");
  // Replies are written by JSON.stringify, as ethers v5 records were: the schema-driven serializer would
  // move optional keys to the end and break the byte-for-byte v5 format. Schemas still document replies.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(handleError);
  // While closing, requests in flight still finish, but their keep-alive connections must not hold the
  // close up: answers go out with Connection: close.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  // Callers correlate their logs with ours through the request id, theirs or ours.
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.header("x-request-id", request.id);
    if (closing) reply.header("connection", "close");
    done(null, payload);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(envelope(404, "ROUTE_NOT_FOUND", `no route ${request.method} ${request.url.split("?")[0]}`)),
  );

  app.register(transferRoute, {
    transfers: services.sender,
    tokenDecimals: chain.tokenDecimals,
    awaitConfirmations: (hash, wanted, timeoutMs) => waitForConfirmations(services.lookup, hash, wanted, timeoutMs, CONFIRMATION_POLL_MS),
  });
  app.register(getTransactionRoute, { lookup: services.lookup });
  app.register(transactionStatusRoute, { statuses: services.statuses });
  return app;
}

/** The app as buildApp returns it. */
export type App = ReturnType<typeof buildApp>;
