/**
 * When the funding lane tops a lane up, decided from facts only: the lane's balance as its latest snapshot
 * read it, and the funding lane's journal. Fakes at the boundary (journal rows, the send itself); the real
 * ledger. The whole path on real nodes is in test/e2e/wallet-pool.test.ts.
 */
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import type { JournalEntry } from "../../src/journal/transfer-journal.js";
import { GasTopUps, type TopUpLane, gasTopUpSettingsOf } from "../../src/network/gas-top-ups.js";
import { ConfigError } from "../../src/settings/settings-part.js";
import { WalletLedger } from "../../src/send-path/wallet-ledger.js";
import { snapshotAt } from "../helpers/fake-chain.js";

const ETHER = 10n ** 18n;
const FUNDER = "0x1000000000000000000000000000000000000001";
const LOW = "0x2000000000000000000000000000000000000002";
const SETTINGS = { from: FUNDER, below: 1n * ETHER, to: 5n * ETHER };

/** A lane whose balance is `ether` at `block`; its journal holds `unsettled`. */
function laneAt(address: string, block: number, ether: bigint, unsettled: JournalEntry[] = []) {
  const ledger = new WalletLedger({ ...snapshotAt(block, 0), ethBalance: ether });
  const sent: { lane: string; wei: bigint }[] = [];
  const lane = {
    address,
    ledger,
    journal: { unsettled: vi.fn(() => unsettled) },
    transfers: {
      sendGasTopUp: vi.fn(async (to: string, wei: bigint) => {
        sent.push({ lane: to, wei });
        // What the real service journals before it resolves: an unsettled entry of kind top-up.
        unsettled.push({ recipient: to, hash: `0x${"ab".repeat(32)}`, attempts: [{ kind: "top-up", hash: `0x${"ab".repeat(32)}` }] } as JournalEntry);
        return { hash: `0x${"ab".repeat(32)}` };
      }),
    },
    ensureBalances: vi.fn(async () => undefined),
  };
  return { lane: lane as unknown as TopUpLane & typeof lane, ledger, sent, unsettled };
}

/** Wakes the top-ups and waits for the round. */
async function round(topUps: GasTopUps): Promise<void> {
  topUps.wake();
  await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("gas top-ups", () => {
  it("tops a low lane up to GAS_TOPUP_TO once: none while it is unmined, none after until the lane's balance is read at the block that showed it mined", async () => {
    const funder = laneAt(FUNDER, 100, 100n * ETHER);
    const low = laneAt(LOW, 100, ETHER / 2n);
    const topUps = new GasTopUps(SETTINGS, [funder.lane, low.lane], pino({ level: "silent" }));

    await round(topUps);
    expect(funder.sent).toEqual([{ lane: LOW, wei: 5n * ETHER - ETHER / 2n }]);
    expect(topUps.inFlight).toEqual([{ lane: LOW, hash: `0x${"ab".repeat(32)}` }]);
    // Unmined: the lane's balance is still low, and nothing more is sent.
    await round(topUps);
    expect(funder.sent).toHaveLength(1);

    // Mined, as the funding lane's snapshot at block 104 shows; the low lane's balance is from block 100.
    funder.unsettled.length = 0;
    funder.ledger.applySnapshot({ ...snapshotAt(104, 1), ethBalance: 95n * ETHER });
    await round(topUps);
    expect(funder.sent).toHaveLength(1);
    expect(low.lane.ensureBalances).toHaveBeenCalledWith(0);
    // Read at block 103 (a lagging backend): still too old to decide from.
    low.ledger.applySnapshot({ ...snapshotAt(103, 0), ethBalance: ETHER / 2n });
    await round(topUps);
    expect(funder.sent).toHaveLength(1);
    // Read at 104 with the top-up in it: nothing owed.
    low.ledger.applySnapshot({ ...snapshotAt(104, 0), ethBalance: 5n * ETHER });
    await round(topUps);
    expect(funder.sent).toHaveLength(1);
    expect(topUps.sentTo(LOW)).toBe(1);
    // Nothing low, nothing to follow: a round (one per lane per block) reads nothing at all.
    const reads = funder.lane.journal.unsettled.mock.calls.length;
    await round(topUps);
    expect(funder.lane.journal.unsettled.mock.calls.length).toBe(reads);
    await topUps.stop();
  });

  it("tops up again when the lane's balance read after the top-up settled is still low (it was reported failed, not mined)", async () => {
    const funder = laneAt(FUNDER, 100, 100n * ETHER);
    const low = laneAt(LOW, 100, 0n);
    const topUps = new GasTopUps(SETTINGS, [funder.lane, low.lane], pino({ level: "silent" }));
    await round(topUps);
    funder.unsettled.length = 0;
    funder.ledger.applySnapshot({ ...snapshotAt(101, 1), ethBalance: 100n * ETHER });
    await round(topUps);
    low.ledger.applySnapshot({ ...snapshotAt(101, 0), ethBalance: 0n });
    await round(topUps);
    expect(funder.sent.map((sent) => sent.wei)).toEqual([5n * ETHER, 5n * ETHER]);
    await topUps.stop();
  });

  it("sends nothing that would leave the funding lane below GAS_TOPUP_BELOW, and does not retry a failed top-up at once", async () => {
    const funder = laneAt(FUNDER, 100, 5n * ETHER);
    const low = laneAt(LOW, 100, 0n);
    const topUps = new GasTopUps(SETTINGS, [funder.lane, low.lane], pino({ level: "silent" }));
    await round(topUps);
    expect(funder.sent).toEqual([]);

    const refusing = laneAt(FUNDER, 100, 100n * ETHER);
    refusing.lane.transfers.sendGasTopUp.mockRejectedValue(new Error("the node refused it"));
    const retried = new GasTopUps(SETTINGS, [refusing.lane, low.lane], pino({ level: "silent" }));
    await round(retried);
    await round(retried);
    expect(refusing.lane.transfers.sendGasTopUp).toHaveBeenCalledTimes(1);
    await Promise.all([topUps.stop(), retried.stop()]);
  });

  it("takes GAS_TOPUP_FROM as one of the pool's wallets, in any case, and refuses any other or a pool of one", () => {
    const config = { gasTopUpFrom: LOW.toUpperCase().replace("0X", "0x"), gasTopUpBelow: "0.5", gasTopUpTo: "2" };
    expect(gasTopUpSettingsOf(config, [FUNDER, LOW])).toEqual({ from: LOW, below: ETHER / 2n, to: 2n * ETHER });
    expect(gasTopUpSettingsOf({}, [FUNDER, LOW])).toBeUndefined();
    expect(() => gasTopUpSettingsOf(config, [FUNDER])).toThrow(ConfigError);
    expect(() => gasTopUpSettingsOf(config, [LOW])).toThrow(/only wallet/);
  });
});
