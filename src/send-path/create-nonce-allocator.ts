/** Builds the wallet's nonce sequence from the chain and the journal, read once at startup. */
import type { TransferJournal } from "../journal/transfer-journal.js";
import type { ChainConnection } from "../node/connect-chain.js";
import { NonceAllocator } from "./nonce-allocator.js";

/**
 * The sequence starts at the chain's pending count, and never below a nonce the journal holds for an
 * unfinished transfer: a node may not have it (yet), and a replica taking over from a leader that died
 * between journaling and broadcasting must not reuse it. Nonces below that floor that neither the chain
 * counts nor a transfer holds were given back before the restart: the next transfers (or the gap filler)
 * take them. Read now rather than on the first transfer, which then waits for nothing but its own calls.
 */
export async function createNonceAllocator({ provider, wallet }: Pick<ChainConnection, "provider" | "wallet">, journal: TransferJournal): Promise<NonceAllocator> {
  // Read once: such a transfer keeps its nonce, and a transfer refused later gives its back.
  const heldNonces = new Set(journal.unsettled().flatMap((entry) => (entry.nonce === null ? [] : [entry.nonce])));
  const journaledFloor = Math.max(0, ...[...heldNonces].map((nonce) => nonce + 1));
  let pendingAtStart: number | undefined;
  const nonces = new NonceAllocator(
    async () => {
      const pending = Number(await provider.send("eth_getTransactionCount", [wallet.address, "pending"]));
      pendingAtStart ??= pending;
      return Math.max(journaledFloor, pending);
    },
    async () => Number(await provider.send("eth_getTransactionCount", [wallet.address, "latest"])),
  );
  await nonces.ready();
  for (let nonce = pendingAtStart ?? journaledFloor; nonce < journaledFloor; nonce++) if (!heldNonces.has(nonce)) nonces.release(nonce);
  return nonces;
}
