/**
 * The journal's rows as both stores keep them (SQLite, and PostgreSQL for several replicas: the same
 * columns), and how they read as journal entries.
 */
import type { DeliveryState, JournalAttempt, JournalEntry, PayoutOrder, StoredDisplacement, TransferEventType, WebhookDelivery, WebhookEventType } from "./transfer-journal.js";

/**
 * A transfer (`t`) settled for good, in SQL both stores read: nothing will change it (its outcome is final
 * and reported, or it was never sent), its key has expired, and every delivery of its events is done.
 * Retention's rule (the SQLite journal's archivable), except that a failed delivery keeps it held: an
 * operator may retry that. A new leader holds the rest (HOT_TRANSFERS).
 */
export const SETTLED_FOR_GOOD = `t.idempotency_key IS NULL
  AND (t.state IN ('refused', 'rejected') OR (t.state IN ('nonce-used', 'replaced', 'cancelled') AND t.final_block IS NOT NULL
    AND (t.notify = 0 OR t.reported = 'transfer.finalized')))
  AND NOT EXISTS (SELECT 1 FROM webhook_events e JOIN webhook_deliveries d ON d.event_seq = e.seq WHERE e.transfer_id = t.id AND d.state <> 'delivered')`;

export interface EntryRow {
  id: number;
  idempotency_key: string | null;
  recipient: string;
  units: string;
  api_key_id: string | null;
  state: JournalEntry["state"];
  nonce: number | null;
  hash: string | null;
  raw_transaction: string | null;
  refusal_code: string | null;
  refusal_message: string | null;
  mined_hash: string | null;
  notify: number;
  reported: TransferEventType | null;
  settled_block: number | null;
  reported_block_hash: string | null;
  final_block: number | null;
  lane: string;
  chain_id: string;
  token: string;
  /** A payout batch's items (payoutAsText), null for any other transfer. */
  payout?: string | null;
  approval_expires_at?: number | null;
  approval_decided_by?: string | null;
  approval_decided_at?: number | null;
  /** What displaced it (a StoredDisplacement as JSON), null for none. */
  displacement?: string | null;
  created_at: number;
}

export interface DeliveryRow {
  id: number;
  event_id: string;
  type: WebhookEventType;
  transfer_id: number | null;
  endpoint: string;
  state: DeliveryState;
  attempts: number;
  last_status: string | null;
  next_attempt_at: number;
  created_at: number;
  body?: string;
}

export interface AttemptRow {
  transfer_id: number;
  hash: string;
  raw_transaction: string;
  kind: JournalAttempt["kind"];
  signed_at_block: number;
  created_at: number;
}

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    type: row.type,
    entryId: row.transfer_id,
    endpoint: row.endpoint,
    state: row.state,
    attempts: row.attempts,
    lastStatus: row.last_status,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  };
}

export function toAttempt(row: AttemptRow): JournalAttempt {
  return { hash: row.hash, rawTransaction: row.raw_transaction, kind: row.kind, signedAtBlock: row.signed_at_block, createdAt: row.created_at };
}

export function toEntry(row: EntryRow, attempts: JournalAttempt[]): JournalEntry {
  return {
    id: row.id,
    lane: row.lane,
    chainId: Number(row.chain_id),
    token: row.token,
    idempotencyKey: row.idempotency_key,
    recipient: row.recipient,
    units: BigInt(row.units),
    apiKeyId: row.api_key_id ?? undefined,
    state: row.state,
    nonce: row.nonce,
    hash: row.hash,
    rawTransaction: row.raw_transaction,
    attempts,
    minedHash: row.mined_hash,
    notify: row.notify === 1,
    reported: row.reported,
    settledBlock: row.settled_block ?? null,
    reportedBlockHash: row.reported_block_hash ?? null,
    finalBlock: row.final_block ?? null,
    approval: row.approval_expires_at == null ? null : { expiresAt: row.approval_expires_at, decidedBy: row.approval_decided_by ?? null, decidedAt: row.approval_decided_at ?? null },
    refusal: row.refusal_code === null ? null : { code: row.refusal_code, message: row.refusal_message ?? "" },
    displacement: row.displacement ? (JSON.parse(row.displacement) as StoredDisplacement) : null,
    createdAt: row.created_at,
    ...(row.payout ? { payout: payoutOfText(row.payout) } : {}),
  };
}

/** A payout batch's order as both stores keep it: JSON, amounts as decimal strings. */
export function payoutAsText(order: PayoutOrder): string {
  return JSON.stringify({ contract: order.contract, items: order.items.map((item) => ({ ...item, units: item.units.toString() })) });
}

function payoutOfText(text: string): PayoutOrder {
  const stored = JSON.parse(text) as { contract: string; items: { id: string; recipient: string; units: string; duplicateOf?: number }[] };
  return { contract: stored.contract, items: stored.items.map((item) => ({ ...item, units: BigInt(item.units) })) };
}

/**
 * Added to the owner's chain id once a deployment pays on more networks than the owner's: versions before
 * networks read every row of a lane as the owner's network's (they would settle, and sign again, another
 * chain's transfers), and this makes them refuse the journal as another chain's instead.
 */
export const SEVERAL_NETWORKS_MARK = ";several-networks";

/** The owner's chain id as stored, without the mark. */
export function ownersChainOf(stored: string): string {
  return stored.endsWith(SEVERAL_NETWORKS_MARK) ? stored.slice(0, -SEVERAL_NETWORKS_MARK.length) : stored;
}

/** Rows read for several entries at once, by entry (each shaped by `shape`), in the order read. */
export function groupBy<Row, Shaped>(rows: readonly Row[], entryOf: (row: Row) => number, shape: (row: Row) => Shaped): Map<number, Shaped[]> {
  const byEntry = new Map<number, Shaped[]>();
  for (const row of rows) {
    const entryId = entryOf(row);
    const group = byEntry.get(entryId);
    if (group) group.push(shape(row));
    else byEntry.set(entryId, [shape(row)]);
  }
  return byEntry;
}
