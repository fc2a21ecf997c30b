/**
 * Each item's state from the batch's receipt: the contract reports failures by their index in the call,
 * which leaves out the items an earlier batch holds, and by payer (a call made within the batch is not the
 * wallet's); a failure is final only in a final block; an absent receipt, or one of another block, proves
 * nothing.
 */
import { AbiCoder, toBeHex, zeroPadValue } from "ethers";
import { describe, expect, it } from "vitest";
import type { JournalEntry, PayoutOrder } from "../../src/journal/transfer-journal.js";
import { PayoutStatusReader } from "../../src/lookup/payout-status.js";
import type { TransactionLookup } from "../../src/lookup/transaction-lookup.js";
import type { TransactionStatus, TransactionStatusReader } from "../../src/lookup/transaction-status.js";
import { ITEM_FAILED_TOPIC } from "../../src/node/payout-batch.js";

const CONTRACT = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const HASH = `0x${"ab".repeat(32)}`;
const order: PayoutOrder = {
  contract: CONTRACT,
  items: [
    { id: "a", recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", units: 1_000_000n },
    { id: "b", recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 2_000_000n, duplicateOf: 3 },
    { id: "c", recipient: "0x90F79bf6EB2c4f870365E785982E1f101E93b906", units: 3_500_000n },
  ],
};
const WALLET = "0x0577A17Da00605B79cA15f1002aEdF1A7f801DdD";
const BLOCK = `0x${"cd".repeat(32)}`;
const entry = { id: 9, hash: HASH, lane: WALLET, token: "0x5FbDB2315678afecb367f032d93F642f64180aa3", payout: order } as JournalEntry & { payout: PayoutOrder };

// "Blocklistable: account is blocked" as the token's Error(string) revert data.
const BLOCKED = `0x08c379a0${AbiCoder.defaultAbiCoder().encode(["string"], ["Blocklistable: account is blocked"]).slice(2)}`;
const failedLog = (index: number, reason: string, { address = CONTRACT, payer = WALLET } = {}) => ({
  address,
  topics: [ITEM_FAILED_TOPIC, zeroPadValue(payer, 32), zeroPadValue(toBeHex(index), 32)],
  data: AbiCoder.defaultAbiCoder().encode(["bytes"], [reason]),
});

function readerWith(state: TransactionStatus["state"], logs: unknown[] | null, { finalized = true, receiptBlock = BLOCK } = {}) {
  const statuses = { read: async () => ({ hash: HASH, state, carriedBy: HASH, blockHash: BLOCK, finalized }) as unknown as TransactionStatus } as unknown as TransactionStatusReader;
  const lookup = { receipt: async () => (logs === null ? null : { status: "0x1", blockHash: receiptBlock, logs }) } as unknown as TransactionLookup;
  return new PayoutStatusReader(statuses, lookup, () => 6);
}
const earlier = async (batchId: number, itemId: string) => ({ id: itemId, toAddress: "", amount: "", units: "", state: "paid" as const, reason: null, duplicateOf: batchId === 3 ? null : batchId });

describe("PayoutStatusReader", () => {
  it("maps the contract's index of a failed item to the request's item, past the duplicates left out of the call", async () => {
    // Index 1 of the call is item "c": "b" was not in it.
    // Another contract's event, and one of a call a recipient made within the batch, are not the batch's.
    const stranger = "0x000000000000000000000000000000000000dEaD";
    const status = await readerWith("confirmed", [failedLog(1, BLOCKED), failedLog(0, BLOCKED, { address: stranger }), failedLog(0, BLOCKED, { payer: stranger })]).read(entry, earlier);
    expect(status.items.map(({ id, state, reason, duplicateOf, amount }) => ({ id, state, reason, duplicateOf, amount }))).toEqual([
      { id: "a", state: "paid", reason: null, duplicateOf: null, amount: "1" },
      { id: "b", state: "paid", reason: null, duplicateOf: 3, amount: "2" },
      { id: "c", state: "failed", reason: "the token reverted the transfer: Blocklistable: account is blocked", duplicateOf: null, amount: "3.5" },
    ]);
  });

  it("keeps every item pending while the receipt is not there, or is of another block than the status: neither proves anything", async () => {
    for (const reader of [readerWith("confirmed", null), readerWith("confirmed", [failedLog(1, BLOCKED)], { receiptBlock: `0x${"ef".repeat(32)}` })]) {
      const status = await reader.read(entry, earlier);
      expect(status.items.filter((item) => item.duplicateOf === null).map((item) => [item.state, item.reason])).toEqual([["pending", null], ["pending", null]]);
    }
  });

  it("reports a failure in a block not final yet as pending, with its reason: a reorganisation may still change it", async () => {
    const status = await readerWith("confirmed", [failedLog(1, BLOCKED)], { finalized: false }).read(entry, earlier);
    expect(status.items[0].state).toBe("paid");
    expect(status.items[2]).toMatchObject({ state: "pending", reason: expect.stringMatching(/Blocklistable.*not final yet/) });
    const cancelled = await readerWith("cancelled", [], { finalized: false }).read(entry, earlier);
    expect(cancelled.items[0]).toMatchObject({ state: "pending", reason: expect.stringMatching(/cancelled.*not final yet/) });
  });

  it("fails every item of a batch that reverted, was cancelled or lost its nonce, saying which", async () => {
    for (const [state, words] of [["failed", /reverted/], ["cancelled", /cancelled/], ["replaced", /nonce/]] as const) {
      const status = await readerWith(state, []).read(entry, earlier);
      expect(status.items[0]).toMatchObject({ state: "failed", reason: expect.stringMatching(words) });
    }
  });
});
