/**
 * Nonces the chain counts used for a lane whose user the service could not find in the block bodies where it
 * could be: an EIP-7702 authorization of a kind it does not read, a node that lost blocks, a use older than
 * the bound of a search. A transfer at such a nonce waits (nothing proves what displaced it, so it is never
 * signed again); the outflow watch moves past it. Neither is silent: each is logged once as an error, and
 * counted for `lane_nonces_unexplained` and its alert. Bounded: the oldest are forgotten first.
 */
import type { FastifyBaseLogger } from "fastify";

const REMEMBERED = 1_024;

export class UnexplainedNonces {
  readonly #nonces = new Set<number>();

  constructor(
    private readonly wallet: string,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Nonce `nonce` was found used, and no body of blocks `searched` holds its user. */
  report(nonce: number, searched: { from: number; to: number }, transferId?: number): void {
    if (this.#nonces.has(nonce)) return;
    this.#nonces.add(nonce);
    if (this.#nonces.size > REMEMBERED) this.#nonces.delete(this.#nonces.values().next().value as number);
    this.log.error(
      { wallet: this.wallet, nonce, searched, transferId },
      "NONCE USED BY NOTHING FOUND: the chain counts this nonce of the wallet used, and no block where it could be holds its transaction (an EIP-7702 authorization, the key used elsewhere?); a transfer there waits and is never signed again without proof",
    );
  }

  /** Nonces reported since the service started (at most the last REMEMBERED). */
  get count(): number {
    return this.#nonces.size;
  }
}
