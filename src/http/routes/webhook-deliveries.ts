/** GET /webhooks/deliveries and POST /webhooks/deliveries/:id/retry: what operators need to see and redo. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { ServiceError } from "../../errors.js";
import type { TransferJournal, WebhookDelivery } from "../../journal/transfer-journal.js";
import type { WebhookDispatcher } from "../../webhooks/webhook-dispatcher.js";
import { describeEndpoint } from "../../domain/webhook-settings.js";
import { TxHashSchema, errorReplies } from "../schemas.js";

export interface WebhookDeliveriesRouteOptions {
  journal: TransferJournal;
  /** Undefined when WEBHOOK_URL is not set. */
  dispatcher: WebhookDispatcher | undefined;
}

const DeliverySchema = Type.Object({
  id: Type.Integer(),
  eventId: Type.String({ description: "the webhook-id header, the same on every attempt" }),
  type: Type.String({ examples: ["transfer.confirmed"] }),
  endpoint: Type.String({ description: "the WEBHOOK_URL, its query string (which may hold the receiver's token) redacted" }),
  state: Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")]),
  attempts: Type.Integer(),
  lastStatus: Type.Union([Type.String(), Type.Null()], { description: "the endpoint's last HTTP status, or timeout / connection refused" }),
  nextAttemptAt: Type.Union([Type.String(), Type.Null()], { description: "ISO time of the next attempt, while pending" }),
  createdAt: Type.String(),
});

const LIST_LIMIT = 500;

function asListed(delivery: WebhookDelivery) {
  const { entryId: _entry, ...shown } = delivery;
  return {
    ...shown,
    endpoint: describeEndpoint(delivery.endpoint),
    nextAttemptAt: delivery.state === "pending" ? new Date(delivery.nextAttemptAt).toISOString() : null,
    createdAt: new Date(delivery.createdAt).toISOString(),
  };
}

export const webhookDeliveriesRoute: FastifyPluginAsyncTypebox<WebhookDeliveriesRouteOptions> = async (app, { journal, dispatcher }) => {
  const configured = () => {
    if (!dispatcher) throw new ServiceError("WEBHOOKS_NOT_CONFIGURED", "WEBHOOK_URL is not set: this service sends no webhooks");
    return dispatcher;
  };
  app.get(
    "/webhooks/deliveries",
    {
      schema: {
        summary: "Webhook deliveries: the latest, or those in one state",
        description:
          `Without ?state, every delivery, newest first; with ?state=pending, delivered or failed, those in that state, oldest first; at most ${LIST_LIMIT}. ` +
          "failed: the endpoint answered 410 Gone, or 24 h of retries passed; retry it with POST /webhooks/deliveries/{id}/retry.",
        tags: ["operations"],
        operationId: "listWebhookDeliveries",
        querystring: Type.Object(
          {
            state: Type.Optional(Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")])),
            transfer: Type.Optional({ ...TxHashSchema, description: "any hash of one of the service's transfers: its deliveries only, newest first (state is then ignored)" }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ deliveries: Type.Array(DeliverySchema) }), ...errorReplies(400, 401, 404, 429, 500) },
      },
    },
    async (request) => {
      configured();
      const { state, transfer } = request.query;
      if (transfer !== undefined) {
        const entry = await journal.lookUpByHash(transfer.toLowerCase());
        return { deliveries: entry ? (await journal.deliveriesOf(entry.id, LIST_LIMIT)).map(asListed) : [] };
      }
      return { deliveries: (await journal.deliveries(state, LIST_LIMIT)).map(asListed) };
    },
  );
  app.post(
    "/webhooks/deliveries/:id/retry",
    {
      schema: {
        summary: "Deliver a failed or pending webhook again, now",
        description: "The same event (same webhook-id and body), re-signed with the current time. Attempts so far are kept.",
        tags: ["operations"],
        operationId: "retryWebhookDelivery",
        params: Type.Object({ id: Type.String({ pattern: "^[1-9][0-9]{0,14}$", description: "the delivery's id, from GET /webhooks/deliveries" }) }),
        response: { 200: Type.Object({ retrying: Type.Literal(true) }), ...errorReplies(400, 401, 404, 429, 500) },
      },
    },
    async (request) => {
      const running = configured();
      if (!journal.retryDelivery(Number(request.params.id))) throw new ServiceError("DELIVERY_NOT_FOUND", `no pending or failed delivery ${request.params.id}`);
      journal.recordAudit({ kind: "operator.delivery_retry", actor: request.apiKeyId, detail: { delivery: Number(request.params.id) } });
      await journal.flushed();
      running.wake();
      return { retrying: true as const };
    },
  );
};
