import { describe, expect, it } from "vitest";
import { WalletLedger } from "../../src/send-path/wallet-ledger.js";
import type { WalletSnapshot } from "../../src/send-path/wallet-snapshot.js";
import { codeOf } from "../helpers/service-error-code.js";

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

describe("WalletLedger", () => {
  it("counts reserved and sent transfers against the balances", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    const first = ledger.reserve(60n, 100n);
    ledger.assignNonce(first, 5);
    expect(codeOf(() => ledger.reserve(41n, 100n))).toBe("INSUFFICIENT_TOKEN_BALANCE");
    ledger.reserve(40n, 100n);
    expect(codeOf(() => ledger.assertTokensAvailable(1n))).toBe("INSUFFICIENT_TOKEN_BALANCE");
  });

  it("names amounts in the token's units, the base units beside, when it knows the token", () => {
    // As start-lane gives it: no token is the network's first.
    const units = (token: string | undefined) => (token === "native" ? { symbol: "ETH", decimals: 18 } : token === undefined || token === "0xToken" ? { symbol: "USDC", decimals: 1 } : undefined);
    const ledger = new WalletLedger(SNAPSHOT, "0xToken", units);
    ledger.reserve(60n, 100n);
    expect(() => ledger.assertTokensAvailable(410n)).toThrow("the hot wallet can spend 4 USDC (40 base units) of the token after transfers in flight, 41 USDC (410 base units) requested");
    expect(() => ledger.assertNativeAvailable(1_000n)).toThrow("the hot wallet can spend 0.0000000000000009 ETH (900 wei) of the native coin after transactions in flight, 0.000000000000001 ETH (1000 wei) requested (before gas)");
    // A token it does not know: base units alone.
    expect(() => ledger.assertTokensAvailable(1n, "0xother")).toThrow("the hot wallet can spend 0 base units of the token after transfers in flight, 1 base units requested");
  });

  it("refuses gas beyond the ETH left after transfers in flight", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    ledger.reserve(1n, 900n);
    expect(codeOf(() => ledger.reserve(1n, 101n))).toBe("INSUFFICIENT_FUNDS");
  });

  it("releases a sent transfer once two snapshots show its nonce mined (one may read its count ahead of its balances)", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    ledger.assignNonce(ledger.reserve(100n, 1n), 5);
    expect(codeOf(() => ledger.assertTokensAvailable(1n))).toBe("INSUFFICIENT_TOKEN_BALANCE");
    // A count of 6 with the balances of before the transfer (anvil answering at its newest block mid-mining).
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 11, minedNonceCount: 6, tokenBalance: 100n });
    expect(ledger.unminedCount).toBe(0);
    expect(codeOf(() => ledger.assertTokensAvailable(1n))).toBe("INSUFFICIENT_TOKEN_BALANCE");
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 11, minedNonceCount: 6, tokenBalance: 50n });
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
    // Two snapshots show nonce 5 (a) mined: its tokens are in the new balance and no longer held.
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 11, minedNonceCount: 6, tokenBalance: 900n, ethBalance: 990n });
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 12, minedNonceCount: 6, tokenBalance: 900n, ethBalance: 990n });
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
    // The first snapshot that shows them mined may have read its count ahead of its balances: still held.
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 11, minedNonceCount: 7, tokenBalance: 80n });
    expect(ledger.inFlightCount).toBe(2);
    expect(ledger.tokensAvailable).toBe(40n);
    // The next one confirms them: their tokens are out of its balance and their reservations go.
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 12, minedNonceCount: 8, tokenBalance: 70n });
    expect(ledger.inFlightCount).toBe(1);
    expect(ledger.tokensAvailable).toBe(50n);
    expect(ledger.unminedCount).toBe(0);
    // And one more frees what that one showed mined.
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 13, minedNonceCount: 8, tokenBalance: 70n });
    expect(ledger.tokensAvailable).toBe(60n);
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

  it("holds each token of the network apart, and a native transfer's value with the gas, from one ETH balance", () => {
    const FIRST = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const SECOND = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512";
    const ledger = new WalletLedger({ ...SNAPSHOT, otherTokenBalances: new Map([[SECOND.toLowerCase(), 30n]]) }, FIRST);
    // The first token is the snapshot's tokenBalance, named or not.
    ledger.assignNonce(ledger.reserve(60n, 10n, FIRST), 5);
    expect([ledger.tokensAvailable, ledger.tokensAvailableOf(FIRST), ledger.tokensAvailableOf(SECOND)]).toEqual([40n, 40n, 30n]);
    expect(codeOf(() => ledger.reserve(31n, 1n, SECOND))).toBe("INSUFFICIENT_TOKEN_BALANCE");
    const second = ledger.reserve(30n, 10n, SECOND);
    expect([ledger.tokensAvailable, ledger.tokensAvailableOf(SECOND)]).toEqual([40n, 0n]);
    // A native transfer: no token units, its value and gas from the ETH balance (1000 - 20 held).
    expect(codeOf(() => ledger.assertNativeAvailable(981n))).toBe("INSUFFICIENT_FUNDS");
    const native = ledger.reserve(0n, 900n + 80n);
    expect(ledger.gasAvailable).toBe(0n);
    ledger.release(native);
    ledger.release(second);
    expect([ledger.tokensAvailableOf(SECOND), ledger.gasAvailable]).toEqual([30n, 990n]);
    // A token the snapshot holds no balance of has none to spend.
    expect(ledger.tokensAvailableOf("0x0000000000000000000000000000000000000001")).toBe(0n);
  });

  it("tells what native transfers paid out once a snapshot shows them mined, so that it does not count as gas spent", () => {
    const ledger = new WalletLedger(SNAPSHOT);
    ledger.assignNonce(ledger.reserve(0n, 500n, undefined, 400n), 5);
    ledger.assignNonce(ledger.reserve(1n, 50n), 6);
    ledger.assignNonce(ledger.reserve(0n, 300n, undefined, 250n), 7);
    expect(ledger.takeValueMined()).toBe(0n);
    // Told when a snapshot first shows it mined, once, though its reservation goes only with the next.
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 11, minedNonceCount: 7 });
    expect(ledger.takeValueMined()).toBe(400n);
    expect(ledger.takeValueMined()).toBe(0n);
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 12, minedNonceCount: 8 });
    expect(ledger.takeValueMined()).toBe(250n);
    ledger.applySnapshot({ ...SNAPSHOT, blockNumber: 13, minedNonceCount: 8 });
    expect(ledger.takeValueMined()).toBe(0n);
  });
});
