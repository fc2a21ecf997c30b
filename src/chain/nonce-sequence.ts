/** Hands out the hot wallet's nonces one transfer at a time, so two transfers never share one. */

/**
 * Runs sends strictly one after another, each with the next nonce. A nonce is consumed when its send
 * succeeds, or fails in a way `holdsNonce` says may still have reached the node. After any other failure
 * the sequence is re-read from the chain before the next send, which both fills the gap and picks up
 * transactions another sender made with the same key.
 */
export class NonceSequence {
  #next: number | undefined;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly readPendingNonce: () => Promise<number>,
    private readonly holdsNonce: (error: unknown) => boolean = () => false,
  ) {}

  /** Calls `send` with the next nonce once every earlier send has settled. */
  useNext<T>(send: (nonce: number) => Promise<T>): Promise<T> {
    const result = this.#tail.then(() => this.#sendWithNextNonce(send));
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Forgets the sequence; the next send re-reads it from the chain. */
  resync(): void {
    this.#next = undefined;
  }

  async #sendWithNextNonce<T>(send: (nonce: number) => Promise<T>): Promise<T> {
    this.#next ??= await this.readPendingNonce();
    const nonce = this.#next;
    try {
      const result = await send(nonce);
      this.#next = nonce + 1;
      return result;
    } catch (error) {
      this.#next = this.holdsNonce(error) ? nonce + 1 : undefined;
      throw error;
    }
  }
}
