import { describe, expect, it } from "vitest";
import { WalletLedger } from "../../src/sending/wallet-ledger.js";
import type { WalletSnapshot } from "../../src/sending/wallet-snapshot.js";
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
});
