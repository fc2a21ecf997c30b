/**
 * What bounds a replacement the market did not ask for: which refusals more fees may answer, and how many
 * times the wallet's next transaction is replaced whatever the market says.
 */
import { Transaction } from "ethers";
import type { JournalEntry } from "../journal/transfer-journal.js";
import type { NodeAnswerMeaning } from "../node/node-answers.js";

/**
 * Whether a re-send refused with this meaning may be taken at higher fees: not when the node refused for
 * something fees cannot change, or never answered. An unknown wording may be about the price.
 */
export function repricingMayHelp(meaning: NodeAnswerMeaning | undefined): boolean {
  if (meaning === undefined) return false;
  return ![
    "insufficient-funds",
    "invalid-transaction",
    "rate-limited",
    "no-answer",
    "connection-refused",
    "method-not-supported",
    "nonce-too-high",
    "nonce-too-low",
    // More fees make these worse, or are not what they are about.
    "fee-above-node-cap",
    "exceeds-block-gas-limit",
    "intrinsic-gas-too-low",
    "reverted",
  ].includes(meaning);
}

/**
 * The most attempts at its nonce the wallet's next transaction may have for the rules that raise its fees
 * whatever the market says (a node refuses it in words fees may answer, holds it and never passes it on, or
 * holds it without counting it as pending): 3 replacements, about 1.42 times the fees, whatever the caps (unset by default). A new transaction
 * at the nonce is what gets it passed on or judged afresh; a node that keeps refusing in words no table
 * knows ("Internal error") would otherwise raise the fees every STUCK_AFTER_BLOCKS blocks for as long as it
 * lasts. The market rule is not bounded so: the market asked. Past this an operator decides.
 */
export const NEXT_NONCE_REPLACEMENTS_AT_MOST = 3;

/** The reasons to replace the wallet's next transaction whatever the market says: bounded by NEXT_NONCE_REPLACEMENTS_AT_MOST. */
export type NextNonceReason = "refused-at-next-nonce" | "unmined-at-next-nonce" | "not-executable";

/** How many attempts the entry has at its nonce (those made at an earlier nonce, before it was signed again there, are not its replacements here). */
export function attemptsAtNonce(entry: JournalEntry): number {
  return entry.attempts.filter((attempt) => Transaction.from(attempt.rawTransaction).nonce === entry.nonce).length;
}
