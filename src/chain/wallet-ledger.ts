/**
 * What the hot wallet can still spend: the balances of the latest snapshot minus every transfer that is
 * reserved or sent but not yet mined. Pure bookkeeping, no I/O: a burst that overdraws the wallet is
 * refused at request time instead of reverting on chain.
 */
import { ServiceError } from "../errors.js";
import type { WalletSnapshot } from "./wallet-snapshot.js";

/** Tokens and worst-case gas one transfer holds until it is mined or refused. */
export interface Reservation {
  units: bigint;
  gasCost: bigint;
}

export class WalletLedger {
  #snapshot: WalletSnapshot;
  readonly #unsigned = new Set<Reservation>();
  readonly #sentByNonce = new Map<number, Reservation>();

  constructor(snapshot: WalletSnapshot) {
    this.#snapshot = snapshot;
  }

  get snapshot(): WalletSnapshot {
    return this.#snapshot;
  }

  /** Transfers signed or sent whose nonce is not yet mined. */
  get unminedCount(): number {
    return this.#sentByNonce.size;
  }

  /** Takes a newer snapshot; transfers whose nonce it shows as mined are in its balances now. */
  applySnapshot(snapshot: WalletSnapshot): void {
    if (snapshot.blockNumber < this.#snapshot.blockNumber) return;
    this.#snapshot = snapshot;
    for (const nonce of this.#sentByNonce.keys()) {
      if (nonce < snapshot.minedNonceCount) this.#sentByNonce.delete(nonce);
    }
  }

  /** Throws INSUFFICIENT_TOKEN_BALANCE unless `units` are available after everything in flight. */
  assertTokensAvailable(units: bigint): void {
    const available = this.#snapshot.tokenBalance - this.#sum("units");
    if (available < units) {
      throw new ServiceError(
        "INSUFFICIENT_TOKEN_BALANCE",
        `the hot wallet can spend ${available > 0n ? available : 0n} base units of the token after transfers in flight, ${units} requested`,
      );
    }
  }

  /** Holds tokens and gas for a transfer about to be signed; throws when either is short. */
  reserve(units: bigint, gasCost: bigint): Reservation {
    this.assertTokensAvailable(units);
    const ethAvailable = this.#snapshot.ethBalance - this.#sum("gasCost");
    if (ethAvailable < gasCost) {
      throw new ServiceError("INSUFFICIENT_FUNDS", `the hot wallet has too little ETH to pay for gas (up to ${gasCost} wei needed)`);
    }
    const reservation = { units, gasCost };
    this.#unsigned.add(reservation);
    return reservation;
  }

  /** The reservation now belongs to a signed transaction with this nonce. */
  assignNonce(reservation: Reservation, nonce: number): void {
    this.#unsigned.delete(reservation);
    if (nonce >= this.#snapshot.minedNonceCount) this.#sentByNonce.set(nonce, reservation);
  }

  /** Tracks a transaction sent before this process started (from the journal). */
  trackSent(nonce: number, reservation: Reservation): void {
    if (nonce >= this.#snapshot.minedNonceCount) this.#sentByNonce.set(nonce, reservation);
  }

  /** A refused broadcast is tried again with another nonce: the reservation waits unsigned again. */
  reserveAgain(reservation: Reservation): void {
    this.#unsigned.add(reservation);
  }

  /** Gives a reservation back: its transfer was refused before or at broadcast. */
  release(reservation: Reservation, nonce?: number): void {
    this.#unsigned.delete(reservation);
    if (nonce !== undefined && this.#sentByNonce.get(nonce) === reservation) this.#sentByNonce.delete(nonce);
  }

  #sum(field: keyof Reservation): bigint {
    let total = 0n;
    for (const reservation of this.#unsigned) total += reservation[field];
    for (const reservation of this.#sentByNonce.values()) total += reservation[field];
    return total;
  }
}
