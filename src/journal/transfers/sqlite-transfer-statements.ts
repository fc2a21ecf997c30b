/** The SQLite journal's statements: a transfer's row by its Idempotency-Key: claimed, signed, refused, its state and the nonces it holds. */
import type Database from "better-sqlite3";
import { HISTORY_TIMES_RISE } from "../history/sqlite-history.js";

export function transferStatements(db: Database.Database) {
  return {
    claim: db.prepare(
      `INSERT INTO transfers (idempotency_key, recipient, units, api_key_id, state, notify, lane, chain_id, token, payout, approval_expires_at, created_at, updated_at)
       VALUES (@key, @recipient, @units, @apiKeyId, @state, @notify, @lane, @chain, @token, @payout, @approvalExpiresAt, ${HISTORY_TIMES_RISE}, @now)
       ON CONFLICT (idempotency_key) DO NOTHING`,
    ),
    byKey: db.prepare("SELECT * FROM transfers WHERE idempotency_key = ?"),
    // A rejected transfer's nonce was given back (the next transfer or a filler holds it, or another sender used it).
    noncesHeld: db.prepare(
      "SELECT DISTINCT nonce FROM transfers WHERE lane = @lane AND chain_id = @chain AND nonce IN (SELECT value FROM json_each(@nonces)) AND state NOT IN ('claimed', 'refused', 'rejected')",
    ).pluck(),
    highestNonce: db.prepare("SELECT MAX(nonce) FROM transfers WHERE lane = @lane AND chain_id = @chain AND nonce IS NOT NULL AND state NOT IN ('claimed', 'refused', 'rejected')").pluck(),
    insertSigned: db.prepare(
      `INSERT INTO transfers (recipient, units, api_key_id, state, nonce, hash, raw_transaction, notify, lane, chain_id, token, created_at, updated_at)
       VALUES (@recipient, @units, @apiKeyId, 'signed', @nonce, @hash, @rawTransaction, @notify, @lane, @chain, @token, ${HISTORY_TIMES_RISE}, @now)`,
    ),
    updateSigned: db.prepare(
      // Never over a cancel: the client asked for the transfer not to be paid.
      `UPDATE transfers SET state = 'signed', nonce = @nonce, hash = @hash, raw_transaction = @rawTransaction, updated_at = @now
       WHERE id = @id AND state IN ('claimed', 'signed') AND NOT EXISTS (SELECT 1 FROM attempts WHERE transfer_id = @id AND kind = 'cancel')`,
    ),
    // Conditional on the state the writer expects: a copy read before an await may be stale.
    setStateFrom: db.prepare("UPDATE transfers SET state = @state, updated_at = @now WHERE id = @id AND state IN (SELECT value FROM json_each(@from))"),
    setDisplacement: db.prepare("UPDATE transfers SET displacement = @displacement, updated_at = @now WHERE id = @id"),
    // A transfer whose nonce another transaction used, signed again at a new nonce: its earlier attempts stay
    // journaled (their hashes are still the transfer's), and the new one is the latest.
    setNewNonce: db.prepare("UPDATE transfers SET state = 'signed', nonce = @nonce, mined_hash = NULL, updated_at = @now WHERE id = @id AND state IN ('signed', 'accepted', 'nonce-used')"),
    setRefusal: db.prepare(
      "UPDATE transfers SET state = @state, refusal_code = @code, refusal_message = @message, updated_at = @now WHERE id = @id AND state = @from",
    ),
    // An approved transfer is never deleted: its approval is given back instead (returnToApproval).
    deleteClaim: db.prepare("DELETE FROM transfers WHERE id = ? AND state IN ('claimed', 'awaiting-approval') AND approval_decided_by IS NULL"),
    restateRefusal: db.prepare("UPDATE transfers SET refusal_code = @code, refusal_message = @message, updated_at = @now WHERE id = @id AND state IN ('refused', 'rejected')"),
    byId: db.prepare("SELECT * FROM transfers WHERE id = ?"),
    releaseRefusedKey: db.prepare(
      "UPDATE transfers SET idempotency_key = NULL, updated_at = @now WHERE id = @id AND state IN ('refused', 'rejected') AND idempotency_key IS NOT NULL",
    ),
  };
}
