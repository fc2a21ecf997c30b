/** Renders every error, ours or Fastify's, in one envelope: {statusCode, code, error, message}. */
import { STATUS_CODES } from "node:http";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ServiceError } from "../errors.js";

/** The body of every error reply. */
export interface ErrorReply {
  statusCode: number;
  code: string;
  error: string;
  message: string;
}

/**
 * Our ServiceErrors and Fastify's own 4xx errors (validation, media type, body size, bad JSON) are shown
 * as they are; anything else is a fault inside the service: logged, and answered with a bare 500.
 */
export function handleError(error: FastifyError | ServiceError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const body = toErrorReply(error);
  if (error instanceof ServiceError) {
    // Expected outcomes (refusals, node outages): one line with the code, no stack.
    request.log.warn({ code: body.code, reason: body.message, ...(error.logDetail !== undefined && { detail: error.logDetail }) }, "request refused");
    if (error.retryAfterSeconds !== undefined) reply.header("retry-after", String(error.retryAfterSeconds));
  } else if (body.statusCode >= 500) {
    request.log.error({ err: error }, "request failed inside the service");
  }
  return reply.status(body.statusCode).send(body);
}

// Fastify's wording for these says little about what the client should do instead.
const CLEARER_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "send the body as JSON with content-type: application/json",
  FST_ERR_CTP_INVALID_JSON_BODY: "the body is not valid JSON, or holds a forbidden key such as __proto__",
};

function toErrorReply(error: FastifyError | ServiceError): ErrorReply {
  if (error instanceof ServiceError) {
    return envelope(error.statusCode, error.code, error.message);
  }
  const statusCode = error.statusCode ?? 500;
  if (statusCode >= 400 && statusCode < 500) {
    const code = error.code ?? "BAD_REQUEST";
    return envelope(statusCode, code, CLEARER_MESSAGES[code] ?? error.message);
  }
  return envelope(500, "INTERNAL_ERROR", "the service failed to handle the request; see its log");
}

/** Builds an error body for a status. */
export function envelope(statusCode: number, code: string, message: string): ErrorReply {
  return { statusCode, code, error: STATUS_CODES[statusCode] ?? "Error", message };
}
