/** The SQLite journal's statements: the webhook outbox: events, their deliveries, and which outcomes were reported. */
import type Database from "better-sqlite3";

export function webhookStatements(db: Database.Database) {
  return {
    insertEvent: db.prepare("INSERT INTO webhook_events (id, transfer_id, type, body, created_at) VALUES (@id, @entryId, @type, @body, @now)"),
    insertDelivery: db.prepare(
      "INSERT INTO webhook_deliveries (event_seq, endpoint, state, next_attempt_at, created_at, updated_at) VALUES (@seq, @endpoint, 'pending', @now, @now, @now)",
    ),
    setReported: db.prepare("UPDATE transfers SET reported = @reported, reported_block_hash = @blockHash, updated_at = @now WHERE id = @id"),
    unreportedSettled: db.prepare(
      `SELECT * FROM transfers INDEXED BY transfers_unreported WHERE lane = @lane AND chain_id = @chain AND notify = 1 AND (reported IS NULL OR reported NOT IN ('transfer.confirmed', 'transfer.failed', 'transfer.cancelled', 'transfer.finalized'))
       AND state IN ('nonce-used', 'cancelled', 'replaced') ORDER BY nonce`,
    ),
    // Any reported outcome a reorganisation undid: confirmed, failed or cancelled.
    reportedButUnmined: db.prepare(
      "SELECT * FROM transfers WHERE lane = @lane AND chain_id = @chain AND notify = 1 AND reported IN ('transfer.confirmed', 'transfer.failed', 'transfer.cancelled') AND state IN ('signed', 'accepted') ORDER BY nonce",
    ),
    // Deliveries are made in event order, so their ids keep it; walking the (state, id) index stops at LIMIT.
    dueDeliveries: db.prepare(
      `SELECT d.*, e.id AS event_id, e.type, e.transfer_id, e.body FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
       WHERE d.state = 'pending' AND d.next_attempt_at <= @now
         AND (e.transfer_id IS NULL OR NOT EXISTS (SELECT 1 FROM webhook_deliveries d2 JOIN webhook_events e2 ON e2.seq = d2.event_seq
                         WHERE d2.state = 'pending' AND d2.endpoint = d.endpoint AND e2.transfer_id = e.transfer_id AND e2.seq < e.seq))
       ORDER BY d.id LIMIT @limit`,
    ),
    deliveryAttempt: db.prepare(
      "UPDATE webhook_deliveries SET state = @state, attempts = attempts + 1, last_status = @lastStatus, next_attempt_at = @nextAttemptAt, updated_at = @now WHERE id = @id",
    ),
    deliveriesIn: db.prepare(
      `SELECT d.*, e.id AS event_id, e.type, e.transfer_id FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
       WHERE d.state = @state ORDER BY d.id LIMIT @limit`,
    ),
    deliveriesOfTransfer: db.prepare(
      `SELECT d.*, e.id AS event_id, e.type, e.transfer_id FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
       WHERE e.transfer_id = @entryId ORDER BY d.id DESC LIMIT @limit`,
    ),
    latestDeliveries: db.prepare(
      `SELECT d.*, e.id AS event_id, e.type, e.transfer_id FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
       ORDER BY d.id DESC LIMIT @limit`,
    ),
    retryDelivery: db.prepare("UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = @now, updated_at = @now WHERE id = @id AND state IN ('pending', 'failed')"),
    backlog: db.prepare("SELECT COUNT(*) AS pending, MIN(created_at) AS oldest FROM webhook_deliveries WHERE state = 'pending'"),
  };
}
