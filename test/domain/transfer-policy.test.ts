/** The transfer policy for a payout batch: each item a payment of its own, the total against the key's cap. */
import { describe, expect, it } from "vitest";
import { TransferPolicy } from "../../src/domain/transfer-policy.js";
import { ServiceError } from "../../src/errors.js";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

function refusal(action: () => unknown): { code: string; message: string } | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    if (error instanceof ServiceError) return { code: error.code, message: error.message };
    throw error;
  }
}

describe("TransferPolicy.authorizePayout", () => {
  it("holds each item to the largest single amount and the allowed recipients, naming the item's index in the request", () => {
    const policy = new TransferPolicy({ maxUnitsPerTransfer: 10n, periodMs: 86_400_000, allowedRecipients: new Set([ALICE]) });
    expect(refusal(() => policy.authorizePayout("key", [{ index: 0, recipient: ALICE, units: 10n }, { index: 4, recipient: ALICE, units: 11n }]))).toEqual({
      code: "AMOUNT_ABOVE_LIMIT",
      message: "items[4]: a single transfer may move at most 10 base units; 11 base units requested",
    });
    expect(refusal(() => policy.authorizePayout("key", [{ index: 2, recipient: BOB, units: 1n }]))?.message).toBe(`items[2]: ${BOB} is not on the list of allowed recipients`);
    // Many items each under the limit are fine: the limit is per payment, not per batch.
    expect(refusal(() => policy.authorizePayout("key", Array.from({ length: 50 }, (_, index) => ({ index, recipient: ALICE, units: 10n }))))).toBeUndefined();
  });

  it("names amounts in the token's units, the base units beside, when it knows the token", () => {
    const policy = new TransferPolicy({ maxUnitsPerTransfer: 2_000_000_000n, capUnitsPerPeriod: 3_000_000_000n, periodMs: 86_400_000, unit: { symbol: "USDC", decimals: 6 } });
    expect(refusal(() => policy.authorize("key", ALICE, 2_001_000_000n))?.message).toBe("a single transfer may move at most 2000 USDC (2000000000 base units); 2001 USDC (2001000000 base units) requested");
    policy.authorize("key", ALICE, 2_000_000_000n);
    expect(refusal(() => policy.authorize("key", ALICE, 1_500_000_000n))?.message).toBe(
      "this API key may send 3000 USDC (3000000000 base units) per 24 h; 2000 USDC (2000000000 base units) already sent, 1500 USDC (1500000000 base units) requested",
    );
  });

  it("counts the batch's total against the key's cap at once, and gives it back when revoked", () => {
    const policy = new TransferPolicy({ capUnitsPerPeriod: 100n, periodMs: 86_400_000 });
    const items = [
      { index: 0, recipient: ALICE, units: 40n },
      { index: 1, recipient: BOB, units: 40n },
    ];
    const revoke = policy.authorizePayout("key", items);
    expect(refusal(() => policy.authorize("key", ALICE, 21n))?.code).toBe("DAILY_CAP_EXCEEDED");
    expect(refusal(() => policy.authorizePayout("key", items))?.code).toBe("DAILY_CAP_EXCEEDED");
    // Another key has a cap of its own.
    expect(refusal(() => policy.authorizePayout("other", items))).toBeUndefined();
    revoke();
    expect(refusal(() => policy.authorizePayout("key", items))).toBeUndefined();
  });
});

describe("TransferPolicy.decideApproval", () => {
  const DAY = 86_400_000;

  it("waits above APPROVAL_ABOVE, and once a key's last 24 hours would pass APPROVAL_ABOVE_PER_DAY: splitting escapes nothing", () => {
    let now = 1_000_000;
    const policy = new TransferPolicy({ approvalAboveUnits: 100n, approvalAbovePerPeriodUnits: 150n, periodMs: DAY }, [], () => now);
    expect(policy.decideApproval("key", 101n, [ALICE]).needsApproval).toBe(true);
    for (const units of [60n, 60n]) {
      const decision = policy.decideApproval("key", units, [ALICE]);
      expect(decision.needsApproval).toBe(false);
      policy.authorize("key", ALICE, units);
      decision.release();
    }
    // 120 sent: 40 more would pass 150.
    expect(policy.decideApproval("key", 40n, [ALICE]).needsApproval).toBe(true);
    expect(policy.decideApproval("key", 30n, [ALICE]).needsApproval).toBe(false);
    // Another key has its own day; a day later the first key's sends have left it.
    expect(policy.decideApproval("other", 100n, [ALICE]).needsApproval).toBe(false);
    now += DAY;
    expect(policy.decideApproval("key", 100n, [ALICE]).needsApproval).toBe(false);
  });

  it("counts what a person's keys sent together (API_KEY_HOLDERS), and forgets sends older than the period however many there were", () => {
    let now = 1_000_000;
    const holders = new Map([["alice-transfer", "alice"], ["alice-other", "alice"]]);
    const policy = new TransferPolicy({ approvalAbovePerPeriodUnits: 100n, periodMs: DAY, personOf: (key) => holders.get(key) ?? key }, [], () => now);
    for (let index = 0; index < 90; index++) policy.authorize("alice-transfer", ALICE, 1n);
    expect(policy.decideApproval("alice-other", 20n, [ALICE]).needsApproval).toBe(true);
    expect(policy.decideApproval("bob", 20n, [ALICE]).needsApproval).toBe(false);
    now += DAY;
    expect(policy.decideApproval("alice-other", 100n, [ALICE]).needsApproval).toBe(false);
  });

  it("counts requests decided at once, before any is sent: of three of 60 with 150 a day, the third waits; a request that was not sent gives its room back", () => {
    const policy = new TransferPolicy({ approvalAbovePerPeriodUnits: 150n, periodMs: DAY });
    const [first, second, third] = [policy.decideApproval("key", 60n, [ALICE]), policy.decideApproval("key", 60n, [ALICE]), policy.decideApproval("key", 60n, [ALICE])];
    expect([first.needsApproval, second.needsApproval, third.needsApproval]).toEqual([false, false, true]);
    // The second was refused before it was sent (nothing counted against the cap): its room is free again.
    second.release();
    second.release();
    expect(policy.decideApproval("key", 60n, [ALICE]).needsApproval).toBe(false);
  });
});
