/** The SQLite journal's statements: retention: expired keys, and settled transfers archived and forgotten with their attempts, events and deliveries. */
import type Database from "better-sqlite3";
import { SETTLED_FOR_GOOD } from "../journal-rows.js";

export function retentionStatements(db: Database.Database) {
  return {
    // A key lives its time from its decision when it waited for an approval (and for good while it waits):
    // a repeat after the approval must find its transfer, never make a second one.
    // At most @limit a call, along the key-age index: one statement over a long backlog (after a long stop)
    // held the event loop and, with temporary data in memory, an undo journal of every row it changed.
    expireKeys: db.prepare(
      `UPDATE transfers SET idempotency_key = NULL WHERE id IN (
         SELECT id FROM transfers INDEXED BY transfers_key_age
         WHERE idempotency_key IS NOT NULL AND created_at < @cutoff AND state <> 'awaiting-approval' AND (approval_decided_at IS NULL OR approval_decided_at < @cutoff)
         LIMIT @limit)`,
    ),
    // What retention may move out: made before the cutoff, its key expired, its outcome final (or refused:
    // never sent), every event of it reported and no delivery of it still pending. The oldest first.
    archivable: db.prepare(
      `SELECT * FROM transfers t INDEXED BY transfers_created WHERE t.created_at < @before AND t.idempotency_key IS NULL
         AND (t.state IN ('refused', 'rejected') OR (t.state IN ('nonce-used', 'replaced', 'cancelled') AND t.final_block IS NOT NULL
           AND (t.notify = 0 OR t.reported = 'transfer.finalized')))
         AND NOT EXISTS (SELECT 1 FROM webhook_events e JOIN webhook_deliveries d ON d.event_seq = e.seq WHERE e.transfer_id = t.id AND d.state = 'pending')
       ORDER BY t.created_at, t.id LIMIT @limit`,
    ),
    eventsOfEach: db.prepare("SELECT * FROM webhook_events WHERE transfer_id IN (SELECT value FROM json_each(?)) ORDER BY seq"),
    deliveriesOfEach: db.prepare(
      "SELECT d.* FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq WHERE e.transfer_id IN (SELECT value FROM json_each(?)) ORDER BY d.id",
    ),
    forgetDeliveries: db.prepare("DELETE FROM webhook_deliveries WHERE event_seq IN (SELECT seq FROM webhook_events WHERE transfer_id IN (SELECT value FROM json_each(?)))"),
    forgetEvents: db.prepare("DELETE FROM webhook_events WHERE transfer_id IN (SELECT value FROM json_each(?))"),
    forgetAttempts: db.prepare("DELETE FROM attempts WHERE transfer_id IN (SELECT value FROM json_each(?))"),
    forgetTransfers: db.prepare("DELETE FROM transfers WHERE id IN (SELECT value FROM json_each(?))"),
    heldOf: db.prepare("SELECT id FROM transfers WHERE id IN (SELECT value FROM json_each(?))").pluck(),
    // The transfers made before the window, oldest first from a point, and whether a working copy need not
    // hold each (`cold`): settled for good, so that a new leader would not read it either (HOT_TRANSFERS),
    // never the newest row; and, unlike a takeover, nothing of it changed within the window either (the
    // service may still be at work on it: a replacement being signed, a cancel waiting its turn, a shipment
    // under way).
    coldFrom: db.prepare(
      `SELECT id, created_at, (${SETTLED_FOR_GOOD} AND t.updated_at < @before AND t.id < (SELECT MAX(id) FROM transfers)) AS cold
       FROM transfers t INDEXED BY transfers_created
       WHERE t.created_at < @before AND (t.created_at, t.id) > (@afterCreated, @afterId)
       ORDER BY t.created_at, t.id LIMIT @limit`,
    ),
  };
}
