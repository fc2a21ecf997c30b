/** Builds the webhook parts for a network (network/network-services.ts): a watcher per lane that makes events, and the dispatcher that sends them. */
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config.js";
import type { TransferJournal } from "../journal/transfer-journal.js";
import type { ChainConnection } from "../node/connect-chain.js";
import type { WalletTransferLogs } from "../node/wallet-transfer-logs.js";
import { TransferWatcher } from "./transfer-watcher.js";
import { type DeliveryOutcome, WebhookDispatcher } from "./webhook-dispatcher.js";
import { describeEndpoint, parseWebhookSecrets } from "../domain/webhook-settings.js";

/** The dispatcher: one per service, sending every lane's events from the one journal. */
export function createWebhookDispatcher(
  config: Pick<Config, "webhookSecret" | "webhookRetryInitialMs">,
  journal: TransferJournal,
  log: FastifyBaseLogger,
  observeDelivery?: (outcome: DeliveryOutcome) => void,
): WebhookDispatcher {
  return new WebhookDispatcher({
    journal,
    secrets: parseWebhookSecrets(config.webhookSecret ?? ""),
    retryInitialMs: config.webhookRetryInitialMs,
    onAttempt: (delivery, outcome, status) => {
      observeDelivery?.(outcome);
      if (outcome === "delivered") return;
      const { id: deliveryId, eventId, type, endpoint } = delivery;
      log.warn({ deliveryId, eventId, type, endpoint: describeEndpoint(endpoint), status, outcome }, "webhook delivery not accepted by its endpoint");
    },
  });
}

/** The watcher of one lane: it makes the events of that wallet's transfers. */
export function createTransferWatcher(
  config: Pick<Config, "webhookConfirmations">,
  endpoints: readonly string[],
  chain: ChainConnection,
  journal: TransferJournal,
  logs: WalletTransferLogs,
): TransferWatcher {
  return new TransferWatcher({ chain, journal, endpoints, confirmations: config.webhookConfirmations, logs });
}
