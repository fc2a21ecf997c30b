/** Webhook deliveries in the PostgreSQL journal, read on demand (a working copy holds only the undelivered). */
import type pg from "pg";
import { type DeliveryRow, toDelivery } from "../journal-rows.js";
import type { JournalElsewhere, WebhookDelivery } from "../journal-records.js";

/** The outbox's reads of JournalElsewhere, on `pool`. */
export function postgresDeliveryReads(pool: pg.Pool): Pick<JournalElsewhere, "deliveriesOf" | "deliveries"> {
  return {
    /** The deliveries of one transfer's events, newest first. */
    async deliveriesOf(entryId: number, limit: number): Promise<WebhookDelivery[]> {
      // A transfer has a few events, each with a delivery per endpoint: sorted here, not walked in key order.
      const { rows } = await pool.query<DeliveryRow>(
        `SELECT d.*, e.id AS event_id, e.type, e.transfer_id FROM webhook_events e JOIN webhook_deliveries d ON d.event_seq = e.seq WHERE e.transfer_id = $1`,
        [entryId],
      );
      return rows
        .sort((a, b) => b.id - a.id)
        .slice(0, limit)
        .map(toDelivery);
    },

    /** Delivered deliveries, oldest first; without a state, every delivery, newest first (both along the primary key). */
    async deliveries(state: "delivered" | undefined, limit: number): Promise<WebhookDelivery[]> {
      const { rows } = await pool.query<DeliveryRow>(
        `SELECT d.*, e.id AS event_id, e.type, e.transfer_id FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
         ${state === undefined ? "ORDER BY d.id DESC" : "WHERE d.state = 'delivered' ORDER BY d.id"} LIMIT $1`,
        [limit],
      );
      return rows.map(toDelivery);
    },
  };
}
