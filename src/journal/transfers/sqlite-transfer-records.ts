/** Transfers and their attempts in the SQLite journal: keys, signed bytes, states, and what the chain showed of them. */
import { steadyWallClockNow } from "../../clock.js";
import { type AttemptRow, type EntryRow, payoutAsText, toEntry } from "../journal-rows.js";
import { type JournalAttempt, type JournalEntry, JournalWriteError, type KeyClaim, type RecordedRefusal, type SignedTransfer, type StoredDisplacement, type TransferRequest } from "../journal-records.js";
import { takePayoutItems } from "../payout-items/sqlite-payout-item-records.js";
import type { TransferRecords } from "./transfer-records.js";
import type { SqliteJournalView, ViewClass } from "../sqlite-journal-view.js";

/** The claim under claimKey, which requestApproval (approvals/sqlite-approval-records.ts) claims through too. */
export interface EntryClaims {
  claimEntry(key: string | null, request: TransferRequest, approvalExpiresAt: number | null): KeyClaim;
}

/** Adds the transfer records to a view of the SQLite journal (see the interface for what each method does). */
export function withSqliteTransferRecords<Base extends ViewClass<SqliteJournalView>>(base: Base) {
  return class SqliteTransferRecords extends base implements TransferRecords, EntryClaims {
    wasRecorded(hash: string): Promise<boolean | undefined> {
      return this.store.wasRecorded(hash);
    }

    findByKey(key: string): JournalEntry | undefined {
      const row = this.store.statements.byKey.get(key) as EntryRow | undefined;
      return row && toEntry(row, this.store.attemptsOf(row.id));
    }

    claimKey(key: string, request: TransferRequest): KeyClaim {
      return this.claimEntry(key, request, null);
    }

    /** A new entry, claimed (or waiting for its approval until `approvalExpiresAt`), or the one that holds `key`. */
    claimEntry(key: string | null, request: TransferRequest, approvalExpiresAt: number | null): KeyClaim {
      // A journal that takes no writes still knows its keys: a repeat gets its first answer, not a 503 that
      // says nothing was done (the claim's write would throw). Not a working copy's: see rowsAreTheRecord.
      if (key !== null && this.store.failure && this.store.rowsAreTheRecord) {
        const held = this.store.statements.byKey.get(key) as EntryRow | undefined;
        if (held) return { outcome: "existing", entry: toEntry(held, this.store.attemptsOf(held.id)) };
      }
      const now = steadyWallClockNow();
      const { payout } = request;
      const inserted = this.store.write(() =>
        this.store.statements.claim.run({
          key,
          recipient: request.recipient,
          units: request.units.toString(),
          apiKeyId: request.apiKeyId ?? null,
          state: approvalExpiresAt === null ? "claimed" : "awaiting-approval",
          approvalExpiresAt,
          notify: this.store.notify,
          ...this.network,
          token: request.token ?? this.network.token,
          payout: payout ? payoutAsText(payout) : null,
          lane: this.lane,
          now,
        }),
      );
      if (inserted.changes === 1) {
        const entryId = Number(inserted.lastInsertRowid);
        if (payout) takePayoutItems(this.store, entryId, request.apiKeyId ?? "", payout);
        return { outcome: "claimed", entryId };
      }
      const row = this.store.statements.byKey.get(key) as EntryRow;
      return { outcome: "existing", entry: toEntry(row, this.store.attemptsOf(row.id)) };
    }

    recordSigned(entryId: number | undefined, request: TransferRequest, signed: SignedTransfer): number {
      const { nonce, hash, rawTransaction, signedAtBlock, kind = "transfer" } = signed;
      const values = { nonce, hash, rawTransaction, now: steadyWallClockNow() };
      let id: number;
      if (entryId !== undefined) {
        this.store.writeOne(`signing entry ${entryId}`, () => this.store.statements.updateSigned.run({ ...values, id: entryId }));
        this.store.write(() => this.store.statements.dropAttempts.run(entryId));
        id = entryId;
      } else {
        const inserted = this.store.write(() =>
          // A nonce filler or a gas top-up (0 units) is no client's transfer: webhooks do not report it.
          this.store.statements.insertSigned.run({ ...values, ...this.network, token: request.token ?? this.network.token, lane: this.lane, recipient: request.recipient, units: request.units.toString(), apiKeyId: request.apiKeyId ?? null, notify: request.units > 0n ? this.store.notify : 0 }),
        );
        id = Number(inserted.lastInsertRowid);
      }
      this.#insertAttempt(id, { hash, rawTransaction, kind, signedAtBlock });
      return id;
    }

    recordAttempt(entryId: number, attempt: Omit<JournalAttempt, "createdAt">): void {
      this.#insertAttempt(entryId, attempt);
      const attempts = this.store.attemptsOf(entryId);
      if (attempts.length > 1) for (const { hash } of attempts) this.store.severalAttemptHashes.add(hash);
    }

    recordMined(entryId: number, hash: string): void {
      this.store.writeOne(`marking ${hash} mined for entry ${entryId}`, () => this.store.statements.setMined.run({ id: entryId, hash, now: steadyWallClockNow() }));
    }

    recordAccepted(entryId: number): boolean {
      return this.#setStateFrom(entryId, "accepted", ["signed"]);
    }

    recordRefused(entryId: number, refusal: RecordedRefusal): void {
      this.store.writeOne(`refusing entry ${entryId}`, () => this.store.statements.setRefusal.run({ id: entryId, state: "refused", from: "claimed", ...refusal, now: steadyWallClockNow() }));
      this.store.write(() => this.store.statements.freePayoutItems.run(entryId));
    }

    recordRejected(entryId: number, refusal: RecordedRefusal): void {
      this.store.writeOne(`rejecting entry ${entryId}`, () => this.store.statements.setRefusal.run({ id: entryId, state: "rejected", from: "signed", ...refusal, now: steadyWallClockNow() }));
      this.store.write(() => this.store.statements.freePayoutItems.run(entryId));
    }

    recordReplaced(entryId: number): boolean {
      return this.#setStateFrom(entryId, "replaced", ["signed", "accepted", "nonce-used"]);
    }

    recordDisplacement(entryId: number, displacement: StoredDisplacement | null): void {
      const text = displacement && JSON.stringify({ by: displacement.by, block: { number: displacement.block.number, hash: displacement.block.hash }, nonce: displacement.nonce });
      this.store.writeOne(`recording what displaced entry ${entryId}`, () => this.store.statements.setDisplacement.run({ id: entryId, displacement: text, now: steadyWallClockNow() }));
    }

    recordSignedAgain(entryId: number, signed: SignedTransfer): void {
      const { nonce, hash, rawTransaction, signedAtBlock, kind = "transfer" } = signed;
      this.store.writeOne(`signing entry ${entryId} again at nonce ${nonce}`, () => this.store.statements.setNewNonce.run({ id: entryId, nonce, now: steadyWallClockNow() }));
      this.#insertAttempt(entryId, { hash, rawTransaction, kind, signedAtBlock });
      for (const { hash: attemptHash } of this.store.attemptsOf(entryId)) this.store.severalAttemptHashes.add(attemptHash);
    }

    // Changes the state only from one of `from`; whether it did. An entry that does not exist is an error.
    #setStateFrom(entryId: number, state: JournalEntry["state"], from: JournalEntry["state"][]): boolean {
      const { changes } = this.store.write(() => this.store.statements.setStateFrom.run({ id: entryId, state, from: JSON.stringify(from), now: steadyWallClockNow() }));
      if (changes === 0 && !this.store.statements.byId.get(entryId)) throw new JournalWriteError(`journal: marking entry ${entryId} ${state} found no such entry`);
      return changes === 1;
    }

    releaseKey(entryId: number): boolean {
      const released = this.store.write(() => this.store.statements.deleteClaim.run(entryId)).changes === 1;
      if (released) this.store.write(() => this.store.statements.freePayoutItems.run(entryId));
      return released;
    }

    markNonceUsedBelow(minedNonceCount: number): number {
      return this.store.write(() => this.store.statements.markNonceUsed.run({ ...this.laneOnNetwork, count: minedNonceCount, now: steadyWallClockNow() })).changes;
    }

    markUnminedFrom(minedNonceCount: number, atBlock: number): number {
      return this.store.write(() => this.store.statements.markUnmined.run({ ...this.laneOnNetwork, count: minedNonceCount, block: atBlock, now: steadyWallClockNow() })).changes;
    }

    markSettledAt(block: number, resettle = false): number {
      return this.store.write(() => this.store.statements.settleAt.run({ ...this.laneOnNetwork, block, resettle: resettle ? 1 : 0, now: steadyWallClockNow() })).changes;
    }

    lowestUnfinalSettledBlock(): number | undefined {
      return (this.store.statements.lowestUnfinalSettled.get(this.laneOnNetwork) as number | null) ?? undefined;
    }

    hasUnfinal(): boolean {
      return this.store.statements.hasUnfinal.get(this.laneOnNetwork) !== undefined;
    }

    unfinal(): JournalEntry[] {
      return (this.store.statements.unfinal.all(this.laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.store.attemptsOf(row.id)));
    }

    markUnmined(entryId: number): boolean {
      return this.store.write(() => this.store.statements.unmineOne.run({ id: entryId, now: steadyWallClockNow() })).changes === 1;
    }

    finalizeThrough(finalizedBlock: number): number {
      return this.store.write(() => this.store.statements.finalize.run({ ...this.laneOnNetwork, finalized: finalizedBlock, now: steadyWallClockNow() })).changes;
    }

    finalizedUnreported(): JournalEntry[] {
      return (this.store.statements.finalizedUnreported.all(this.laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.store.attemptsOf(row.id)));
    }

    usedUnverified(): JournalEntry[] {
      return (this.store.statements.usedUnverified.all(this.laneOnNetwork) as EntryRow[]).map((row) => toEntry(row, this.store.attemptsOf(row.id)));
    }

    lanesWithUnsettled(): string[] {
      return this.store.statements.lanesWithUnsettled.all({ chain: this.network.chain }) as string[];
    }

    networksWithUnsettled(): bigint[] {
      return (this.store.statements.networksWithUnsettled.all() as string[]).map((chain) => BigInt(chain));
    }

    unsettled(): JournalEntry[] {
      const rows = this.store.statements.unsettled.all(this.laneOnNetwork) as EntryRow[];
      // By the entries' ids: a join from the attempts' side read every attempt of the history.
      const attempts = this.store.attemptsOfEach(rows.map((row) => row.id));
      return rows.map((row) => toEntry(row, attempts.get(row.id) ?? []));
    }

    findById(entryId: number): JournalEntry | undefined {
      const row = this.store.statements.byId.get(entryId) as EntryRow | undefined;
      return row && toEntry(row, this.store.attemptsOf(row.id));
    }

    findByHash(hash: string): JournalEntry | undefined {
      const attempt = this.store.statements.attemptByHash.get(hash.toLowerCase()) as AttemptRow | undefined;
      const row = attempt && (this.store.statements.byId.get(attempt.transfer_id) as EntryRow | undefined);
      return row && toEntry(row, this.store.attemptsOf(row.id));
    }

    #insertAttempt(entryId: number, attempt: Omit<JournalAttempt, "createdAt">): void {
      this.store.writeOne(`adding an attempt to entry ${entryId}`, () =>
        this.store.statements.insertAttempt.run({ transferId: entryId, ...attempt, now: steadyWallClockNow() }),
      );
    }

    async lookUpByHash(hash: string): Promise<JournalEntry | undefined> {
      return this.findByHash(hash) ?? this.store.elsewhere?.findByHash(hash);
    }

    findWithSeveralAttempts(hash: string): JournalEntry | undefined | Promise<JournalEntry | undefined> {
      const lowercase = hash.toLowerCase();
      if (this.store.severalAttemptHashes.has(lowercase)) return this.findByHash(lowercase);
      // A transfer held here is held with every attempt: one attempt of it is no re-priced transfer.
      const { elsewhere } = this.store;
      return elsewhere && this.store.statements.attemptByHash.get(lowercase) === undefined ? elsewhere.findWithSeveralAttempts(lowercase) : undefined;
    }

    async unjournaledNonces(nonces: readonly number[]): Promise<number[]> {
      const { lane, chain } = this.laneOnNetwork;
      const held = new Set(this.store.statements.noncesHeld.all({ lane, chain, nonces: JSON.stringify(nonces) }) as number[]);
      const missing = nonces.filter((nonce) => !held.has(nonce));
      // A working copy holds what is not settled for good: absence here is a question for the shared database.
      const { elsewhere } = this.store;
      if (missing.length === 0 || !elsewhere) return missing;
      await this.flushed().catch(() => undefined);
      const heldThere = await elsewhere.noncesHeld(lane, chain, missing);
      return missing.filter((nonce) => !heldThere.has(nonce));
    }

    async highestNonce(): Promise<number | undefined> {
      const { lane, chain } = this.laneOnNetwork;
      const here = this.store.statements.highestNonce.get({ lane, chain }) as number | null;
      const there = this.store.elsewhere ? await this.store.elsewhere.highestNonce(lane, chain) : undefined;
      const highest = Math.max(here ?? -1, there ?? -1);
      return highest < 0 ? undefined : highest;
    }
  };
}
