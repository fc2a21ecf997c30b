/**
 * A hole in the wallet's nonces that nothing of the service's holds: the chain's next nonce has no
 * transfer waiting at it, while later transfers wait behind it and the node holds nothing there either.
 * That happens when the chain took back a transaction that used it: a reorganisation dropped another
 * sender's transaction, or the one whose nonce a transfer lost before it was signed again at a new one.
 * Nothing else would ever fill it, and every later transfer waits behind it for good.
 */
import { Transaction } from "ethers";
import type { TransferJournal } from "../journal/transfer-journal.js";
import type { ChainConnection } from "../node/connect-chain.js";
import type { NonceAllocator } from "./nonce-allocator.js";
import { type AttemptFees, feesOf, maxPricePerGas } from "./wallet-transaction.js";

export interface NonceHole {
  nonce: number;
  /** The highest fees among the service's own earlier attempts at that nonce: a filler must outbid them. */
  outbid: AttemptFees | undefined;
}

/**
 * Whether the journal shows a hole at the wallet's mined nonce count (no node call): no unsettled transfer
 * holds that nonce, nor is it given back or being signed, and some unsettled transfer above it is older than
 * `staleAfterMs` (wall clock ms).
 */
export function journalShowsHole(
  journal: TransferJournal,
  nonces: Pick<NonceAllocator, "isGivenBack">,
  isBeingSigned: (nonce: number) => boolean,
  minedNonceCount: number,
  staleAfterMs: number,
  now: number,
): boolean {
  // A nonce given back is the next transfer's, or the gap filler's; one being signed is its transfer's.
  if (nonces.isGivenBack(minedNonceCount) || isBeingSigned(minedNonceCount)) return false;
  const unsettled = journal.unsettled().filter((entry) => entry.nonce !== null && entry.nonce >= minedNonceCount);
  if (unsettled.some((entry) => entry.nonce === minedNonceCount)) return false;
  return unsettled.some((entry) => now - entry.createdAt > staleAfterMs);
}

/**
 * The hole at the wallet's mined nonce count, if there is one: the journal shows one (journalShowsHole) and
 * the node counts no pending transaction there. With `trustPendingCount` false, that count is not asked: a
 * node may count transactions queued behind a gap in it (Besu answers its highest pooled nonce + 1,
 * besu-eth/besu#9529), so that a hole never shows there; the caller decides when the journal's shape has
 * lasted long enough to be one. Costs at most one node call, only when the journal shows such a shape.
 */
export async function findNonceHole(
  chain: Pick<ChainConnection, "provider" | "wallet">,
  journal: TransferJournal,
  nonces: Pick<NonceAllocator, "isGivenBack">,
  /** Whether a transfer took this nonce and its signature is still being made (a remote signer). */
  isBeingSigned: (nonce: number) => boolean,
  minedNonceCount: number,
  staleAfterMs: number,
  now: number,
  trustPendingCount = true,
): Promise<NonceHole | undefined> {
  if (!journalShowsHole(journal, nonces, isBeingSigned, minedNonceCount, staleAfterMs, now)) return undefined;
  if (trustPendingCount) {
    const pending = Number(await chain.provider.send("eth_getTransactionCount", [chain.wallet.address, "pending"]));
    if (pending > minedNonceCount) return undefined;
  }
  // A transfer signed again at a new nonce keeps its earlier attempts: one of them may sit in some pool.
  let outbid: AttemptFees | undefined;
  for (const entry of journal.unsettled()) {
    if (entry.nonce === null || entry.nonce < minedNonceCount) continue;
    for (const attempt of entry.attempts) {
      const transaction = Transaction.from(attempt.rawTransaction);
      if (transaction.nonce !== minedNonceCount) continue;
      const fees = feesOf(transaction);
      if (!outbid || maxPricePerGas(fees) > maxPricePerGas(outbid)) outbid = fees;
    }
  }
  return { nonce: minedNonceCount, outbid };
}
