/** The SQLite journal's statements: the payout item ids an API key's batches hold. */
import type Database from "better-sqlite3";

export function payoutItemStatements(db: Database.Database) {
  return {
    payoutItemHolder: db.prepare("SELECT transfer_id FROM payout_items WHERE api_key = ? AND item_id = ?").pluck(),
    takePayoutItem: db.prepare("INSERT INTO payout_items (api_key, item_id, transfer_id) VALUES (?, ?, ?)"),
    // A batch refused or rejected paid nothing: its item ids may be paid by another.
    freePayoutItems: db.prepare("DELETE FROM payout_items WHERE transfer_id = ?"),
  };
}
