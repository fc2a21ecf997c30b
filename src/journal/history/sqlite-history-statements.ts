/** The SQLite journal's statements: what was made and spent since a time: the activity charts and the per-key cap. */
import type Database from "better-sqlite3";

export function historyStatements(db: Database.Database) {
  return {
    // A client's transfer moves units; a gas top-up or a nonce filler is an entry of 0 units.
    madeFrom: db.prepare("SELECT id, created_at, state FROM transfers WHERE id >= @from AND units <> '0' ORDER BY id LIMIT @limit"),
    // An approved transfer counts from its approval, when it was signed (its request may be older than the window).
    spentSince: db.prepare(
      `SELECT api_key_id, units, at FROM (
         SELECT api_key_id, units, created_at AS at FROM transfers INDEXED BY transfers_created
         WHERE created_at > @since AND approval_decided_at IS NULL AND api_key_id IS NOT NULL AND state IN ('signed', 'accepted', 'nonce-used') AND chain_id = @chain AND token = @token
         UNION ALL
         SELECT api_key_id, units, approval_decided_at AS at FROM transfers INDEXED BY transfers_approval_decided
         WHERE approval_decided_at > @since AND api_key_id IS NOT NULL AND state IN ('signed', 'accepted', 'nonce-used') AND chain_id = @chain AND token = @token
       ) ORDER BY at`,
    ),
  };
}
