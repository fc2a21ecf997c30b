/**
 * What the hot wallet can still spend: the balances of the latest snapshot minus every transfer that is
 * reserved or sent but not yet mined. Pure bookkeeping, no I/O: a burst that overdraws the wallet is
 * refused at request time instead of reverting on chain.
 */
import { type AmountUnit, describeAmount } from "../domain/token-amount.js";
import { ServiceError } from "../errors.js";
import { NATIVE_TOKEN } from "../network-settings/network-choice.js";
import type { OfferedFees } from "./fee-policy.js";
import type { WalletSnapshot } from "./wallet-snapshot.js";

/** Tokens and worst-case gas one transfer holds until it is mined or refused. */
export interface Reservation {
  units: bigint;
  /** The ERC-20 token the units are of (its address); without it, the network's first token (the snapshot's tokenBalance). */
  token?: string;
  /** Wei: the gas at the fee cap, plus the ETH the transaction carries (a native transfer, a gas top-up). */
  gasCost: bigint;
  /** Wei of gasCost a native transfer pays the recipient: not gas, so the gas-spent figures leave it out. */
  value?: bigint;
}

export class WalletLedger {
  #snapshot: WalletSnapshot;
  readonly #unsigned = new Set<Reservation>();
  readonly #sentByNonce = new Map<number, Reservation>();
  // Running totals of both collections above: summing them per request would cost O(transfers in flight).
  // Units held per token: "" is the network's first token, any other by its lowercase address.
  readonly #heldUnits = new Map<string, bigint>();
  #heldGas = 0n;
  readonly #primaryToken: string;
  // The mined nonce count read on its own (noteMinedNonceCount), ahead of the snapshot's, and how many
  // sent transactions lie below it: mined, so they hold no room in the node's pool, while their tokens and
  // gas stay held until a snapshot shows the balances they left.
  #minedNonceCount = 0;
  #sentBelowMinedCount = 0;
  #highestNonceSent = -1;
  // The value of native transfers the snapshots showed mined since takeValueMined() was last asked, and the
  // reservations already counted in it (a snapshot shows them mined before a second one frees them).
  #valueMined = 0n;
  readonly #valueCounted = new WeakSet<Reservation>();

  /** Told when transfers may have stopped holding room: mined, or given back (new transfers wait for room). */
  onFreed: () => void = () => undefined;

  /**
   * `primaryToken`: the address of the token of the snapshot's tokenBalance (reservations may name it).
   * `unitOf`: a token's symbol and decimals (its address, "native" for the coin; none: the network's first),
   * so that a refusal names amounts as people write them; base units (wei) alone for a token it does not know.
   */
  constructor(
    snapshot: WalletSnapshot,
    primaryToken = "",
    private readonly unitOf: (token: string | undefined) => AmountUnit | undefined = () => undefined,
  ) {
    this.#snapshot = snapshot;
    this.#primaryToken = primaryToken.toLowerCase();
    this.#minedNonceCount = snapshot.minedNonceCount;
  }

  get snapshot(): WalletSnapshot {
    return this.#snapshot;
  }

  /** Transfers holding a reservation: about to be signed, or signed or sent with their nonce not yet mined. */
  get reservedCount(): number {
    return this.#unsigned.size + this.#sentByNonce.size;
  }

  /** The wallet's mined nonce count as last known: the snapshot's, or a count read since, whichever is higher. */
  get minedNonceCountKnown(): number {
    return this.#minedNonceCount;
  }

  /** The highest nonce a transaction was signed with (-1 before the first). */
  get highestNonceSent(): number {
    return this.#highestNonceSent;
  }

  /** Transfers signed or sent whose nonce is not known to be mined (by a snapshot, or a read of the count since). */
  get unminedCount(): number {
    return this.#sentByNonce.size - this.#sentBelowMinedCount;
  }

  /**
   * Transfers that take room in the node's pool, or soon will: about to be signed, or sent with their nonce
   * not known to be mined (by the snapshot or by a read of the mined nonce count since).
   */
  get inFlightCount(): number {
    return this.#unsigned.size + this.#sentByNonce.size - this.#sentBelowMinedCount;
  }

  /**
   * The wallet's mined nonce count, read on its own (cheaper than a snapshot, and sooner): the transactions
   * below it leave the in-flight count at once; their reservations stay until a snapshot.
   */
  noteMinedNonceCount(count: number): void {
    if (count <= this.#minedNonceCount) return;
    this.#raiseMinedNonceCount(count);
    this.onFreed();
  }

  #raiseMinedNonceCount(count: number): void {
    // The shorter of the nonces mined since the last count and the transactions held: never more.
    if (count - this.#minedNonceCount <= this.#sentByNonce.size) {
      for (let nonce = this.#minedNonceCount; nonce < count; nonce++) if (this.#sentByNonce.has(nonce)) this.#sentBelowMinedCount++;
    } else {
      this.#sentBelowMinedCount = 0;
      for (const nonce of this.#sentByNonce.keys()) if (nonce < count) this.#sentBelowMinedCount++;
    }
    this.#minedNonceCount = count;
  }

  /**
   * Takes a newer snapshot. Transfers whose nonce both it and the one before show mined are in its balances
   * now: a node may answer a read at its newest block from the state of the moment, so one snapshot's count
   * can be a block ahead of its balances (anvil in a burst: 15 one-token transfers from a wallet holding 10
   * were all let in). A count read by an earlier snapshot was mined before this one's balances were read.
   */
  applySnapshot(snapshot: WalletSnapshot): void {
    if (snapshot.blockNumber < this.#snapshot.blockNumber) return;
    const paidBelow = Math.min(this.#snapshot.minedNonceCount, snapshot.minedNonceCount);
    this.#snapshot = snapshot;
    for (const [nonce, reservation] of this.#sentByNonce) {
      if (nonce >= snapshot.minedNonceCount) continue;
      if (reservation.value && !this.#valueCounted.has(reservation)) {
        this.#valueCounted.add(reservation);
        this.#valueMined += reservation.value;
      }
      if (nonce < paidBelow) this.#forgetSent(nonce, reservation);
    }
    if (snapshot.minedNonceCount > this.#minedNonceCount) this.#raiseMinedNonceCount(snapshot.minedNonceCount);
    else if (snapshot.minedNonceCount < this.#minedNonceCount) {
      // A reorganisation took mined transactions off the chain: they hold room in the node's pool again.
      this.#minedNonceCount = snapshot.minedNonceCount;
      this.#sentBelowMinedCount = 0;
      for (const nonce of this.#sentByNonce.keys()) if (nonce < snapshot.minedNonceCount) this.#sentBelowMinedCount++;
    }
    this.onFreed();
  }

  /**
   * A newer block's base fee, read without the rest of a snapshot: fees follow every block read, balances
   * only the snapshots. `price` turns the base fee and the snapshot's tip into the fees to sign with.
   */
  applyBaseFee(baseFeePerGas: bigint, price: (baseFeePerGas: bigint, tip: bigint) => OfferedFees): void {
    this.#snapshot = { ...this.#snapshot, baseFeePerGas, ...price(baseFeePerGas, this.#snapshot.tip) };
  }

  /**
   * The value native transfers paid out in the transactions the snapshots showed mined since the last ask:
   * what the ETH balance went down by beside gas.
   */
  takeValueMined(): bigint {
    const value = this.#valueMined;
    this.#valueMined = 0n;
    return value;
  }

  /** Base units of the network's first token left after everything in flight. */
  get tokensAvailable(): bigint {
    return this.tokensAvailableOf(undefined);
  }

  /** Base units of `token` (an ERC-20's address; the first token without it) left after everything in flight. */
  tokensAvailableOf(token: string | undefined): bigint {
    const key = this.#keyOf(token);
    const balance = key === "" ? this.#snapshot.tokenBalance : (this.#snapshot.otherTokenBalances?.get(key) ?? 0n);
    return balance - (this.#heldUnits.get(key) ?? 0n);
  }

  #describe(units: bigint, token: string | undefined): string {
    return describeAmount(units, this.unitOf(token));
  }

  #keyOf(token: string | undefined): string {
    const lower = token?.toLowerCase();
    return lower === undefined || lower === this.#primaryToken ? "" : lower;
  }

  /** Wei left for gas after everything in flight (at the fee caps it was reserved with). */
  get gasAvailable(): bigint {
    return this.#snapshot.ethBalance - this.#heldGas;
  }

  /** Throws INSUFFICIENT_TOKEN_BALANCE unless `units` of `token` (the first token without it) are available after everything in flight. */
  assertTokensAvailable(units: bigint, token?: string): void {
    if (units === 0n) return;
    const available = this.tokensAvailableOf(token);
    if (available < units) {
      throw new ServiceError(
        "INSUFFICIENT_TOKEN_BALANCE",
        `the hot wallet can spend ${this.#describe(available > 0n ? available : 0n, token)} of the token after transfers in flight, ${this.#describe(units, token)} requested`,
      );
    }
  }

  /** Throws INSUFFICIENT_FUNDS unless `wei` of the native coin are left after everything in flight (before gas). */
  assertNativeAvailable(wei: bigint): void {
    const available = this.gasAvailable;
    if (available < wei) {
      const describe = (amount: bigint) => describeAmount(amount, this.unitOf(NATIVE_TOKEN), "wei");
      throw new ServiceError("INSUFFICIENT_FUNDS", `the hot wallet can spend ${describe(available > 0n ? available : 0n)} of the native coin after transactions in flight, ${describe(wei)} requested (before gas)`);
    }
  }

  /**
   * Holds tokens and ETH for a transaction about to be signed; throws when either is short. `gasCost` is all
   * the ETH it may take: its gas, and the value it carries (a native transfer, a gas top-up); `value` is
   * the part a native transfer pays its recipient (see Reservation.value).
   */
  reserve(units: bigint, gasCost: bigint, token?: string, value?: bigint): Reservation {
    this.assertTokensAvailable(units, token);
    const ethAvailable = this.gasAvailable;
    if (ethAvailable < gasCost) {
      throw new ServiceError("INSUFFICIENT_FUNDS", `the hot wallet has too little of the native coin for this transaction's gas and value (up to ${describeAmount(gasCost, this.unitOf(NATIVE_TOKEN), "wei")} needed)`);
    }
    const reservation: Reservation = { units, gasCost, ...(token !== undefined && { token }), ...(value !== undefined && { value }) };
    this.reserveAgain(reservation);
    return reservation;
  }

  /** The reservation now belongs to a signed transaction with this nonce. */
  assignNonce(reservation: Reservation, nonce: number): void {
    this.#forget(this.#unsigned.delete(reservation), reservation);
    this.trackSent(nonce, reservation);
  }

  /** Tracks a transaction sent before this process started (from the journal). */
  trackSent(nonce: number, reservation: Reservation): void {
    if (nonce < this.#snapshot.minedNonceCount) return;
    const replaced = this.#sentByNonce.get(nonce);
    if (replaced) this.#forgetSent(nonce, replaced);
    this.#sentByNonce.set(nonce, reservation);
    this.#highestNonceSent = Math.max(this.#highestNonceSent, nonce);
    if (nonce < this.#minedNonceCount) this.#sentBelowMinedCount++;
    this.#hold(reservation);
  }

  /** A refused broadcast is tried again with another nonce: the reservation waits unsigned again. */
  reserveAgain(reservation: Reservation): void {
    if (this.#unsigned.has(reservation)) return;
    this.#unsigned.add(reservation);
    this.#hold(reservation);
  }

  /** Gives a reservation back: its transfer was refused before or at broadcast. */
  release(reservation: Reservation, nonce?: number): void {
    this.#forget(this.#unsigned.delete(reservation), reservation);
    if (nonce !== undefined && this.#sentByNonce.get(nonce) === reservation) this.#forgetSent(nonce, reservation);
    this.onFreed();
  }

  /** Stops counting whatever was sent with this nonce: the node refused it. */
  forgetNonce(nonce: number): void {
    const reservation = this.#sentByNonce.get(nonce);
    if (reservation) this.#forgetSent(nonce, reservation);
    this.onFreed();
  }

  #hold(reservation: Reservation): void {
    this.#addUnits(reservation, reservation.units);
    this.#heldGas += reservation.gasCost;
  }

  #forgetSent(nonce: number, reservation: Reservation): void {
    this.#sentByNonce.delete(nonce);
    if (nonce < this.#minedNonceCount) this.#sentBelowMinedCount--;
    this.#forget(true, reservation);
  }

  #forget(wasHeld: boolean, reservation: Reservation): void {
    if (!wasHeld) return;
    this.#addUnits(reservation, -reservation.units);
    this.#heldGas -= reservation.gasCost;
  }

  #addUnits(reservation: Reservation, units: bigint): void {
    if (units === 0n) return;
    const key = this.#keyOf(reservation.token);
    this.#heldUnits.set(key, (this.#heldUnits.get(key) ?? 0n) + units);
  }
}
