/** The SQLite journal's statements: the attempts of a transfer: each signed transaction at its nonce, and which one was mined. */
import type Database from "better-sqlite3";

export function attemptStatements(db: Database.Database) {
  return {
    attemptsOf: db.prepare("SELECT * FROM attempts WHERE transfer_id = ? ORDER BY id"),
    attemptsOfEach: db.prepare("SELECT * FROM attempts WHERE transfer_id IN (SELECT value FROM json_each(?)) ORDER BY id"),
    attemptByHash: db.prepare("SELECT * FROM attempts WHERE hash = ?"),
    insertAttempt: db.prepare(
      `INSERT INTO attempts (transfer_id, hash, raw_transaction, kind, signed_at_block, created_at)
       VALUES (@transferId, @hash, @rawTransaction, @kind, @signedAtBlock, @now)
       ON CONFLICT (hash) DO UPDATE SET transfer_id = excluded.transfer_id, kind = excluded.kind,
         signed_at_block = excluded.signed_at_block, created_at = excluded.created_at`,
    ),
    // The same bytes again belong to the newest transfer: a transfer refused at its first broadcast gives
    // its nonce back, and an identical transfer signed next at that nonce has the very same hash.
    // A transfer signed again with a fresh nonce: the bytes before were refused for their nonce ("nonce
    // too low") and can never be mined.
    dropAttempts: db.prepare("DELETE FROM attempts WHERE transfer_id = ?"),
    setMined: db.prepare(
      `UPDATE transfers SET mined_hash = @hash, updated_at = @now,
         state = CASE WHEN (SELECT kind FROM attempts WHERE hash = @hash) = 'cancel' THEN 'cancelled' ELSE 'nonce-used' END
       WHERE id = @id AND state IN ('signed', 'accepted', 'nonce-used', 'rejected')
         AND EXISTS (SELECT 1 FROM attempts WHERE hash = @hash AND transfer_id = @id)`,
    ),
    severalAttemptHashes: db.prepare(
      "SELECT hash FROM attempts WHERE transfer_id IN (SELECT transfer_id FROM attempts GROUP BY transfer_id HAVING COUNT(*) > 1)",
    ),
  };
}
