/** The audit log's chain checked entry by entry: what it catches from the log alone, and what it cannot. */
import { describe, expect, it } from "vitest";
import { AUDIT_GENESIS, type AuditRow, auditEntryHash, findAuditBreak } from "../../src/journal/audit-chain.js";

/** A sealed chain of `count` entries, as a journal seals them. */
function chainOf(count: number): AuditRow[] {
  const rows: AuditRow[] = [];
  let previous = AUDIT_GENESIS;
  for (let seq = 1; seq <= count; seq++) {
    const row = { seq, at: 1_795_000_000_000 + seq, kind: "transfer.signed", transfer_id: seq, actor: null, detail: JSON.stringify({ nonce: seq }) };
    const hash = auditEntryHash(previous, row);
    rows.push({ ...row, prev_hash: previous, hash });
    previous = hash;
  }
  return rows;
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
});
