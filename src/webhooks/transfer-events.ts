/** The webhook events of a transfer: their type, payload and id, fixed once when they are journaled. */
import { randomUUID } from "node:crypto";
import { steadyWallClockNow } from "../clock.js";
import { formatTokenAmount } from "../domain/token-amount.js";
import type { JournalEntry, TransferEventType, WebhookEventRecord } from "../journal/transfer-journal.js";
import { type ServedNetwork, tokenAt } from "../network-settings/network-choice.js";
import type { NetworkToken } from "../node/connect-chain.js";

/** Where and how a transfer was mined, as far as it is known. */
export interface MinedFacts {
  blockNumber: number | null;
  blockHash: string | null;
  confirmations: number;
  gasUsed: string | null;
  effectiveGasPrice: string | null;
}

/** The network every event is about, and its tokens (the sending wallet is each transfer's lane). */
export interface EventSource {
  network: ServedNetwork;
  /** Every token the network pays in, with its decimals: an event names the one its transfer paid in. */
  tokens: readonly NetworkToken[];
}

const NOT_MINED: MinedFacts = { blockNumber: null, blockHash: null, confirmations: 0, gasUsed: null, effectiveGasPrice: null };

/**
 * An event about `entry`, carried now by the attempt `hash`. The body is what every delivery sends, byte
 * for byte: `{type, timestamp, data}` as the Standard Webhooks payload structure suggests.
 */
export function transferEvent(type: TransferEventType, entry: JournalEntry, hash: string, source: EventSource, mined: MinedFacts = NOT_MINED): WebhookEventRecord {
  // What moved, as in the status document: nothing for a reverted or cancelled transfer (and for the
  // finality of one), what was asked for otherwise.
  const outcome = type === "transfer.finalized" ? entry.reported : type;
  const moved = outcome === "transfer.failed" || outcome === "transfer.cancelled" ? 0n : entry.units;
  const token = tokenAt(source.tokens, entry.token);
  const data = {
    transferHash: entry.hash,
    hash,
    nonce: entry.nonce,
    network: source.network.name,
    chainId: Number(source.network.chainId),
    from: entry.lane,
    token: token?.address ?? entry.token,
    // A journal row's token is one of its network's: the fallbacks are for a token no longer configured.
    tokenSymbol: token?.symbol ?? entry.token,
    recipient: entry.recipient,
    amount: moved.toString(),
    amountInTokens: token ? formatTokenAmount(moved, token.decimals) : null,
    requestedAmount: entry.units.toString(),
    apiKeyId: entry.apiKeyId ?? null,
    // The journal keys idempotency per API key ("<key id>/<client's key>"); the client knows its own part.
    idempotencyKey: entry.idempotencyKey && entry.apiKeyId ? entry.idempotencyKey.slice(entry.apiKeyId.length + 1) : null,
    blockNumber: mined.blockNumber,
    blockHash: mined.blockHash,
    confirmations: mined.confirmations,
    gasUsed: mined.gasUsed,
    effectiveGasPrice: mined.effectiveGasPrice,
  };
  const body = JSON.stringify({ type, timestamp: new Date(steadyWallClockNow()).toISOString(), data });
  return { id: `msg_${randomUUID().replaceAll("-", "")}`, type, entryId: entry.id, body };
}
