/** The SQLite journal's statements: transfers awaiting a second admin's approval, and their decisions. */
import type Database from "better-sqlite3";

export function approvalStatements(db: Database.Database) {
  return {
    awaitingApproval: db.prepare("SELECT * FROM transfers INDEXED BY transfers_awaiting_approval WHERE state = 'awaiting-approval' ORDER BY approval_expires_at, id LIMIT ?"),
    awaitingApprovalCount: db.prepare("SELECT COUNT(*) FROM transfers INDEXED BY transfers_awaiting_approval WHERE state = 'awaiting-approval'").pluck(),
    // At most APPROVALS_AWAITING_MAX rows walked: the partial index holds only what waits.
    awaitingApprovalCountOf: db.prepare("SELECT COUNT(*) FROM transfers INDEXED BY transfers_awaiting_approval WHERE state = 'awaiting-approval' AND api_key_id = ?").pluck(),
    takeApproved: db.prepare(
      "UPDATE transfers SET state = 'claimed', lane = @lane, approval_decided_by = @by, approval_decided_at = @at, updated_at = @now WHERE id = @id AND state = 'awaiting-approval' AND chain_id = @chain AND approval_expires_at > @at",
    ),
    returnToApproval: db.prepare(
      "UPDATE transfers SET state = 'awaiting-approval', approval_decided_by = NULL, approval_decided_at = NULL, updated_at = @now WHERE id = @id AND state = 'claimed' AND approval_decided_by IS NOT NULL",
    ),
    refuseApproval: db.prepare(
      `UPDATE transfers SET state = 'refused', refusal_code = @code, refusal_message = @message, approval_decided_by = @by, approval_decided_at = @at, updated_at = @now
       WHERE id = @id AND state = 'awaiting-approval'`,
    ),
  };
}
