/** Transfers that wait for an admin's approval in the SQLite journal, and the decisions on them: each one conditional write. */
import { steadyWallClockNow } from "../../clock.js";
import type { AuditRecords } from "../audit/audit-records.js";
import { type EntryRow, toEntry } from "../journal-rows.js";
import type { JournalEntry, KeyClaim, RecordedRefusal, TransferRequest } from "../journal-records.js";
import type { AddressBook } from "./address-book.js";
import type { EntryClaims } from "../transfers/sqlite-transfer-records.js";
import type { ApprovalRecords } from "./approval-records.js";
import type { SqliteJournalView, ViewClass } from "../sqlite-journal-view.js";

/** Adds the approval records to a view of the SQLite journal (see the interface for what each method does). */
export function withSqliteApprovalRecords<Base extends ViewClass<SqliteJournalView & Pick<AuditRecords, "recordAudit"> & EntryClaims>>(base: Base) {
  return class SqliteApprovalRecords extends base implements ApprovalRecords {
    get addressBook(): AddressBook {
      return this.store.addressBook;
    }

    requestApproval(key: string | undefined, request: TransferRequest, expiresAt: number): KeyClaim {
      return this.claimEntry(key ?? null, request, expiresAt);
    }

    awaitingApproval(limit: number): JournalEntry[] {
      return (this.store.statements.awaitingApproval.all(limit) as EntryRow[]).map((row) => toEntry(row, []));
    }

    awaitingApprovalCount(apiKeyId?: string): number {
      const { statements } = this.store;
      return (apiKeyId === undefined ? statements.awaitingApprovalCount.get() : statements.awaitingApprovalCountOf.get(apiKeyId)) as number;
    }

    restateRefusal(entryId: number, refusal: RecordedRefusal): boolean {
      const restated = this.store.write(() => this.store.statements.restateRefusal.run({ id: entryId, ...refusal, now: steadyWallClockNow() })).changes === 1;
      if (restated) this.recordAudit({ kind: "transfer.refusal_restated", actor: null, transferId: entryId, detail: { refusalCode: refusal.code } });
      return restated;
    }

    takeApproved(entryId: number, by: string, at: number): boolean {
      const { statements } = this.store;
      return this.store.write(() => statements.takeApproved.run({ id: entryId, lane: this.lane, chain: this.network.chain, by, at, now: steadyWallClockNow() })).changes === 1;
    }

    returnToApproval(entryId: number): boolean {
      return this.store.write(() => this.store.statements.returnToApproval.run({ id: entryId, now: steadyWallClockNow() })).changes === 1;
    }

    refuseApproval(entryId: number, by: string, at: number, refusal: RecordedRefusal): boolean {
      const { statements } = this.store;
      const refused = this.store.write(() => statements.refuseApproval.run({ id: entryId, by, at, ...refusal, now: steadyWallClockNow() })).changes === 1;
      // Nothing of the batch was sent: its item ids may be paid by another.
      if (refused) this.store.write(() => statements.freePayoutItems.run(entryId));
      return refused;
    }
  };
}
