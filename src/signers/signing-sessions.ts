/**
 * A signer's HSM sessions, lent out one signature at a time each (PKCS#11 allows one operation per
 * session). Closing turns away new and queued signatures and waits for those under way: a session closed,
 * or a library finalised, under a signature running on another thread crashed the process.
 */
import { SignerUnavailableError } from "./wallet-signer.js";

export class SigningSessions<Session> {
  readonly #idle: Session[];
  readonly #waiting: { resolve: (session: Session) => void; reject: (error: Error) => void }[] = [];
  // Sessions lent out, one handed straight from a returning signature to a waiting one among them.
  readonly #lent = new Set<Session>();
  #closed: Promise<void> | undefined;
  #allReturned: (() => void) | undefined;

  constructor(sessions: readonly Session[]) {
    this.#idle = [...sessions];
  }

  /** A session for one signature; SignerUnavailableError once closing. Give it back with `give`. */
  async take(): Promise<Session> {
    if (this.#closed) throw new SignerUnavailableError("the HSM signer is closed");
    const idle = this.#idle.pop();
    if (idle !== undefined) {
      this.#lent.add(idle);
      return idle;
    }
    return new Promise<Session>((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /** Gives a session back; one not lent out (given back twice) is ignored, never lent to two signatures. */
  give(session: Session): void {
    if (!this.#lent.has(session)) return;
    const next = this.#waiting.shift();
    if (next) {
      next.resolve(session);
      return;
    }
    this.#lent.delete(session);
    this.#idle.push(session);
    if (this.#lent.size === 0) this.#allReturned?.();
  }

  /** Refuses what waits for a session, and resolves once every session lent out is back. Once only. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      for (const waiter of this.#waiting.splice(0)) waiter.reject(new SignerUnavailableError("the HSM signer closed before this signature's turn"));
      if (this.#lent.size === 0) resolve();
      else this.#allReturned = resolve;
    });
    return this.#closed;
  }
}
