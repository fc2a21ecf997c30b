/**
 * Delivers journaled webhook events: at least once, in order per transfer and endpoint, with a bounded
 * number of requests in flight, so that a slow receiver cannot starve the service. A 2xx answer delivers;
 * 410 Gone stops that event for that endpoint; anything else (another status, a time-out, a refused
 * connection) is tried again with exponential backoff and jitter, for up to 24 h. Redirects are not
 * followed. A restart resumes where the journal says.
 */
import { request } from "undici";
import { steadyWallClockNow } from "../clock.js";
import type { DeliveryState, TransferJournal, WebhookDelivery } from "../journal/transfer-journal.js";
import { signWebhook } from "./webhook-signature.js";

/** What became of one attempt, for the metrics. */
export type DeliveryOutcome = "delivered" | "retrying" | "failed";

export interface WebhookDispatcherOptions {
  journal: TransferJournal;
  secrets: readonly Buffer[];
  /** The first retry waits about this long; each further one twice as long, up to an hour. */
  retryInitialMs: number;
  onAttempt: (delivery: WebhookDelivery, outcome: DeliveryOutcome, status: string) => void;
}

const MAX_IN_FLIGHT = 8;
const TIMEOUT_MS = 10_000;
const GIVE_UP_AFTER_MS = 24 * 3_600_000;
const MAX_RETRY_DELAY_MS = 3_600_000;
const POLL_INTERVAL_MS = 250;

export class WebhookDispatcher {
  readonly #options: WebhookDispatcherOptions;
  readonly #inFlight = new Map<number, Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = true;

  constructor(options: WebhookDispatcherOptions) {
    this.#options = options;
  }

  start(): void {
    this.#stopped = false;
    this.#schedule(0);
  }

  /** New events were journaled: look for due deliveries now rather than at the next poll. */
  wake(): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#schedule(0);
  }

  /** Stops taking deliveries and waits for those in flight (each bounded by the 10 s time-out). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await Promise.all(this.#inFlight.values());
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => this.#dispatchDue(), delayMs).unref();
  }

  #dispatchDue(): void {
    const { journal } = this.#options;
    const free = MAX_IN_FLIGHT - this.#inFlight.size;
    if (free > 0 && !journal.failure) {
      for (const delivery of journal.dueDeliveries(steadyWallClockNow(), free, new Set(this.#inFlight.keys()))) {
        const sending = this.#deliver(delivery).finally(() => {
          this.#inFlight.delete(delivery.id);
          // A slot is free and the next event of this transfer may be due: look again at once.
          this.wake();
        });
        this.#inFlight.set(delivery.id, sending);
      }
    }
    this.#schedule(POLL_INTERVAL_MS);
  }

  async #deliver(delivery: WebhookDelivery & { body: string }): Promise<void> {
    const { journal, secrets, retryInitialMs, onAttempt } = this.#options;
    const timestamp = Math.floor(steadyWallClockNow() / 1000);
    let status: string;
    try {
      const response = await request(delivery.endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": delivery.eventId,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signWebhook(secrets, delivery.eventId, timestamp, delivery.body),
        },
        body: delivery.body,
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      await response.body.dump();
      status = String(response.statusCode);
    } catch (error) {
      status = describeFailure(error);
    }
    const now = steadyWallClockNow();
    let state: DeliveryState = "pending";
    let nextAttemptAt = now;
    if (/^2\d\d$/.test(status)) state = "delivered";
    else if (status === "410") state = "failed";
    else {
      const delay = Math.min(retryInitialMs * 2 ** delivery.attempts, MAX_RETRY_DELAY_MS);
      // Full jitter over the upper half: receivers that come back are not hit by every sender at once.
      nextAttemptAt = now + Math.round(delay * (0.5 + Math.random() * 0.5));
      if (nextAttemptAt - delivery.createdAt > GIVE_UP_AFTER_MS) state = "failed";
    }
    if (journal.failure) return;
    journal.recordDeliveryAttempt(delivery.id, { state, lastStatus: status, nextAttemptAt });
    onAttempt(delivery, state === "pending" ? "retrying" : state, status);
  }
}

function describeFailure(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" || (error as Error).name === "TimeoutError") return "timeout";
  if (code === "ECONNREFUSED") return "connection refused";
  return code ?? (error as Error).name ?? "error";
}
