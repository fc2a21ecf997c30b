/** The webhook outbox in the SQLite journal: events written in the commit of the change they report, and their deliveries. */
import { steadyWallClockNow } from "../../clock.js";
import { type DeliveryRow, type EntryRow, toDelivery, toEntry } from "../journal-rows.js";
import type { DeliveryState, JournalEntry, TransferEventType, WebhookDelivery, WebhookEventRecord } from "../journal-records.js";
import type { WebhookOutbox } from "./webhook-outbox.js";
import type { SqliteJournalView, ViewClass } from "../sqlite-journal-view.js";

/** Adds the webhook outbox to a view of the SQLite journal (see the interface for what each method does). */
export function withSqliteWebhookOutbox<Base extends ViewClass<SqliteJournalView>>(base: Base) {
  return class SqliteWebhookOutbox extends base implements WebhookOutbox {
    recordEvent(event: WebhookEventRecord, endpoints: readonly string[], reported?: TransferEventType, blockHash: string | null = null): void {
      const now = steadyWallClockNow();
      const { lastInsertRowid } = this.store.write(() => this.store.statements.insertEvent.run({ ...event, now }));
      for (const endpoint of endpoints) this.store.write(() => this.store.statements.insertDelivery.run({ seq: lastInsertRowid, endpoint, now }));
      if (reported) this.store.writeOne(`reporting entry ${event.entryId}`, () => this.store.statements.setReported.run({ id: event.entryId, reported, blockHash, now }));
    }

    unreportedSettled(): JournalEntry[] {
      return (this.store.statements.unreportedSettled.all(this.laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.store.attemptsOf(row.id)));
    }

    reportedButUnmined(): JournalEntry[] {
      return (this.store.statements.reportedButUnmined.all(this.laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.store.attemptsOf(row.id)));
    }

    dueDeliveries(now: number, limit: number, excludedIds: ReadonlySet<number>): (WebhookDelivery & { body: string })[] {
      const rows = this.store.statements.dueDeliveries.all({ now, limit: limit + excludedIds.size }) as DeliveryRow[];
      return rows
        .filter((row) => !excludedIds.has(row.id))
        .slice(0, limit)
        .map((row) => ({ ...toDelivery(row), body: row.body as string }));
    }

    recordDeliveryAttempt(id: number, outcome: { state: DeliveryState; lastStatus: string; nextAttemptAt: number }): void {
      this.store.writeOne(`recording delivery ${id}`, () => this.store.statements.deliveryAttempt.run({ id, ...outcome, now: steadyWallClockNow() }));
    }

    async deliveries(state: DeliveryState | undefined, limit: number): Promise<WebhookDelivery[]> {
      const { elsewhere } = this.store;
      // A working copy holds every undelivered delivery (see HOT_TRANSFERS), not every delivered one.
      if (elsewhere && (state === undefined || state === "delivered")) {
        await this.flushed().catch(() => undefined);
        return elsewhere.deliveries(state, limit);
      }
      if (state === undefined) return (this.store.statements.latestDeliveries.all({ limit }) as DeliveryRow[]).map(toDelivery);
      return (this.store.statements.deliveriesIn.all({ state, limit }) as DeliveryRow[]).map(toDelivery);
    }

    async deliveriesOf(entryId: number, limit: number): Promise<WebhookDelivery[]> {
      const { elsewhere } = this.store;
      if (elsewhere && this.store.statements.byId.get(entryId) === undefined) return elsewhere.deliveriesOf(entryId, limit);
      return (this.store.statements.deliveriesOfTransfer.all({ entryId, limit }) as DeliveryRow[]).map(toDelivery);
    }

    retryDelivery(id: number): boolean {
      return this.store.write(() => this.store.statements.retryDelivery.run({ id, now: steadyWallClockNow() })).changes === 1;
    }

    deliveryBacklog(): { pending: number; oldestCreatedAt: number | null } {
      const row = this.store.statements.backlog.get() as { pending: number; oldest: number | null };
      return { pending: row.pending, oldestCreatedAt: row.oldest };
    }
  };
}
