/** Puts the webhook parts together for chain-services: the watcher that makes events and the dispatcher that sends them. */
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config.js";
import type { TransferJournal } from "../journal/transfer-journal.js";
import type { ChainConnection } from "../node/connect-chain.js";
import type { WalletTransferLogs } from "../node/wallet-transfer-logs.js";
import { TransferWatcher } from "./transfer-watcher.js";
import { type DeliveryOutcome, WebhookDispatcher } from "./webhook-dispatcher.js";
import { describeEndpoint, parseWebhookSecrets } from "../domain/webhook-settings.js";

export function createWebhooks(
  config: Pick<Config, "webhookSecret" | "webhookConfirmations" | "webhookRetryInitialMs">,
  endpoints: readonly string[],
  chain: ChainConnection,
  journal: TransferJournal,
  logs: WalletTransferLogs,
  log: FastifyBaseLogger,
  observeDelivery?: (outcome: DeliveryOutcome) => void,
): { watcher: TransferWatcher; dispatcher: WebhookDispatcher } {
  return {
    watcher: new TransferWatcher({ chain, journal, endpoints, confirmations: config.webhookConfirmations, logs }),
    dispatcher: new WebhookDispatcher({
      journal,
      secrets: parseWebhookSecrets(config.webhookSecret ?? ""),
      retryInitialMs: config.webhookRetryInitialMs,
      onAttempt: (delivery, outcome, status) => {
        observeDelivery?.(outcome);
        if (outcome === "delivered") return;
        const { id: deliveryId, eventId, type, endpoint } = delivery;
        log.warn({ deliveryId, eventId, type, endpoint: describeEndpoint(endpoint), status, outcome }, "webhook delivery not accepted by its endpoint");
      },
    }),
  };
}
