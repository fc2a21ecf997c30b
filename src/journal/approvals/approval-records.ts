/** The journal's records: transfers above APPROVAL_ABOVE that wait for a second admin key, the decisions on them, and the address book that lets a recipient be paid without one. */
import type { JournalEntry, KeyClaim, RecordedRefusal, TransferRequest } from "../journal-records.js";
import type { AddressBook } from "./address-book.js";

export interface ApprovalRecords {
  /**
   * Like claimKey, for a transfer that waits for an admin's approval until `expiresAt` (ms, wall clock)
   * before anything is signed (state awaiting-approval); without a key, always a new entry.
   */
  requestApproval(key: string | undefined, request: TransferRequest, expiresAt: number): KeyClaim;
  /** Every network's transfers awaiting approval, the soonest to expire first, at most `limit`. */
  awaitingApproval(limit: number): JournalEntry[];
  /** How many transfers await approval (every network); of one API key only, when given. */
  awaitingApprovalCount(apiKeyId?: string): number;
  /**
   * The admin key `by` approved the entry at `at`: awaiting-approval becomes claimed, for this view's lane
   * to sign. Only from awaiting-approval, before it expires, on this view's network; whether it changed.
   */
  takeApproved(entryId: number, by: string, at: number): boolean;
  /** A refused or rejected entry's key answers `refusal` from now on (an approved transfer whose bytes died); whether it was one. */
  restateRefusal(entryId: number, refusal: RecordedRefusal): boolean;
  /** An approved entry nothing was signed for (a "try again", a restart) awaits its approval again; whether it did. */
  returnToApproval(entryId: number): boolean;
  /** The entry was rejected (by an admin key, or "expiry"): refused with `refusal`, nothing ever signed. Only from awaiting-approval; whether it changed. */
  refuseApproval(entryId: number, by: string, at: number, refusal: RecordedRefusal): boolean;
  /** ADDRESS_BOOK: the recipients paid without approval (one book for every network and lane). */
  readonly addressBook: AddressBook;
}
