/** The audit log's chain checked entry by entry: what it catches from the log alone, and what it cannot. */
import { describe, expect, it } from "vitest";
import { AUDIT_ARCHIVED_KIND, AUDIT_GENESIS, AuditChainCheck, type AuditRow, auditEntryHash, findAuditBreak } from "../../src/journal/audit/audit-chain.js";

/** A sealed chain of `count` entries, as a journal seals them; `entry` says what an entry records (a signing by default). */
function chainOf(count: number, entry: (seq: number, rows: AuditRow[]) => Pick<AuditRow, "kind" | "detail"> = (seq) => ({ kind: "transfer.signed", detail: JSON.stringify({ nonce: seq }) })): AuditRow[] {
  const rows: AuditRow[] = [];
  let previous = AUDIT_GENESIS;
  for (let seq = 1; seq <= count; seq++) {
    const row = { seq, at: 1_795_000_000_000 + seq, transfer_id: seq, actor: null, ...entry(seq, rows) };
    const hash = auditEntryHash(previous, row);
    rows.push({ ...row, prev_hash: previous, hash });
    previous = hash;
  }
  return rows;
}

/** Checks `rows` as audit:verify does a log that may start after archived entries: the first break, then finish()'s. */
function checkAfterArchived(rows: AuditRow[]) {
  const check = new AuditChainCheck({ afterArchived: true });
  return { broken: findAuditBreak(rows, check) ?? check.finish(), check };
}

describe("the audit chain", () => {
  it("holds for a chain as sealed, from entry 1", () => {
    expect(findAuditBreak(chainOf(5))).toBeUndefined();
    expect(findAuditBreak([])).toBeUndefined();
  });

  it("names an entry whose field changed, one whose pointer back was changed with its hash, and one never sealed", () => {
    const changed = chainOf(5);
    changed[2] = { ...changed[2], detail: JSON.stringify({ nonce: 4 }) };
    expect(findAuditBreak(changed)).toEqual({ seq: 3, reason: expect.stringContaining("entry 3 (transfer.signed) was changed") });

    const rehashed = chainOf(5);
    const forged = { ...rehashed[2], actor: "key_forger" };
    rehashed[2] = { ...forged, hash: auditEntryHash(forged.prev_hash as string, forged) };
    // Its own hash now matches, but the next entry points back to the old one.
    expect(findAuditBreak(rehashed)).toEqual({ seq: 4, reason: expect.stringContaining("entry 4 points back to") });

    const unsealed = chainOf(3);
    unsealed[1] = { ...unsealed[1], hash: null };
    expect(findAuditBreak(unsealed)).toEqual({ seq: 2, reason: "entry 2 was never sealed (no hash)" });
  });

  it("names the entry after a gap (removed entries) and one out of order; a chain not starting at 1 lost its head", () => {
    const rows = chainOf(6);
    expect(findAuditBreak([...rows.slice(0, 2), ...rows.slice(4)])).toEqual({ seq: 5, reason: "entries 3 to 4 are missing before entry 5: removed" });
    expect(findAuditBreak([rows[0], rows[2], rows[1]])).toEqual({ seq: 3, reason: "entry 2 is missing before entry 3: removed" });
    expect(findAuditBreak(rows.slice(1))).toEqual({ seq: 2, reason: "entry 1 is missing before entry 2: removed" });
  });

  it("cannot tell, from the log alone, entries removed from its end (a kept seq and hash can: see audit:verify --expect)", () => {
    expect(findAuditBreak(chainOf(6).slice(0, 4))).toBeUndefined();
  });

  describe("after retention archived its head", () => {
    // Entries 1-4 archived: entry 6 records it (through 4, with 4's hash), as retention does in the commit that deletes them.
    const archivedThrough = (through: number, hashOf: (rows: AuditRow[]) => string | null = (rows) => rows[through - 1].hash) =>
      chainOf(8, (seq, rows) => (seq === 6 ? { kind: AUDIT_ARCHIVED_KIND, detail: JSON.stringify({ throughSeq: through, lastHash: hashOf(rows), into: "audit-2026-11-27.jsonl" }) } : { kind: "transfer.signed", detail: JSON.stringify({ nonce: seq }) }));

    it("holds from where the log starts when an archiving entry of the chain vouches for that start, and from entry 1 with the archive", () => {
      const rows = archivedThrough(4);
      const withoutArchive = checkAfterArchived(rows.slice(4));
      expect(withoutArchive.broken).toBeUndefined();
      expect([withoutArchive.check.firstSeq, withoutArchive.check.lastSeq, withoutArchive.check.checked]).toEqual([5, 8, 4]);
      expect(checkAfterArchived(rows).broken).toBeUndefined();
      // The plain check still wants entry 1.
      expect(findAuditBreak(rows.slice(4))).toEqual({ seq: 5, reason: "entries 1 to 4 are missing before entry 5: removed" });
    });

    it("breaks where the log starts when no archiving entry accounts for what is missing, or one names another entry or hash", () => {
      const removedMore = checkAfterArchived(archivedThrough(4).slice(5));
      expect(removedMore.broken).toEqual({ seq: 6, reason: `entries 1 to 5 are missing before entry 6, and no ${AUDIT_ARCHIVED_KIND} entry says they were archived: removed` });
      expect(checkAfterArchived(chainOf(8).slice(4)).broken).toEqual({ seq: 5, reason: expect.stringContaining("entries 1 to 4 are missing before entry 5") });
      expect(checkAfterArchived(archivedThrough(4, () => "f".repeat(64)).slice(4)).broken?.seq).toBe(5);
      expect(checkAfterArchived(archivedThrough(3).slice(4)).broken?.seq).toBe(5);
    });

    it("skips entries read twice when identical (a pass cut off between its file and its commit), and names one that changed", () => {
      const rows = archivedThrough(4);
      // The archive file holds 1-4 twice, and the log still holds 3 and 4.
      expect(checkAfterArchived([...rows.slice(0, 4), ...rows.slice(0, 4), ...rows.slice(2)]).broken).toBeUndefined();
      expect(checkAfterArchived([...rows.slice(0, 4), ...rows.slice(2)]).check.checked).toBe(8);
      const changed = { ...rows[2], detail: JSON.stringify({ nonce: 99 }) };
      const changedHash = { ...changed, hash: auditEntryHash(rows[1].hash as string, changed) };
      expect(checkAfterArchived([...rows.slice(0, 4), changedHash, ...rows.slice(3)]).broken).toEqual({ seq: 3, reason: expect.stringContaining("entry 3 appears twice, the second time changed") });
      // A copy changed with its recorded hashes kept is no repeat either.
      const sameHashes = { ...rows[2], actor: "key_forger" };
      expect(checkAfterArchived([...rows.slice(0, 4), sameHashes, ...rows.slice(3)]).broken).toEqual({ seq: 3, reason: expect.stringContaining("entry 3 appears twice, the second time changed") });
    });
  });
});
