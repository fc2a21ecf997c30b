/**
 * The status document of a transaction, for people and dashboards: what happened to it, in plain words,
 * from the node (receipt included) and, for transactions the node no longer knows, from the journal.
 */
import { Transaction, getAddress, toBigInt } from "ethers";
import { formatTokenAmount } from "../domain/token-amount.js";
import { ServiceError } from "../errors.js";
import type { AttemptKind, JournalEntry, TransferJournal } from "../journal/transfer-journal.js";
import type { NonceDisplacements } from "../send-path/nonce-displacements.js";
import { feesAsText, feesOf } from "../send-path/wallet-transaction.js";
import { findCarryingAttempt } from "./carrying-attempt.js";
import { type ChainConnection, type NetworkToken, tokensOf } from "../node/connect-chain.js";
import { NATIVE_TOKEN, tokenAt } from "../network-settings/network-choice.js";
import { ERC20_INTERFACE, TRANSFER_TOPIC, decodeTransfer } from "../node/erc20.js";
import { type RpcReceipt, type RpcTransaction, type TransactionLookup, countConfirmations } from "./transaction-lookup.js";

export type TransactionState = "pending" | "confirmed" | "failed" | "dropped" | "replaced" | "rejected" | "cancelled" | "unknown";

/**
 * One attempt of a transfer, with its fees and fate. mined: it carries the transfer. pending: the latest,
 * not mined yet. replaced: a later attempt (replacedBy) took its place. void: never mined, and never will
 * be (another attempt or transaction used the nonce, or the transfer was never sent).
 */
export interface AttemptStatus {
  hash: string;
  kind: AttemptKind;
  signedAtBlock: number;
  maxFeePerGas: string | null;
  maxPriorityFeePerGas: string | null;
  gasPrice: string | null;
  fate: "mined" | "pending" | "replaced" | "void";
  replacedBy: string | null;
}

/** The ERC-20 transfer a transaction carries. */
export interface DecodedTokenTransfer {
  token: string;
  /** The token's symbol in NETWORKS_FILE (its address without the file); null for a token the service does not send. */
  tokenSymbol: string | null;
  from: string;
  to: string;
  /**
   * Base units, as a decimal string: once mined, what the recipient received according to the token's
   * Transfer events (less than asked for by a fee-on-transfer token); before, what the call asks for.
   */
  amount: string;
  /** Whole token units ("1.5"), when the token's decimals are known. */
  amountInTokens: string | null;
  /** What the call data asks to send, base units. */
  requestedAmount: string;
}

export interface TransactionStatus {
  hash: string;
  /** The network it was looked up on: its name in NETWORKS_FILE (the chain id in decimal without the file). */
  network: string;
  chainId: number;
  state: TransactionState;
  confirmations: number;
  blockNumber: number | null;
  blockHash: string | null;
  /** From the receipt, decimal strings; null until mined. */
  gasUsed: string | null;
  effectiveGasPrice: string | null;
  transfer: DecodedTokenTransfer | null;
  /** For the service's own transfers: the attempt that carries the transfer now, and all its attempts. */
  carriedBy?: string;
  attempts?: AttemptStatus[];
  /** For the service's own transfers: whether its outcome is final, and the finalized block that made it so. */
  finalized?: boolean;
  finalizedBlock?: number | null;
  /**
   * For the service's own transfers: another transaction of the wallet was found mined at the transfer's
   * nonce, in a block not final yet. Nothing is signed for the transfer, and no failure reported, until
   * that block is final (then it is signed again at a new nonce) or leaves the chain (then its own
   * attempts may still be mined).
   */
  displacedBy?: { hash: string; blockNumber: number; blockHash: string; final: false };
  /** For the service's payout batches: the batch's id, whose items GET /payouts/:id reports. */
  payoutId?: number;
}

export class TransactionStatusReader {
  readonly #decimalsByToken = new Map<string, Promise<number | null>>();

  constructor(
    private readonly chain: ChainConnection,
    private readonly lookup: TransactionLookup,
    private readonly journal: TransferJournal,
    private readonly displacements?: Pick<NonceDisplacements, "of">,
  ) {
    for (const token of tokensOf(chain)) this.#decimalsByToken.set(token.address, Promise.resolve(token.decimals));
  }

  /**
   * The status of a (lowercase) hash; TRANSACTION_NOT_FOUND when neither the node nor the journal knows it.
   * For any attempt of the service's own transfers, the document describes the transfer: its state, and
   * the figures of the attempt that carries it.
   */
  async read(hash: string, mayView: (senderKeyId: string | undefined) => boolean = () => true): Promise<TransactionStatus> {
    const sent = await this.journal.lookUpByHash(hash);
    // Another network's transfer is never described with this chain's facts (its node does not know it).
    if (sent && BigInt(sent.chainId) !== this.chain.chainId) {
      throw new ServiceError("NETWORK_NOT_SERVED", `transfer ${sent.hash} was made on chain ${sent.chainId}, not on this network (chain ${this.chain.chainId})`);
    }
    // A transfer the caller may not view is described as the chain shows it, as any other transaction.
    const entry = sent && mayView(sent.apiKeyId) ? sent : undefined;
    if (entry && entry.attempts.length > 0) return this.#ofTransfer(hash, entry);
    const found = await this.lookup.find(hash);
    if (found) return this.#fromChain(hash, found.transaction, found.latestBlockNumber);
    if (entry) return this.#fromJournal(hash, entry);
    throw new ServiceError("TRANSACTION_NOT_FOUND", `neither the node nor this service knows transaction ${hash}`);
  }

  async #ofTransfer(hash: string, entry: JournalEntry): Promise<TransactionStatus> {
    const carrying = await findCarryingAttempt(entry, this.lookup);
    const { found, attempt } = carrying;
    const status = found ? await this.#fromChain(attempt.hash, found.transaction, found.latestBlockNumber) : this.#fromJournal(attempt.hash, entry);
    if (attempt.kind === "cancel") {
      // Nothing of the transfer moves with a cancel; what it was for is in the journal.
      const requested = this.#requested(entry);
      status.transfer = { ...requested, amount: "0", amountInTokens: requested.amountInTokens === null ? null : "0" };
      if (status.state === "confirmed") status.state = "cancelled";
    }
    const displaced = carrying.mined ? undefined : this.displacements?.of(entry.id, entry.nonce);
    return {
      ...status,
      hash,
      carriedBy: attempt.hash,
      attempts: describeAttempts(entry, carrying.mined ? entry.attempts.indexOf(carrying.attempt) : -1),
      finalized: entry.finalBlock !== null,
      finalizedBlock: entry.finalBlock,
      ...(displaced && { displacedBy: { hash: displaced.by, blockNumber: displaced.block.number, blockHash: displaced.block.hash, final: false as const } }),
      ...(entry.payout && { payoutId: entry.id }),
    };
  }

  async #fromChain(hash: string, transaction: RpcTransaction, latestBlockNumber: number): Promise<TransactionStatus> {
    const transfer = await this.#decode(transaction);
    if (transaction.blockNumber == null) {
      return { hash, ...this.#network(), state: "pending", confirmations: 0, blockNumber: null, blockHash: null, gasUsed: null, effectiveGasPrice: null, transfer };
    }
    const blockNumber = Number(transaction.blockNumber);
    const receipt = await this.lookup.receipt(hash);
    const received = transfer && receipt ? (transfer.token === NATIVE_TOKEN ? (receipt.status === "0x1" ? BigInt(transfer.amount) : 0n) : receivedAmount(receipt, transfer)) : undefined;
    const decimals = transfer && (await this.#decimalsOf(transfer.token));
    const delivered = transfer && received !== undefined ? { ...transfer, amount: received.toString(), amountInTokens: decimals == null ? null : formatTokenAmount(received, decimals) } : transfer;
    return {
      hash,
      ...this.#network(),
      // A token can return false instead of reverting: mined with status 1, yet no tokens moved.
      state: receipt?.status === "0x0" || received === 0n ? "failed" : "confirmed",
      confirmations: countConfirmations(transaction, latestBlockNumber),
      blockNumber,
      blockHash: String(transaction.blockHash),
      gasUsed: receipt?.gasUsed ? toBigInt(receipt.gasUsed).toString() : null,
      effectiveGasPrice: receipt?.effectiveGasPrice ? toBigInt(receipt.effectiveGasPrice).toString() : null,
      transfer: delivered,
    };
  }

  // The node does not know it: the journal tells what the service knows. A read never writes: a node that
  // does not return a transaction may only lag behind, which is no proof of anything.
  #fromJournal(hash: string, entry: JournalEntry): TransactionStatus {
    return {
      hash,
      ...this.#network(),
      state: stateFromJournal(entry),
      confirmations: 0,
      blockNumber: null,
      blockHash: null,
      gasUsed: null,
      effectiveGasPrice: null,
      transfer: this.#requested(entry),
    };
  }

  #network(): Pick<TransactionStatus, "network" | "chainId"> {
    return { network: this.chain.network.name, chainId: Number(this.chain.chainId) };
  }

  #requested(entry: JournalEntry): DecodedTokenTransfer {
    const token = this.#served(entry.token);
    return {
      token: token?.address ?? entry.token,
      tokenSymbol: token?.symbol ?? null,
      from: entry.lane,
      to: entry.recipient,
      amount: entry.units.toString(),
      amountInTokens: token ? formatTokenAmount(entry.units, token.decimals) : null,
      requestedAmount: entry.units.toString(),
    };
  }

  #served(token: string): NetworkToken | undefined {
    return tokenAt(tokensOf(this.chain), token);
  }

  async #decode(transaction: RpcTransaction): Promise<DecodedTokenTransfer | null> {
    const input = String(transaction.input ?? transaction.data ?? "");
    if (transaction.to == null) return null;
    // A plain value transfer is described as a transfer of the native coin on a network that pays in it.
    const native = this.#served(NATIVE_TOKEN);
    if (native && (input === "0x" || input === "") && toBigInt(String(transaction.value ?? "0x0")) > 0n) {
      const value = toBigInt(String(transaction.value));
      const from = getAddress(String(transaction.from));
      return { token: NATIVE_TOKEN, tokenSymbol: native.symbol, from, to: getAddress(String(transaction.to)), amount: value.toString(), amountInTokens: formatTokenAmount(value, native.decimals), requestedAmount: value.toString() };
    }
    const call = decodeTransfer(input);
    if (!call) return null;
    const token = getAddress(String(transaction.to));
    const { amount } = call;
    const decimals = await this.#decimalsOf(token);
    return {
      token,
      tokenSymbol: this.#served(token)?.symbol ?? null,
      from: getAddress(String(transaction.from)),
      to: call.to,
      amount: amount.toString(),
      amountInTokens: decimals === null ? null : formatTokenAmount(amount, decimals),
      requestedAmount: amount.toString(),
    };
  }

  // Read once per token; a contract without decimals() gets null, never an error.
  #decimalsOf(token: string): Promise<number | null> {
    let decimals = this.#decimalsByToken.get(token);
    if (!decimals) {
      decimals = (this.chain.provider.send("eth_call", [{ to: token, data: ERC20_INTERFACE.encodeFunctionData("decimals") }, "latest"]) as Promise<string>)
        .then((result) => Number(ERC20_INTERFACE.decodeFunctionResult("decimals", result)[0]))
        .catch(() => {
          // Try again next time: the failure may have been the node's, not the contract's.
          this.#decimalsByToken.delete(token);
          return null;
        });
      this.#decimalsByToken.set(token, decimals);
    }
    return decimals;
  }
}


/**
 * What the recipient received in this transaction: the token's Transfer events from the sender to the
 * recipient, added up. Zero when there is none (a token that returned false moved nothing).
 */
function receivedAmount(receipt: RpcReceipt, transfer: DecodedTokenTransfer): bigint {
  const logs = (receipt.logs ?? []) as { address: string; topics: string[]; data: string }[];
  let total = 0n;
  for (const log of logs) {
    if (log.address.toLowerCase() !== transfer.token.toLowerCase() || log.topics.length !== 3 || log.topics[0] !== TRANSFER_TOPIC) continue;
    if (BigInt(log.topics[1]) === BigInt(transfer.from) && BigInt(log.topics[2]) === BigInt(transfer.to)) total += BigInt(log.data);
  }
  return total;
}

/** Each attempt of `entry` with its fate, given which one was mined (its index; -1 when none is known to be). */
export function describeAttempts(entry: JournalEntry, minedAt: number): AttemptStatus[] {
  const { attempts } = entry;
  const dead = entry.state === "replaced" || entry.state === "rejected";
  return attempts.map((attempt, index) => {
    const next = attempts[index + 1]?.hash ?? null;
    let fate: AttemptStatus["fate"];
    if (minedAt >= 0) fate = index === minedAt ? "mined" : index < minedAt ? "replaced" : "void";
    else fate = dead ? "void" : next === null ? "pending" : "replaced";
    return {
      hash: attempt.hash,
      kind: attempt.kind,
      signedAtBlock: attempt.signedAtBlock,
      ...feesAsText(feesOf(Transaction.from(attempt.rawTransaction))),
      fate,
      replacedBy: fate === "replaced" ? next : null,
    };
  });
}

function stateFromJournal(entry: JournalEntry): TransactionState {
  switch (entry.state) {
    case "replaced":
      return "replaced";
    case "cancelled":
      return "cancelled";
    case "rejected":
    case "refused":
      return "rejected";
    case "nonce-used":
      // A node took it and the chain has used its nonce, yet this node does not return it: a lagging
      // backend, or (rarely) another transaction of the wallet mined at its nonce.
      return "unknown";
    default:
      // Signed or accepted: the service keeps sending the same bytes until a node holds them.
      return "dropped";
  }
}
