/** The finality tracker's bookkeeping of the chain it follows, with a fake node and journal at the boundary. */
import { describe, expect, it } from "vitest";
import { FinalityTracker } from "../../src/finality/finality-tracker.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";
import type { FeeBlock } from "../../src/sending/wallet-snapshot.js";

const block = (number: number, hash: string, parentHash: string): FeeBlock => ({ number, hash, parentHash, baseFeePerGas: 1n });

describe("FinalityTracker with nothing settled to follow", () => {
  it("has what remembers blocks forget them when the chain moved on unchecked: a reorganisation, or reads that skipped blocks", async () => {
    const journal = { hasUnfinal: () => false } as unknown as TransferJournal;
    let jumps = 0;
    const tracker = new FinalityTracker({
      node: { send: async () => Promise.reject(new Error("no node call is expected")) },
      journal,
      finalityBlocks: 64,
      onReorg: async () => undefined,
      onUnfollowedJump: () => jumps++,
    });
    // The first read: nothing is known of what came before it.
    await tracker.follow(block(10, "0xa10", "0xa09"));
    expect(jumps).toBe(1);
    // Extends it: nothing to forget.
    await tracker.follow(block(11, "0xa11", "0xa10"));
    expect(jumps).toBe(1);
    // The same height with another hash, then a block whose parent is not the one read: two reorganisations.
    await tracker.follow(block(11, "0xb11", "0xb10"));
    expect(jumps).toBe(2);
    await tracker.follow(block(12, "0xc12", "0xc11"));
    expect(jumps).toBe(3);
    // Blocks skipped between two reads: whether they are one chain is not known without a node call.
    await tracker.follow(block(15, "0xc15", "0xc14"));
    expect(jumps).toBe(4);
    await tracker.follow(block(16, "0xc16", "0xc15"));
    expect(jumps).toBe(4);
  });
});
