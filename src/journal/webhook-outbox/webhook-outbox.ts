/** The journal's records of the webhook outbox: each event with its deliveries, written in the commit of the change it reports, and which outcomes were reported. */
import type { DeliveryState, JournalEntry, TransferEventType, WebhookDelivery, WebhookEventRecord } from "../journal-records.js";

export interface WebhookOutbox {
  /**
   * Journals a webhook event, a pending delivery of it to each endpoint, and (when given) the transfer's
   * last reported event and the block it named, in the same commit as whatever else is written in this
   * turn (the state change it reports): an event is never lost, and never made twice.
   */
  recordEvent(event: WebhookEventRecord, endpoints: readonly string[], reported?: TransferEventType, blockHash?: string | null): void;
  /** Transfers made while webhooks were on whose nonce is used and whose outcome is not reported yet. */
  unreportedSettled(): JournalEntry[];
  /** Transfers reported confirmed, failed or cancelled that are pending again (a reorganisation). */
  reportedButUnmined(): JournalEntry[];
  /**
   * Pending deliveries due at `now`, oldest event first, with the body to send; a delivery waits while an
   * earlier event of the same transfer to the same endpoint is pending (in order per transfer).
   */
  dueDeliveries(now: number, limit: number, excludedIds: ReadonlySet<number>): (WebhookDelivery & { body: string })[];
  /** The outcome of one delivery attempt. */
  recordDeliveryAttempt(id: number, outcome: { state: DeliveryState; lastStatus: string; nextAttemptAt: number }): void;
  /**
   * Deliveries in `state`, oldest first; without a state, every delivery, newest first (from the shared
   * database when a working copy may not hold them all: delivered ones of transfers settled for good).
   */
  deliveries(state: DeliveryState | undefined, limit: number): Promise<WebhookDelivery[]>;
  /** The deliveries of one transfer's events, newest first (from the shared database for a transfer a working copy does not hold). */
  deliveriesOf(entryId: number, limit: number): Promise<WebhookDelivery[]>;
  /** Makes a failed or pending delivery due now. Returns whether there was one. */
  retryDelivery(id: number): boolean;
  /** How many deliveries are pending, and when the oldest was made (ms), for the metrics. */
  deliveryBacklog(): { pending: number; oldestCreatedAt: number | null };
}
