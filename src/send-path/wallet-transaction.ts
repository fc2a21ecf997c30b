/**
 * Signing the wallet's transactions: a token transfer's first attempt, its re-priced replacements and
 * cancels all go through here, EIP-1559 (type 2) where the chain has a base fee, legacy (type 0, EIP-155)
 * where it has none.
 */
import { type Signature, Transaction, getAddress, keccak256, makeError } from "ethers";
import { NATIVE_TOKEN } from "../network-settings/network-choice.js";
import type { JournalEntry } from "../journal/transfer-journal.js";
import type { ChainConnection } from "../node/connect-chain.js";
import type { Reservation } from "./wallet-ledger.js";
import { type EncodableTransaction, signedTransactionBytes, unsignedTransactionBytes } from "./transaction-bytes.js";
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
 * A signed transaction's fields, as ethers' `Transaction` holds them (one satisfies this type), but plain
 * values: building a `Transaction` validates, checksums and converts each field through its setters. What
 * a transfer's v5 record is made of.
 */
export interface SignedTransactionFields extends EncodableTransaction {
  signature: Pick<Signature, "r" | "s" | "yParity"> | null;
}

/**
 * A signed transaction with its hash, bytes and signer worked out once: ethers recomputes `hash` and
 * `serialized` on every access, and recovers `from` from the signature (about a millisecond each time).
 */
export interface SignedTokenTransfer {
  transaction: SignedTransactionFields;
  hash: string;
  rawTransaction: string;
  from: string;
}

/**
 * Signs `call` with `fees` for the chain's hot wallet. The fields are checked as ethers' `Transaction`
 * would check them, and the bytes come from transaction-bytes: building a `Transaction` and reading its
 * `unsignedHash` and `serialized` took about 0.16 ms more of the event loop per transfer (#31 item 6).
 */
export async function signWalletTransaction(chain: Pick<ChainConnection, "chainId" | "signer" | "wallet">, call: WalletCall, fees: AttemptFees): Promise<SignedTokenTransfer> {
  if (!Number.isSafeInteger(call.nonce) || call.nonce < 0) throw makeError(`invalid nonce ${call.nonce}`, "INVALID_ARGUMENT", { argument: "nonce", value: call.nonce });
  const common = { chainId: chain.chainId, nonce: call.nonce, gasLimit: call.gasLimit, to: checksummed(call.to), value: call.value ?? 0n, data: call.data.toLowerCase() };
  let fields: EncodableTransaction;
  if (fees.type === 0) {
    fields = { ...common, type: 0, gasPrice: fees.gasPrice, maxFeePerGas: null, maxPriorityFeePerGas: null, accessList: null };
  } else {
    // ethers refuses to encode such a transaction, and every node refuses it.
    if (fees.maxPriorityFeePerGas > fees.maxFeePerGas) throw makeError("priorityFee cannot be more than maxFee", "BAD_DATA", { value: fees });
    fields = { ...common, type: 2, maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas, gasPrice: null, accessList: [] };
  }
  const signature = await chain.signer.sign(keccak256(unsignedTransactionBytes(fields)));
  const raw = signedTransactionBytes(fields, signature);
  return { transaction: { ...fields, signature }, rawTransaction: `0x${raw.toString("hex")}`, hash: keccak256(raw), from: chain.wallet.address };
}

// The addresses the wallet sends to are few (its tokens, itself, its lanes, the payout contract) but for
// native transfers' recipients: a small memo spares the checksum's hash, cleared whole when full.
const CHECKSUMMED = new Map<string, string>();
const CHECKSUMMED_MAX = 256;

/** `address` in its EIP-55 checksummed form, as ethers' `Transaction` holds `to` (and the v5 record shows it). */
function checksummed(address: string): string {
  const known = CHECKSUMMED.get(address);
  if (known !== undefined) return known;
  const result = getAddress(address);
  if (CHECKSUMMED.size >= CHECKSUMMED_MAX) CHECKSUMMED.clear();
  CHECKSUMMED.set(address, result);
  return result;
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
