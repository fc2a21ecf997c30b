/**
 * Signing the wallet's transactions: a token transfer's first attempt, its re-priced replacements and
 * cancels all go through here, EIP-1559 (type 2) where the chain has a base fee, legacy (type 0, EIP-155)
 * where it has none.
 */
import { Transaction, keccak256 } from "ethers";
import { NATIVE_TOKEN } from "../network-settings/network-choice.js";
import type { JournalEntry } from "../journal/transfer-journal.js";
import type { ChainConnection } from "../node/connect-chain.js";
import type { Reservation } from "./wallet-ledger.js";
import { signedTransactionBytes, unsignedTransactionBytes } from "./transaction-bytes.js";
import type { WalletSnapshot } from "./wallet-snapshot.js";

/** What one attempt offers to pay per gas. */
export type AttemptFees = { type: 2; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { type: 0; gasPrice: bigint };

/**
 * The call an attempt makes: a token transfer (to the token), a cancel (0 value to the wallet itself), or a
 * gas top-up (ETH to another lane of the pool).
 */
export interface WalletCall {
  nonce: number;
  to: string;
  data: string;
  gasLimit: bigint;
  /** Wei the transaction carries; 0 unless it is a gas top-up. */
  value?: bigint;
}

/**
 * A signed transaction with its hash, bytes and signer worked out once: ethers recomputes `hash` and
 * `serialized` on every access, and recovers `from` from the signature (about a millisecond each time).
 */
export interface SignedTokenTransfer {
  transaction: Transaction;
  hash: string;
  rawTransaction: string;
  from: string;
}

/** Signs `call` with `fees` for the chain's hot wallet. */
export async function signWalletTransaction(chain: Pick<ChainConnection, "chainId" | "signer" | "wallet">, call: WalletCall, fees: AttemptFees): Promise<SignedTokenTransfer> {
  const common = { chainId: chain.chainId, ...call, value: call.value ?? 0n };
  const transaction =
    fees.type === 0
      ? Transaction.from({ ...common, type: 0, gasPrice: fees.gasPrice })
      : Transaction.from({ ...common, type: 2, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, accessList: [] });
  // The bytes come from transaction-bytes, not from ethers' getters, which re-encode through hex strings.
  const signature = await chain.signer.sign(keccak256(unsignedTransactionBytes(transaction)));
  transaction.signature = signature;
  const raw = signedTransactionBytes(transaction, signature);
  return { transaction, rawTransaction: `0x${raw.toString("hex")}`, hash: keccak256(raw), from: chain.wallet.address };
}

/**
 * The fees a new transaction is signed with from the snapshot's offer: type 2, or on a chain without a
 * base fee a legacy gas price (the snapshot carries it in maxFeePerGas).
 */
export function snapshotFees({ baseFeePerGas, maxFeePerGas, maxPriorityFeePerGas }: WalletSnapshot): AttemptFees {
  return baseFeePerGas === null ? { type: 0, gasPrice: maxFeePerGas } : { type: 2, maxFeePerGas, maxPriorityFeePerGas };
}

/** The fees a signed transaction offers. */
export function feesOf(transaction: Transaction): AttemptFees {
  return transaction.type === 2
    ? { type: 2, maxFeePerGas: transaction.maxFeePerGas ?? 0n, maxPriorityFeePerGas: transaction.maxPriorityFeePerGas ?? 0n }
    : { type: 0, gasPrice: transaction.gasPrice ?? 0n };
}

/** Fees as decimal wei strings for JSON (logs, documents); the fields a type does not have are null. */
export function feesAsText(fees: AttemptFees): { maxFeePerGas: string | null; maxPriorityFeePerGas: string | null; gasPrice: string | null } {
  return fees.type === 0
    ? { maxFeePerGas: null, maxPriorityFeePerGas: null, gasPrice: fees.gasPrice.toString() }
    : { maxFeePerGas: fees.maxFeePerGas.toString(), maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(), gasPrice: null };
}

/** The most one gas of these fees may cost. */
export function maxPricePerGas(fees: AttemptFees): bigint {
  return fees.type === 0 ? fees.gasPrice : fees.maxFeePerGas;
}

/** The estimate times a decimal multiplier such as "1.25", rounded up, in integer arithmetic. */
export function withGasLimitMultiplier(estimate: bigint, multiplier: string): bigint {
  const [whole, fraction = ""] = multiplier.split(".");
  const scale = 10n ** BigInt(fraction.length);
  const factor = BigInt(whole + fraction);
  return (estimate * factor + scale - 1n) / scale;
}

/**
 * What a journaled transfer holds in the ledger until mined: its tokens, and the ETH its latest attempt may
 * cost (its gas, and what a gas top-up carries).
 */
export function reservationOf(entry: JournalEntry, l1DataFee: bigint): Reservation {
  const latest = Transaction.from(entry.attempts.at(-1)?.rawTransaction ?? (entry.rawTransaction as string));
  const gas = latest.gasLimit * maxPricePerGas(feesOf(latest)) + l1DataFee;
  // A native transfer holds its value whichever attempt is the latest: a cancel may lose the race to its
  // own bytes, which then pay the value. Its units are that value, held in ETH, not in a token.
  if (entry.token === NATIVE_TOKEN && entry.units > 0n) return { units: 0n, gasCost: gas + entry.units, value: entry.units };
  return { units: entry.units, gasCost: gas + latest.value, token: entry.token };
}

/** The call a signed attempt makes, at another nonce: a replacement or a re-signed copy calls the same. */
export function sameCallAt(signed: Transaction, nonce: number, gasLimit = signed.gasLimit): WalletCall {
  return { nonce, to: signed.to as string, data: signed.data, gasLimit, value: signed.value };
}
