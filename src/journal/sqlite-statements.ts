/**
 * Every statement of the SQLite journal, prepared once per database, one module per concern. `@lane` binds
 * the lane of the journal object that asks. A statement asked every round names the small partial index it
 * walks (INDEXED BY): left to itself, the planner prefers a history index (lane, state, id) and walks every
 * settled transfer of the lane.
 */
import type Database from "better-sqlite3";
import { ownerStatements } from "./sqlite-owner-statements.js";
import { transferStatements } from "./transfers/sqlite-transfer-statements.js";
import { attemptStatements } from "./transfers/sqlite-attempt-statements.js";
import { settlingStatements } from "./transfers/sqlite-settling-statements.js";
import { payoutItemStatements } from "./payout-items/sqlite-payout-item-statements.js";
import { approvalStatements } from "./approvals/sqlite-approval-statements.js";
import { outflowStatements } from "./outflows/sqlite-outflow-statements.js";
import { auditStatements } from "./audit/sqlite-audit-statements.js";
import { webhookStatements } from "./webhook-outbox/sqlite-webhook-statements.js";
import { historyStatements } from "./history/sqlite-history-statements.js";
import { retentionStatements } from "./retention/sqlite-retention-statements.js";

export function prepareStatements(db: Database.Database) {
  return {
    ...ownerStatements(db),
    ...transferStatements(db),
    ...attemptStatements(db),
    ...settlingStatements(db),
    ...payoutItemStatements(db),
    ...approvalStatements(db),
    ...outflowStatements(db),
    ...auditStatements(db),
    ...webhookStatements(db),
    ...historyStatements(db),
    ...retentionStatements(db),
  };
}

/** What the journal's store asks the database with. */
export type JournalStatements = ReturnType<typeof prepareStatements>;
