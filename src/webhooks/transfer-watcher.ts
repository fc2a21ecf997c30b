/**
 * Follows the service's transfers on chain for their webhook events, at a fixed cost per new block
 * however many are in flight: which ones were mined comes from the wallet's mined nonce count (read with
 * every wallet snapshot) and the token's Transfer logs from the wallet over the new blocks (one call).
 * Only a transfer without such a log (reverted, cancelled, or mined before the logs this process read)
 * costs receipt lookups of its own.
 */
import { toBigInt } from "ethers";
import type { JournalEntry, PayoutOrder, TransferEventType, TransferJournal, WebhookEventRecord } from "../journal/transfer-journal.js";
import { itemFatesOf, payoutItemEvents } from "./payout-item-events.js";
import type { ChainConnection } from "../node/connect-chain.js";
import { TRANSFER_TOPIC } from "../node/erc20.js";
import { tokensOf } from "../node/connect-chain.js";
import { NATIVE_TOKEN } from "../network-settings/network-choice.js";
import type { LoggedTransfer, WalletTransferLogs } from "../node/wallet-transfer-logs.js";
import { type EventSource, type MinedFacts, transferEvent } from "./transfer-events.js";


interface RpcReceipt {
  status: string;
  blockNumber: string;
  blockHash: string;
  gasUsed: string;
  effectiveGasPrice?: string;
  logs: { address: string; topics: string[]; data: string }[];
}

const NOT_MINED: MinedFacts = { blockNumber: null, blockHash: null, confirmations: 0, gasUsed: null, effectiveGasPrice: null };

/** How a settled transfer ended, and where. */
interface Outcome {
  type: Extract<TransferEventType, "transfer.confirmed" | "transfer.failed" | "transfer.cancelled">;
  hash: string;
  blockNumber: number | null;
  blockHash: string | null;
  gasUsed: string | null;
  effectiveGasPrice: string | null;
}

export interface TransferWatcherOptions {
  chain: ChainConnection;
  journal: TransferJournal;
  endpoints: readonly string[];
  /** Confirmations at which the outcome is reported. */
  confirmations: number;
  /** The wallet's Transfer logs, read once per block for every part that asks. */
  logs: WalletTransferLogs;
}

export class TransferWatcher {
  readonly #options: TransferWatcherOptions;
  readonly #source: EventSource;
  // The logs of this round's blocks, by transaction hash.
  #logged: ReadonlyMap<string, LoggedTransfer> = new Map();
  // Outcomes read from receipts, by entry id, so that waiting for confirmations reads each once.
  readonly #fromReceipts = new Map<number, Outcome>();
  #awaiting = 0;

  constructor(options: TransferWatcherOptions) {
    this.#options = options;
    const { chain } = options;
    this.#source = { network: chain.network, tokens: tokensOf(chain) };
  }

  /** Settled transfers waiting for their confirmations: while there are any, every block matters. */
  get awaitingConfirmations(): number {
    return this.#awaiting;
  }

  /** The event of a replacement, journaled in the same turn as the attempt it reports. */
  replaced(entry: JournalEntry, hash: string): void {
    if (!entry.notify) return;
    this.#record(transferEvent("transfer.replaced", entry, hash, this.#source));
  }

  /** One round at chain head `head`: reports reorganised, mined and failed transfers. */
  async follow(head: number): Promise<void> {
    const { journal } = this.#options;
    for (const entry of journal.reportedButUnmined()) {
      const hash = entry.minedHash ?? (entry.attempts.at(-1)?.hash as string);
      this.#record(transferEvent("transfer.reorged", entry, hash, this.#source), "transfer.reorged");
      if (entry.payout) for (const event of payoutItemEvents("payout.item.reorged", { ...entry, payout: entry.payout }, hash, this.#source, NOT_MINED)) this.#record(event);
    }
    await this.#reportFinalized(head);
    const settled = journal.unreportedSettled();
    if (settled.length === 0) {
      this.#awaiting = 0;
      return;
    }
    for (const id of this.#fromReceipts.keys()) if (!settled.some((entry) => entry.id === id)) this.#fromReceipts.delete(id);
    this.#logged = await this.#options.logs.read(Math.min(...settled.flatMap((entry) => entry.attempts.map((attempt) => attempt.signedAtBlock))), head, settled.length);
    const events: { event: WebhookEventRecord; reported?: TransferEventType; blockHash?: string | null }[] = [];
    let awaiting = 0;
    for (const entry of settled) {
      const outcome = await this.#outcomeOf(entry);
      if (!outcome) continue;
      const confirmations = outcome.blockNumber === null ? 0 : head - outcome.blockNumber + 1;
      if (outcome.blockNumber !== null && confirmations < this.#options.confirmations) {
        awaiting++;
        continue;
      }
      const mined: MinedFacts = { ...outcome, confirmations: Math.max(confirmations, 0) };
      // A batch's items need its receipt (the contract's ItemFailed events); one not there yet proves nothing.
      const itemEvents = entry.payout ? await this.#itemEventsOf({ ...entry, payout: entry.payout }, outcome, mined) : [];
      if (!itemEvents) {
        // The outcome read before may be of a block a reorganisation replaced: read it again next round.
        this.#fromReceipts.delete(entry.id);
        awaiting++;
        continue;
      }
      events.push({ event: transferEvent(outcome.type, entry, outcome.hash, this.#source, mined), reported: outcome.type, blockHash: outcome.blockHash });
      events.push(...itemEvents.map((event) => ({ event })));
      this.#fromReceipts.delete(entry.id);
    }
    this.#awaiting = awaiting;
    // In one turn: the events and the transfers' reported marks commit together.
    for (const { event, reported, blockHash } of events) this.#record(event, reported, blockHash);
  }

  // transfer.finalized for every reported outcome that became final, with where it was mined (its receipt).
  async #reportFinalized(head: number): Promise<void> {
    const { journal, chain } = this.#options;
    for (const entry of journal.finalizedUnreported()) {
      const hash = entry.minedHash ?? (entry.attempts.at(-1)?.hash as string);
      const receipt = entry.payout
        ? await (chain.provider.send("eth_getTransactionReceipt", [hash]) as Promise<RpcReceipt | null>).catch(() => undefined)
        : ((await chain.provider.send("eth_getTransactionReceipt", [hash])) as RpcReceipt | null);
      // A batch's items are told from its receipt, of the block its outcome was reported in: one not read
      // (yet), or of another block, waits for the next round.
      if (entry.payout && entry.state !== "replaced" && (!receipt || (entry.reportedBlockHash !== null && receipt.blockHash.toLowerCase() !== entry.reportedBlockHash.toLowerCase()))) continue;
      const facts = receipt ? minedFactsOf(receipt) : { blockNumber: null, blockHash: null, gasUsed: null, effectiveGasPrice: null };
      const mined: MinedFacts = { ...facts, confirmations: facts.blockNumber === null ? 0 : Math.max(head - facts.blockNumber + 1, 1) };
      this.#record(transferEvent("transfer.finalized", entry, hash, this.#source, mined), "transfer.finalized", entry.reportedBlockHash);
      if (entry.payout) {
        const batch = { ...entry, payout: entry.payout };
        for (const event of payoutItemEvents("payout.item.finalized", batch, hash, this.#source, mined, itemFatesOf(batch, entry.reported ?? "transfer.confirmed", receipt ?? null))) this.#record(event);
      }
    }
  }

  // The items' events of a batch's outcome, from the mined attempt's receipt (of the block the outcome
  // names); undefined while that receipt cannot be read.
  async #itemEventsOf(batch: JournalEntry & { payout: PayoutOrder }, outcome: Outcome, mined: MinedFacts): Promise<WebhookEventRecord[] | undefined> {
    let receipt: RpcReceipt | null = null;
    if (outcome.blockNumber !== null) {
      // A node fault is this batch's to wait out, not every other transfer's round.
      receipt = await (this.#options.chain.provider.send("eth_getTransactionReceipt", [outcome.hash]) as Promise<RpcReceipt | null>).catch(() => null);
      if (!receipt || (outcome.blockHash !== null && receipt.blockHash.toLowerCase() !== outcome.blockHash.toLowerCase())) return undefined;
    }
    const fates = itemFatesOf(batch, outcome.type, receipt);
    return [
      ...payoutItemEvents("payout.item.paid", batch, outcome.hash, this.#source, mined, fates),
      ...payoutItemEvents("payout.item.failed", batch, outcome.hash, this.#source, mined, fates),
    ];
  }

  #record(event: WebhookEventRecord, reported?: TransferEventType, blockHash: string | null = null): void {
    this.#options.journal.recordEvent(event, this.#options.endpoints, reported, blockHash);
  }

  // Which attempt was mined and how it ended: from the logs when it moved tokens, else from receipts.
  async #outcomeOf(entry: JournalEntry): Promise<Outcome | undefined> {
    for (const attempt of entry.attempts) {
      const logged = this.#logged.get(attempt.hash);
      if (logged) return { type: "transfer.confirmed", hash: attempt.hash, ...logged, gasUsed: null, effectiveGasPrice: null };
    }
    const known = this.#fromReceipts.get(entry.id);
    if (known) return known;
    const { provider } = this.#options.chain;
    for (const attempt of [...entry.attempts].reverse()) {
      const receipt = (await provider.send("eth_getTransactionReceipt", [attempt.hash])) as RpcReceipt | null;
      if (!receipt) continue;
      // A native transfer moves its value when it succeeds; a token transfer when its token logged a Transfer.
      const moved = entry.token === NATIVE_TOKEN || receipt.logs.some((log) => log.topics[0] === TRANSFER_TOPIC && log.address.toLowerCase() === entry.token.toLowerCase());
      const type = attempt.kind === "cancel" ? "transfer.cancelled" : receipt.status === "0x1" && moved ? "transfer.confirmed" : "transfer.failed";
      const outcome: Outcome = { type, hash: attempt.hash, ...minedFactsOf(receipt) };
      this.#fromReceipts.set(entry.id, outcome);
      return outcome;
    }
    // No attempt of it was mined: another transaction used its nonce (proven by the reconciler): given up.
    if (entry.state === "replaced") return { type: "transfer.failed", hash: entry.attempts.at(-1)?.hash as string, blockNumber: null, blockHash: null, gasUsed: null, effectiveGasPrice: null };
    return undefined;
  }
}

// Where a receipt says the transaction was mined, and what it cost: decimal strings, as events carry them.
function minedFactsOf(receipt: RpcReceipt): Omit<MinedFacts, "confirmations"> {
  return {
    blockNumber: Number(receipt.blockNumber),
    blockHash: receipt.blockHash,
    gasUsed: toBigInt(receipt.gasUsed).toString(),
    effectiveGasPrice: receipt.effectiveGasPrice ? toBigInt(receipt.effectiveGasPrice).toString() : null,
  };
}
