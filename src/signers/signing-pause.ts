/**
 * The switch that stops every signature of the service (PAUSE_ON_UNEXPECTED_OUTFLOW): when a wallet's key
 * has been used by someone else, nothing more is signed with it (no transfer, re-price, cancel, approval or
 * gas top-up) until an admin resumes. Every signer is wrapped (pausableSigner), so no path signs around it.
 */
import { SignerUnavailableError, type WalletSigner } from "./wallet-signer.js";

/** Why signing stopped, and since when. */
export interface SigningPaused {
  /** ISO time. */
  since: string;
  reason: string;
  /** The transaction that made it stop, when one did. */
  hash: string | null;
  /** The latest outflow reported since (the first, until another): a resume names it, so that it ends no pause over an outflow the admin has not seen. */
  latestHash: string | null;
  /** Outflows reported since it began. */
  outflows: number;
}

/** A resume named another outflow than the latest: one was reported after the admin looked. Nothing was resumed. */
export class PauseChangedError extends Error {
  override name = "PauseChangedError";
}

/** Nothing was signed: the service is paused. Nothing was sent either. */
export class SigningPausedError extends SignerUnavailableError {
  override name = "SigningPausedError";
}

/** Where the pause is kept beyond this process (the journal): a restart, or a new leader, holds it until an admin ends it. */
export interface SigningPauseStore {
  /** The pause no admin has ended; undefined when none. */
  current(): SigningPaused | undefined;
  /** Keeps the pause as it is now (begun, or another outflow reported during it). */
  paused(pause: SigningPaused): void;
  /** Resolves once it is kept that the admin key `by` ended the pause. */
  resumed(by: string): Promise<void>;
}

export class SigningPause {
  #paused: SigningPaused | undefined;
  #store: SigningPauseStore | undefined;

  /** Why signing is stopped; undefined while it goes on. */
  get paused(): SigningPaused | undefined {
    return this.#paused;
  }

  /**
   * Takes up the pause `store` holds (one an earlier process began, which no admin ended), before anything
   * signs, and keeps every change there from now on.
   */
  keepIn(store: SigningPauseStore): void {
    this.#store = store;
    this.#paused = store.current() ?? this.#paused;
  }

  /**
   * Stops signing, or while stopped counts another outflow (`hash` becomes the latest; the first reason
   * stands). True when it was not stopped before. Stopped here first: a store that fails to keep it (it
   * throws) does not let signing go on.
   */
  pause(reason: string, hash: string | null, now = new Date()): boolean {
    const begins = this.#paused === undefined;
    this.#paused = this.#paused ? { ...this.#paused, latestHash: hash, outflows: this.#paused.outflows + 1 } : { since: now.toISOString(), reason, hash, latestHash: hash, outflows: 1 };
    this.#store?.paused(this.#paused);
    return begins;
  }

  /**
   * Lets signing go on once the store has kept who ended the pause (`by`, an admin key's id); `latestHash`
   * must name the pause's latest outflow, "none" for a pause without one (PauseChangedError otherwise). Answers the pause it ended,
   * undefined when there was none.
   */
  async resume(by: string, latestHash: string): Promise<SigningPaused | undefined> {
    const ended = this.#paused;
    if (!ended) return undefined;
    this.checkLatest(latestHash);
    await this.#store?.resumed(by);
    // Another outflow while the store kept the resume: that one the admin has not seen.
    if (this.#paused !== ended) throw new PauseChangedError(`another outflow was reported while resuming (${this.#paused?.latestHash}): look at it, then resume naming it`);
    this.#paused = undefined;
    return ended;
  }

  /** Throws PauseChangedError unless `latestHash` names the pause's latest outflow ("none" for a pause without one). */
  checkLatest(latestHash: string): void {
    const paused = this.#paused;
    if (paused && (paused.latestHash ?? "none").toLowerCase() !== latestHash.toLowerCase()) {
      throw new PauseChangedError(`the latest outflow of this pause is ${paused.latestHash} (${paused.outflows} since ${paused.since}), not ${latestHash}: look at it (GET /wallet), then resume naming it`);
    }
  }

  /** Throws SigningPausedError while paused. */
  assertSigning(): void {
    const paused = this.#paused;
    if (paused) throw new SigningPausedError(`signing is paused since ${paused.since}: ${paused.reason}; an admin resumes it with POST /wallet/resume`);
  }
}

/** `signer`, refusing to sign while `pause` holds. */
export function pausableSigner(signer: WalletSigner, pause: SigningPause): WalletSigner {
  return {
    kind: signer.kind,
    address: signer.address,
    description: signer.description,
    sign: async (digest) => {
      pause.assertSigning();
      const signature = await signer.sign(digest);
      // A remote signer may take seconds: a pause that came meanwhile discards what it signed.
      pause.assertSigning();
      return signature;
    },
    close: () => signer.close(),
  };
}
