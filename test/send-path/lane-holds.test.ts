import { afterEach, describe, expect, it } from "vitest";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";
import { readLaneHolds } from "../../src/send-path/unconfirmed-transfers.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1n };
const STUCK_AFTER = { blocks: 3, ms: 15_000 };

describe("what holds a pool's lane back", () => {
  let journal: TransferJournal;
  afterEach(() => journal.close());

  it("a transaction unmined past both STUCK_AFTER_BLOCKS and REBROADCAST_AFTER_MS since its latest attempt makes the lane stuck", () => {
    journal = openSqliteJournal(":memory:", OWNER);
    const id = journal.recordSigned(undefined, REQUEST, { nonce: 5, hash: `0x${"ab".repeat(32)}`, rawTransaction: "0x02", signedAtBlock: 100 });
    journal.recordAccepted(id);
    const signedAt = (journal.findById(id)?.attempts[0].createdAt ?? 0) as number;
    const holds = (head: number, msLater: number, minedNonceCount = 5) => readLaneHolds(journal, minedNonceCount, head, STUCK_AFTER, signedAt + msLater);
    expect(holds(103, 15_000).stuck).toBe(true);
    // Blocks alone (a fast chain, a transaction still being sent), or time alone (a slow chain): not stuck.
    expect(holds(110, 14_999).stuck).toBe(false);
    expect(holds(102, 60_000).stuck).toBe(false);
    // Mined: nothing waits.
    expect(holds(110, 60_000, 6).stuck).toBe(false);
    // A re-priced attempt is counted from its own signing.
    journal.recordAttempt(id, { hash: `0x${"cd".repeat(32)}`, rawTransaction: "0x03", kind: "transfer", signedAtBlock: 108 });
    expect(holds(110, 60_000).stuck).toBe(false);
    expect(holds(111, 60_000 + 15_000).stuck).toBe(true);
  });
});
