/** A payout batch's item ids in the SQLite journal: each held by one batch of its API key, from the claim on. */
import { PayoutItemsTakenError, type PayoutOrder } from "../journal-records.js";
import type { SqliteJournalStore } from "../sqlite-journal-store.js";
import type { PayoutItemRecords } from "./payout-item-records.js";
import type { SqliteJournalView, ViewClass } from "../sqlite-journal-view.js";

/** Adds the payout item records to a view of the SQLite journal (see the interface for what each method does). */
export function withSqlitePayoutItemRecords<Base extends ViewClass<SqliteJournalView>>(base: Base) {
  return class SqlitePayoutItemRecords extends base implements PayoutItemRecords {
    async payoutItemsHeld(apiKeyId: string, itemIds: readonly string[]): Promise<Map<string, number>> {
      const held = new Map<string, number>();
      for (const itemId of itemIds) {
        const holder = this.store.statements.payoutItemHolder.get(apiKeyId, itemId) as number | undefined;
        if (holder !== undefined) held.set(itemId, holder);
      }
      // A working copy holds the ids of the batches it holds; the shared database has every one. An id it
      // has not is taken by no batch but through this leader's own claims, which the claim checks again.
      const { elsewhere } = this.store;
      const missing = itemIds.filter((itemId) => !held.has(itemId));
      if (elsewhere && missing.length > 0) for (const [itemId, holder] of await elsewhere.payoutItemsHeld(apiKeyId, missing)) held.set(itemId, holder);
      return held;
    }
  };
}

/**
 * Takes a new batch's item ids for it, in the claim's own write: the ids are the batch's from the moment it
 * exists, or it does not exist (the claim is withdrawn and PayoutItemsTakenError names the ids taken).
 */
export function takePayoutItems(store: SqliteJournalStore, entryId: number, apiKey: string, payout: PayoutOrder): void {
  const { statements } = store;
  const paid = payout.items.filter((item) => item.duplicateOf === undefined).map((item) => item.id);
  const taken = paid.filter((itemId) => statements.payoutItemHolder.get(apiKey, itemId) !== undefined);
  if (taken.length > 0) {
    store.writeOne(`withdrawing the claim of entry ${entryId}`, () => statements.deleteClaim.run(entryId));
    throw new PayoutItemsTakenError(taken);
  }
  for (const itemId of paid) store.write(() => statements.takePayoutItem.run(apiKey, itemId, entryId));
}
