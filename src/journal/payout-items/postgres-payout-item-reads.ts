/** A payout batch's item ids in the PostgreSQL journal, read on demand. */
import type pg from "pg";
import type { JournalElsewhere } from "../journal-records.js";

/** The payout items' read of JournalElsewhere, on `pool`. */
export function postgresPayoutItemReads(pool: pg.Pool): Pick<JournalElsewhere, "payoutItemsHeld"> {
  return {
    /** See TransferJournal.payoutItemsHeld: one lookup in the key's index. */
    async payoutItemsHeld(apiKeyId: string, itemIds: readonly string[]): Promise<Map<string, number>> {
      const { rows } = await pool.query<{ item_id: string; transfer_id: number }>("SELECT item_id, transfer_id FROM payout_items WHERE api_key = $1 AND item_id = ANY($2::text[])", [apiKeyId, itemIds]);
      return new Map(rows.map((row) => [row.item_id, row.transfer_id]));
    },
  };
}
