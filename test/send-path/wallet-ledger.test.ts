import { describe, expect, it } from "vitest";
import { WalletLedger } from "../../src/send-path/wallet-ledger.js";
import type { WalletSnapshot } from "../../src/send-path/wallet-snapshot.js";
import { ServiceError } from "../../src/errors.js";

const SNAPSHOT: WalletSnapshot = {
  blockNumber: 10,
  blockHash: `0x${"11".repeat(32)}`,
  tokenBalance: 100n,
  ethBalance: 1_000n,
  minedNonceCount: 5,
  baseFeePerGas: 1n,
  tip: 0n,
  maxFeePerGas: 2n,
  l1DataFee: 0n,
  readAt: 0,
  maxPriorityFeePerGas: 1n,
};

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return error instanceof ServiceError ? error.code : "not a ServiceError";
  }
}

describe("WalletLedger", () => {
  it("counts reserved and sent transfers against the balances", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    const first = ledger.reserve(60n, 100n);
    ledger.assignNonce(first, 5);
    expect(codeOf(() => ledger.reserve(41n, 100n))).toBe("INSUFFICIENT_TOKEN_BALANCE");
    ledger.reserve(40n, 100n);
    expect(codeOf(() => ledger.assertTokensAvailable(1n))).toBe("INSUFFICIENT_TOKEN_BALANCE");
  });

  it("refuses gas beyond the ETH left after transfers in flight", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    ledger.reserve(1n, 900n);
    expect(codeOf(() => ledger.reserve(1n, 101n))).toBe("INSUFFICIENT_FUNDS");
  });

  it("releases a sent transfer once a snapshot shows its nonce mined", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    ledger.assignNonce(ledger.reserve(100n, 1n), 5);
    expect(codeOf(() => ledger.assertTokensAvailable(1n))).toBe("INSUFFICIENT_TOKEN_BALANCE");
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 11, minedNonceCount: 6, tokenBalance: 50n });
    expect(ledger.unminedCount).toBe(0);
    expect(codeOf(() => ledger.assertTokensAvailable(50n))).toBeUndefined();
  });

  it("ignores an older snapshot arriving late", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 9, tokenBalance: 1_000_000n });
    expect(ledger.snapshot.tokenBalance).toBe(100n);
  });

  it("gives back a refused transfer's reservation", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    const reservation = ledger.reserve(100n, 1n);
    ledger.assignNonce(reservation, 5);
    ledger.release(reservation, 5);
    expect(codeOf(() => ledger.reserve(100n, 1n))).toBeUndefined();
  });
});

describe("WalletLedger totals", () => {
  it("stay exact through reserve, assign, refuse-and-retry, release and mining", () => {
    const ledger = new WalletLedger({ ...SNAPSHOT, tokenBalance: 1000n, ethBalance: 1000n });
    const a = ledger.reserve(100n, 10n);
    const b = ledger.reserve(200n, 20n);
    ledger.assignNonce(a, 5);
    ledger.assignNonce(b, 6);
    // b's broadcast is refused: it waits unsigned again, then goes out with nonce 7.
    ledger.release(b, 6);
    ledger.reserveAgain(b);
    ledger.assignNonce(b, 7);
    expect(codeOf(() => ledger.reserve(701n, 1n))).toBe("INSUFFICIENT_TOKEN_BALANCE");
    const c = ledger.reserve(700n, 970n);
    ledger.release(c);
    // A snapshot mines nonce 5 (a): its tokens are in the new balance and no longer held.
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 11, minedNonceCount: 6, tokenBalance: 900n, ethBalance: 990n });
    expect(codeOf(() => ledger.reserve(700n, 970n))).toBeUndefined();
    expect(codeOf(() => ledger.reserve(1n, 1n))).toBe("INSUFFICIENT_TOKEN_BALANCE");
  });

  it("frees a transaction's room in the node's pool as soon as a read of the mined nonce count passes it, and its tokens only with a snapshot", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    let freed = 0;
    ledger.onFreed = () => freed++;
    for (const nonce of [5, 6, 7]) ledger.assignNonce(ledger.reserve(10n, 1n), nonce);
    ledger.reserve(10n, 1n);
    expect(ledger.inFlightCount).toBe(4);
    ledger.noteMinedNonceCount(7);
    expect(ledger.inFlightCount).toBe(2);
    expect(freed).toBe(1);
    // Mined, but the balances read before it still hold its tokens: they stay held.
    expect(ledger.tokensAvailable).toBe(60n);
    // An older count, read from a backend behind the others, changes nothing.
    ledger.noteMinedNonceCount(6);
    expect(ledger.inFlightCount).toBe(2);
    // The snapshot that shows them mined takes their tokens out of the balance and their reservations away.
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 11, minedNonceCount: 7, tokenBalance: 80n });
    expect(ledger.inFlightCount).toBe(2);
    expect(ledger.tokensAvailable).toBe(60n);
    // A snapshot ahead of the counts read frees the rest of what it shows mined.
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 12, minedNonceCount: 8, tokenBalance: 70n });
    expect(ledger.inFlightCount).toBe(1);
    expect(ledger.unminedCount).toBe(0);
  });

  it("keeps the in-flight count exact when a transaction below the mined count read is given back or replaced", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    const reservations = [5, 6, 7].map((nonce) => {
      const reservation = ledger.reserve(1n, 1n);
      ledger.assignNonce(reservation, nonce);
      return reservation;
    });
    ledger.noteMinedNonceCount(7);
    expect(ledger.inFlightCount).toBe(1);
    ledger.release(reservations[0], 5);
    ledger.forgetNonce(6);
    expect(ledger.inFlightCount).toBe(1);
    ledger.trackSent(6, { units: 1n, gasCost: 1n });
    expect(ledger.inFlightCount).toBe(1);
    ledger.noteMinedNonceCount(1_000_000);
    expect(ledger.inFlightCount).toBe(0);
  });

  it("counts transactions a reorganisation took off the chain as in flight again", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    for (const nonce of [5, 6, 7]) ledger.assignNonce(ledger.reserve(1n, 1n), nonce);
    ledger.noteMinedNonceCount(8);
    expect(ledger.inFlightCount).toBe(0);
    // A newer snapshot after a reorganisation: only nonce 5 is still mined; 6 and 7 are pending again.
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 11, minedNonceCount: 6 });
    ledger.trackSent(6, { units: 1n, gasCost: 1n });
    ledger.trackSent(7, { units: 1n, gasCost: 1n });
    expect(ledger.inFlightCount).toBe(2);
  });
});
