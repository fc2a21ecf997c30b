/**
 * Each item's fate for its webhook events, from the batch's outcome and receipt: the contract's index past
 * the duplicates, only the wallet's own ItemFailed events, and a batch that paid nothing failing every item.
 */
import { AbiCoder, toBeHex, zeroPadValue } from "ethers";
import { describe, expect, it } from "vitest";
import type { JournalEntry, PayoutOrder } from "../../src/journal/transfer-journal.js";
import { ITEM_FAILED_TOPIC } from "../../src/node/payout-batch.js";
import { itemFatesOf, payoutItemEvents } from "../../src/webhooks/payout-item-events.js";

const CONTRACT = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
const WALLET = "0x0577A17Da00605B79cA15f1002aEdF1A7f801DdD";
const batch = {
  id: 5,
  hash: `0x${"ab".repeat(32)}`,
  lane: WALLET,
  token: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
  apiKeyId: "key_1",
  idempotencyKey: "key_1/payroll",
  payout: {
    contract: CONTRACT,
    items: [
      { id: "a", recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", units: 1n },
      { id: "dup", recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 2n, duplicateOf: 1 },
      { id: "b", recipient: "0x90F79bf6EB2c4f870365E785982E1f101E93b906", units: 3n },
    ],
  },
} as unknown as JournalEntry & { payout: PayoutOrder };

const failedLog = (index: number, payer = WALLET) => ({
  address: CONTRACT,
  topics: [ITEM_FAILED_TOPIC, zeroPadValue(payer, 32), zeroPadValue(toBeHex(index), 32)],
  data: AbiCoder.defaultAbiCoder().encode(["bytes"], ["0x"]),
});

describe("itemFatesOf", () => {
  it("maps the contract's index to the items the batch paid, reading only the wallet's own events", () => {
    const receipt = { status: "0x1", logs: [failedLog(1), failedLog(0, "0x000000000000000000000000000000000000dEaD")] };
    expect(itemFatesOf(batch, "transfer.confirmed", receipt)).toEqual([
      { state: "paid", reason: null },
      { state: "failed", reason: "the token reverted the transfer without a reason" },
    ]);
  });

  it("fails every item of a batch that paid nothing, saying why", () => {
    expect(itemFatesOf(batch, "transfer.cancelled", { status: "0x1", logs: [] }).map((fate) => fate.reason)).toEqual([expect.stringMatching(/cancelled/), expect.stringMatching(/cancelled/)]);
    expect(itemFatesOf(batch, "transfer.failed", { status: "0x0", logs: [] })[0].reason).toMatch(/reverted/);
    expect(itemFatesOf(batch, "transfer.failed", null)[0].reason).toMatch(/nonce/);
    // Mined, and yet the token logged no Transfer: the batch is failed, and so is every item.
    expect(itemFatesOf(batch, "transfer.failed", { status: "0x1", logs: [] }).map((fate) => fate.state)).toEqual(["failed", "failed"]);
  });
});

describe("payoutItemEvents", () => {
  const source = { network: { name: "base", chainId: 8453n, token: { symbol: "USDC", address: batch.token }, tokens: [] }, tokens: [{ symbol: "USDC", address: batch.token, native: false, decimals: 6, mayReturnFalse: false }] };
  const mined = { blockNumber: 9, blockHash: `0x${"cd".repeat(32)}`, confirmations: 1, gasUsed: null, effectiveGasPrice: null };
  const fates = [
    { state: "paid" as const, reason: null },
    { state: "failed" as const, reason: "blocked" },
  ];

  it("makes one event per item of its kind, none for the duplicate, each naming its batch and item", () => {
    const paid = payoutItemEvents("payout.item.paid", batch, batch.hash as string, source, mined, fates).map((event) => JSON.parse(event.body));
    const failed = payoutItemEvents("payout.item.failed", batch, batch.hash as string, source, mined, fates).map((event) => JSON.parse(event.body));
    expect(paid.map((event) => event.data.itemId)).toEqual(["a"]);
    expect(failed.map((event) => [event.data.itemId, event.data.reason, event.data.amountInTokens])).toEqual([["b", "blocked", "0.000003"]]);
    expect(paid[0].data).toMatchObject({ payoutId: 5, state: "paid", idempotencyKey: "payroll", blockNumber: 9 });
    // Reorganised: every item the batch pays is pending again.
    const reorged = payoutItemEvents("payout.item.reorged", batch, batch.hash as string, source, { ...mined, blockNumber: null, blockHash: null, confirmations: 0 });
    expect(reorged.map((event) => JSON.parse(event.body).data.state)).toEqual(["pending", "pending"]);
  });
});
