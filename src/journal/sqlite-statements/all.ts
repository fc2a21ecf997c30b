/**
 * Every statement of the SQLite journal, prepared once per database, one module per concern. `@lane` binds
 * the lane of the journal object that asks. A statement asked every round names the small partial index it
 * walks (INDEXED BY): left to itself, the planner prefers a history index (lane, state, id) and walks every
 * settled transfer of the lane.
 */
import type Database from "better-sqlite3";
import { ownerStatements } from "./owner.js";
import { transferStatements } from "./transfers.js";
import { attemptStatements } from "./attempts.js";
import { settlingStatements } from "./settling.js";
import { payoutItemStatements } from "./payouts.js";
import { approvalStatements } from "./approvals.js";
import { outflowStatements } from "./outflows.js";
import { auditStatements } from "./audit.js";
import { webhookStatements } from "./webhooks.js";
import { historyStatements } from "./history.js";
import { retentionStatements } from "./retention.js";

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
