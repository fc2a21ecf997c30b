/**
 * One wallet as a lane of one: at most MAX_IN_FLIGHT_PER_LANE transfers being sent or unmined; the next
 * waits for one to be mined, or is answered 503 NO_LANE_AVAILABLE with Retry-After; a repeat never waits.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ServiceError } from "../../src/errors.js";
import type { JournalEntry, TransferJournal, TransferRequest } from "../../src/journal/transfer-journal.js";
import { SlotQueue } from "../../src/lanes/slot-queue.js";
import type { OnReserved, TokenTransferService, TransferOutcome } from "../../src/send-path/transfer-service.js";
import { WalletInFlightLimit } from "../../src/network/wallet-in-flight-limit.js";
import { WalletLedger } from "../../src/send-path/wallet-ledger.js";
import { snapshotAt } from "../helpers/fake-chain.js";

const WALLET = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const REQUEST: TransferRequest = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1n };

/**
 * A wallet whose transfers reserve in a real ledger and are signed at the next nonce, or are refused
 * before reserving while `refusals` last; `sent` counts what reached it.
 */
function walletOf(ledger: WalletLedger) {
  let nonce = 0;
  const state = { sent: 0, refusals: 0 };
  const transfers = {
    async sendTokenTransfer(_request: TransferRequest, _key?: string, _authorize?: unknown, onReserved?: OnReserved): Promise<TransferOutcome> {
      state.sent++;
      await Promise.resolve();
      if (state.refusals > 0 && state.refusals--) throw new ServiceError("INSUFFICIENT_TOKEN_BALANCE", "short");
      const reservation = ledger.reserve(1n, 1n);
      onReserved?.();
      ledger.assignNonce(reservation, nonce++);
      return { transfer: {} as TransferOutcome["transfer"], replayed: false };
    },
  };
  return { state, wallet: { address: WALLET, ledger, transfers: transfers as unknown as TokenTransferService } };
}

const noJournal = { findByKey: () => undefined } as unknown as TransferJournal;

/** A wallet at block 100 whose ledger wakes the queue as the lane does, behind a limit of `maxInFlight`. */
function limited(maxInFlight: number, maxWaitMs: number, journal = noJournal) {
  const ledger = new WalletLedger(snapshotAt(100, 0));
  const slots = new SlotQueue();
  ledger.onFreed = () => slots.wake();
  const { state, wallet } = walletOf(ledger);
  return { ledger, slots, state, limit: new WalletInFlightLimit(wallet, journal, { maxInFlight, maxWaitMs }, slots) };
}

describe("WalletInFlightLimit", () => {
  afterEach(() => vi.useRealTimers());

  it("lets MAX_IN_FLIGHT_PER_LANE in; the next waits until a snapshot shows one mined, then goes", async () => {
    const { ledger, state, limit } = limited(3, 10_000);
    await Promise.all([1, 2, 3].map(() => limit.sendTokenTransfer(REQUEST)));
    expect(limit.inFlight).toBe(3);
    let fourthDone = false;
    const fourth = limit.sendTokenTransfer(REQUEST).then(() => (fourthDone = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(fourthDone).toBe(false);
    expect(state.sent).toBe(3);
    // The chain mined nonce 0.
    ledger.applySnapshot(snapshotAt(101, 1));
    await fourth;
    expect(state.sent).toBe(4);
    expect(limit.inFlight).toBe(3);
  });

  it("counts transfers on their way to a reservation: a burst never lets more in than the limit", async () => {
    const { ledger, slots, state, limit } = limited(4, 10_000);
    const burst = Array.from({ length: 10 }, () => limit.sendTokenTransfer(REQUEST));
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.sent).toBe(4);
    expect(slots.size).toBe(6);
    ledger.applySnapshot(snapshotAt(101, 4));
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.sent).toBe(8);
    ledger.applySnapshot(snapshotAt(102, 8));
    await Promise.all(burst);
    expect(state.sent).toBe(10);
  });

  it("a transfer refused before its reservation frees its room for the next at once", async () => {
    const { state, limit } = limited(1, 10_000);
    state.refusals = 1;
    const refused = limit.sendTokenTransfer(REQUEST);
    const next = limit.sendTokenTransfer(REQUEST);
    await expect(refused).rejects.toMatchObject({ code: "INSUFFICIENT_TOKEN_BALANCE" });
    await next;
    expect(state.sent).toBe(2);
    expect(limit.inFlight).toBe(1);
  });

  it("after waiting TRANSFER_SLOT_WAIT_MS: 503 NO_LANE_AVAILABLE with Retry-After, nothing sent", async () => {
    vi.useFakeTimers();
    const { state, limit } = limited(1, 2000);
    await limit.sendTokenTransfer(REQUEST);
    const waiting = limit.sendTokenTransfer(REQUEST);
    const refused = expect(waiting).rejects.toMatchObject({ code: "NO_LANE_AVAILABLE", statusCode: 503, retryAfterSeconds: 1 });
    await vi.advanceTimersByTimeAsync(2000);
    await refused;
    expect(state.sent).toBe(1);
  });

  it("a repeat of a key the journal holds goes straight to its answer, however full the wallet", async () => {
    const journal = { findByKey: (key: string) => (key === "known" ? ({ id: 1 } as JournalEntry) : undefined) } as unknown as TransferJournal;
    const { slots, state, limit } = limited(1, 60_000, journal);
    await limit.sendTokenTransfer(REQUEST);
    await limit.sendTokenTransfer(REQUEST, "known");
    expect(state.sent).toBe(2);
    expect(slots.size).toBe(0);
  });
});
