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
}

/** Nothing was signed: the service is paused. Nothing was sent either. */
export class SigningPausedError extends SignerUnavailableError {
  override name = "SigningPausedError";
}

/** Where the pause is kept beyond this process (the journal): a restart, or a new leader, holds it until an admin ends it. */
export interface SigningPauseStore {
  /** The pause no admin has ended; undefined when none. */
  current(): SigningPaused | undefined;
  paused(pause: SigningPaused): void;
  /** `by`: the admin key's id. */
  resumed(by: string): void;
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
   * Stops signing; the first reason stands until a resume (later ones are the same alarm). True when it was
   * not stopped before. Stopped here first: a store that fails to keep it does not let signing go on.
   */
  pause(reason: string, hash: string | null, now = new Date()): boolean {
    if (this.#paused) return false;
    this.#paused = { since: now.toISOString(), reason, hash };
    this.#store?.paused(this.#paused);
    return true;
  }

  /** Lets signing go on, once the store has kept who ended the pause; answers the pause it ended, undefined when none. */
  resume(by: string): SigningPaused | undefined {
    const ended = this.#paused;
    if (!ended) return undefined;
    this.#store?.resumed(by);
    this.#paused = undefined;
    return ended;
  }

  /** Throws SigningPausedError while paused. */
  assertSigning(): void {
    const paused = this.#paused;
    if (paused) throw new SigningPausedError(describeSigningPause(paused));
  }
}

/** The pause in words, for an answer or a log. */
export function describeSigningPause(paused: SigningPaused): string {
  return `signing is paused since ${paused.since}: ${paused.reason}; an admin resumes it with POST /wallet/resume`;
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
