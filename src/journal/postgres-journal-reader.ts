/**
 * Reads of the journal in PostgreSQL on demand, on a pool of their own (never the leader's session, which
 * ships commits): a follower's lookups, and what a leader's working copy does not hold (the transfers
 * settled for good before it took over): the history, hashes, deliveries. Each concern's reads are in its
 * folder (journal/<concern>/postgres-*-reads.ts).
 */
import type pg from "pg";
import { postgresAuditReads } from "./audit/postgres-audit-reads.js";
import { postgresHistoryReads } from "./history/postgres-history-reads.js";
import type { JournalElsewhere } from "./journal-records.js";
import { postgresPayoutItemReads } from "./payout-items/postgres-payout-item-reads.js";
import { postgresTransferReads } from "./transfers/postgres-transfer-reads.js";
import { postgresDeliveryReads } from "./webhook-outbox/postgres-delivery-reads.js";

/** Every concern's reads of the PostgreSQL journal, on `pool`. */
export function postgresJournalReader(pool: pg.Pool): JournalElsewhere {
  return { ...postgresTransferReads(pool), ...postgresPayoutItemReads(pool), ...postgresAuditReads(pool), ...postgresDeliveryReads(pool), ...postgresHistoryReads(pool) };
}
