/**
 * Brings journal entries and the chain into agreement: a transaction the node may have lost is sent
 * again with the very bytes that were signed (never re-signed), and one whose nonce another transaction
 * took is marked replaced.
 */
import { Transaction, isError } from "ethers";
import type { JournalEntry, TransferJournal } from "../journal/transfer-journal.js";
import { isAlreadyKnown, isSurelyRejected } from "./broadcast-outcome.js";
import type { ChainConnection } from "./connect-chain.js";
import type { WalletLedger } from "./wallet-ledger.js";

export type RebroadcastOutcome = "accepted" | "replaced" | "rejected";

/** What startup reconciliation did, for the log. */
export interface ReconcileSummary {
  abandonedClaims: number;
  accepted: number;
  replaced: number;
  rejected: number;
}

export class TransferReconciler {
  /** Told when a held nonce turns out to be free (its transaction was refused): the sender reuses it. */
  onNonceFreed: (nonce: number) => void = () => {};

  constructor(
    private readonly chain: ChainConnection,
    private readonly journal: TransferJournal,
    private readonly ledger: WalletLedger,
  ) {}

  /**
   * Run once before serving: claims that never got signed are dropped (the client's retry runs afresh);
   * every signed or accepted entry is found on chain, sent again, or marked replaced.
   */
  async reconcileAtStartup(): Promise<ReconcileSummary> {
    const summary: ReconcileSummary = { abandonedClaims: 0, accepted: 0, replaced: 0, rejected: 0 };
    for (const entry of this.journal.unsettled()) {
      if (entry.state === "claimed") {
        this.journal.releaseKey(entry.id);
        summary.abandonedClaims++;
        continue;
      }
      summary[await this.rebroadcast(entry)]++;
    }
    return summary;
  }

  /** Makes sure the node has this entry's transaction, or learns why it cannot. Throws on node faults. */
  async rebroadcast(entry: JournalEntry): Promise<RebroadcastOutcome> {
    if (!entry.rawTransaction || !entry.hash || entry.nonce === null) throw new Error(`journal entry ${entry.id} was never signed`);
    const outcome = await this.#sendAgain(entry.rawTransaction, entry.hash);
    if (outcome === "accepted") {
      this.journal.recordAccepted(entry.id);
      const transaction = Transaction.from(entry.rawTransaction);
      const units = entry.units;
      this.ledger.trackSent(entry.nonce, { units, gasCost: transaction.gasLimit * (transaction.maxFeePerGas ?? 0n) });
    } else if (outcome === "replaced") {
      this.journal.recordReplaced(entry.id);
    } else {
      this.journal.recordRejected(entry.id);
      this.journal.releaseKey(entry.id);
      // Nothing holds its nonce now; left unused it would be a gap that stops every later transfer.
      this.ledger.forgetNonce(entry.nonce);
      this.onNonceFreed(entry.nonce);
    }
    return outcome;
  }

  async #sendAgain(rawTransaction: string, hash: string): Promise<RebroadcastOutcome> {
    const { provider } = this.chain;
    if (await provider.send("eth_getTransactionByHash", [hash])) return "accepted";
    try {
      await provider.send("eth_sendRawTransaction", [rawTransaction]);
      return "accepted";
    } catch (error) {
      if (isAlreadyKnown(error)) return "accepted";
      if (isError(error, "NONCE_EXPIRED")) {
        // The nonce is used: by this very transaction (mined meanwhile), or by another one.
        return (await provider.send("eth_getTransactionByHash", [hash])) ? "accepted" : "replaced";
      }
      if (isSurelyRejected(error)) return "rejected";
      throw error;
    }
  }
}

const MAX_REBROADCASTS_PER_ROUND = 50;

/**
 * Sends again, in the background, every entry that no request is working on and whose broadcast got no
 * answer (state signed), or that the node accepted but has not mined for `staleAfterMs` (a node can drop
 * a transaction from its pool). A lost transaction would otherwise leave a nonce gap that jams every later
 * transfer. Entries the node still holds are only looked up, not sent.
 */
export async function rebroadcastUnanswered(
  reconciler: TransferReconciler,
  journal: TransferJournal,
  ledger: WalletLedger,
  isInFlight: (entryId: number) => boolean,
  staleAfterMs: number,
  now = Date.now(),
): Promise<RebroadcastOutcome[]> {
  const outcomes: RebroadcastOutcome[] = [];
  const minedNonceCount = ledger.snapshot.minedNonceCount;
  for (const entry of journal.unsettled()) {
    // Lowest nonces first, a bounded number per round: on a congested chain many may wait at once.
    if (outcomes.length >= MAX_REBROADCASTS_PER_ROUND) break;
    if (isInFlight(entry.id) || entry.nonce === null) continue;
    const stale = entry.state === "accepted" && entry.nonce >= minedNonceCount && now - entry.createdAt > staleAfterMs;
    if (entry.state === "signed" || stale) outcomes.push(await reconciler.rebroadcast(entry));
  }
  return outcomes;
}
