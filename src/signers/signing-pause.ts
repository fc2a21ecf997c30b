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

export class SigningPause {
  #paused: SigningPaused | undefined;

  /** Why signing is stopped; undefined while it goes on. */
  get paused(): SigningPaused | undefined {
    return this.#paused;
  }

  /** Stops signing; the first reason stands until a resume (later ones are the same alarm). True when it was not stopped before. */
  pause(reason: string, hash: string | null, now = new Date()): boolean {
    if (this.#paused) return false;
    this.#paused = { since: now.toISOString(), reason, hash };
    return true;
  }

  /** Lets signing go on; answers the pause it ended, undefined when none. */
  resume(): SigningPaused | undefined {
    const ended = this.#paused;
    this.#paused = undefined;
    return ended;
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
      return signer.sign(digest);
    },
    close: () => signer.close(),
  };
}
