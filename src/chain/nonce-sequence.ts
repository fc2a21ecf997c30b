/** Hands out the hot wallet's nonces one transfer at a time, so two transfers never share one. */

/**
 * Runs sends strictly one after another, each with the next nonce. A nonce is consumed only when its
 * send succeeds; after a failed send the sequence is re-read from the chain before the next one, which
 * both fills the gap and picks up transactions another sender made with the same key.
 */
export class NonceSequence {
  #next: number | undefined;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly readPendingNonce: () => Promise<number>) {}

  /** Calls `send` with the next nonce once every earlier send has settled. */
  useNext<T>(send: (nonce: number) => Promise<T>): Promise<T> {
    const result = this.#tail.then(() => this.#sendWithNextNonce(send));
    this.#tail = result.catch(() => undefined);
    return result;
  }

  async #sendWithNextNonce<T>(send: (nonce: number) => Promise<T>): Promise<T> {
    this.#next ??= await this.readPendingNonce();
    const nonce = this.#next;
    try {
      const result = await send(nonce);
      this.#next = nonce + 1;
      return result;
    } catch (error) {
      this.#next = undefined;
      throw error;
    }
  }
}
