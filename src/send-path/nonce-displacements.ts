/**
 * Transfers whose nonce another transaction used, as found on the chain, while that transaction's block is
 * not final: nothing is signed for them meanwhile (a reorganisation could drop the other transaction and let
 * one of theirs be mined after all). Shared by the lanes' reconcilers, which write it, and the status
 * document, which shows it. Holds only transfers in that state: each leaves it once signed again, mined, or
 * found with its nonce unused.
 */
import type { BlockRef } from "../node/wallet-nonce-use.js";

/** The other transaction that used a transfer's nonce, and the block it was found mined in. */
export interface Displacement {
  /** Its hash, lowercase. */
  by: string;
  block: BlockRef;
  /** The transfer's nonce it used: a transfer signed again since is at another nonce, and this says nothing of it. */
  nonce: number;
}

export class NonceDisplacements {
  readonly #byEntry = new Map<number, Displacement>();

  /** `onFound`: told of each displacement when first found (the outflow watch checks whether the service sent it). */
  constructor(private readonly onFound: (entryId: number, displacement: Displacement) => void = () => undefined) {}

  /** The displacement of a journal entry at `nonce`, while it waits for that block to be final. */
  of(entryId: number, nonce: number | null): Displacement | undefined {
    const known = this.#byEntry.get(entryId);
    return known?.nonce === nonce ? known : undefined;
  }

  set(entryId: number, displacement: Displacement): void {
    const known = this.#byEntry.get(entryId);
    this.#byEntry.set(entryId, displacement);
    if (known?.by !== displacement.by) this.onFound(entryId, displacement);
  }

  delete(entryId: number): void {
    this.#byEntry.delete(entryId);
  }
}
