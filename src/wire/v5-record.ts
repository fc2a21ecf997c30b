/**
 * The ethers v5 wire format: turns ethers v6 values and raw node answers into the exact JSON that ethers
 * v5.7.2 produced for `contract.transfer(...)` and `provider.getTransaction(hash)`, key order included.
 */
import { getAddress, getCreateAddress } from "ethers";
import { type RpcTransaction, countConfirmations } from "../lookup/transaction-lookup.js";
import type { SignedTransactionFields } from "../send-path/wallet-transaction.js";

/** How ethers v5's BigNumber serialises itself. */
export interface V5BigNumber {
  type: "BigNumber";
  hex: string;
}

export interface V5AccessListEntry {
  address: string;
  storageKeys: string[];
}

/** v5's record of a transaction it has just sent (`contract.transfer(...)`), in v5's key order. */
export interface V5TransferRecord {
  type: number;
  chainId: number;
  nonce: number;
  maxPriorityFeePerGas: V5BigNumber;
  maxFeePerGas: V5BigNumber;
  gasPrice: null;
  gasLimit: V5BigNumber;
  to: string;
  value: V5BigNumber;
  data: string;
  accessList: V5AccessListEntry[];
  hash: string;
  v: number;
  r: string;
  s: string;
  from: string;
  confirmations: number;
}

/**
 * v5's record of a legacy (type 0) transaction it has just sent on a chain without EIP-1559, in v5's key
 * order: it left `type` unset (null), and `v` is EIP-155's chainId * 2 + 35 + parity.
 */
export interface V5LegacyTransferRecord {
  nonce: number;
  gasPrice: V5BigNumber;
  gasLimit: V5BigNumber;
  to: string;
  value: V5BigNumber;
  data: string;
  chainId: number;
  v: number;
  r: string;
  s: string;
  from: string;
  hash: string;
  type: null;
  confirmations: number;
}

/** v5's record of a looked-up transaction (`provider.getTransaction(hash)`), in v5's key order. */
export interface V5LookupRecord {
  hash: string;
  type: number;
  accessList: V5AccessListEntry[] | null;
  blockHash: string | null;
  blockNumber: number | null;
  transactionIndex: number | null;
  confirmations: number;
  from: string;
  gasPrice?: V5BigNumber;
  maxPriorityFeePerGas?: V5BigNumber;
  maxFeePerGas?: V5BigNumber;
  gasLimit: V5BigNumber;
  to: string | null;
  value: V5BigNumber;
  nonce: number;
  data: string;
  r?: string;
  s?: string;
  v?: number;
  creates: string | null;
  raw?: string;
  chainId: number;
}

/** A quantity as v5's BigNumber writes it: lowercase, even number of digits, no leading zero byte. */
export function toV5BigNumber(value: bigint | string): V5BigNumber {
  const digits = BigInt(value).toString(16);
  return { type: "BigNumber", hex: `0x${digits.length % 2 === 0 ? digits : `0${digits}`}` };
}

/**
 * The record v5 returned from `contract.transfer(...)` for this signed type-2 transaction. `hash` and
 * `from` come from the caller, who knows them, because ethers would recompute them on every access.
 */
export function toV5TransferRecord({ transaction, hash, from }: { transaction: SignedTransactionFields; hash: string; from: string }): V5TransferRecord | V5LegacyTransferRecord {
  if (transaction.type === 0) return toV5LegacyTransferRecord(transaction, hash, from);
  const { signature, maxFeePerGas, maxPriorityFeePerGas, to } = transaction;
  if (transaction.type !== 2 || !signature || maxFeePerGas === null || maxPriorityFeePerGas === null || !to) {
    throw new Error("a transfer record needs a signed type-2 transaction with a recipient");
  }
  return {
    type: 2,
    chainId: Number(transaction.chainId),
    nonce: transaction.nonce,
    maxPriorityFeePerGas: toV5BigNumber(maxPriorityFeePerGas),
    maxFeePerGas: toV5BigNumber(maxFeePerGas),
    gasPrice: null,
    gasLimit: toV5BigNumber(transaction.gasLimit),
    // ethers v6 checksums `to` when the transaction is built; `from` is the service's own wallet address.
    to,
    value: toV5BigNumber(transaction.value),
    data: transaction.data.toLowerCase(),
    accessList: (transaction.accessList ?? []).map((entry) => toV5AccessListEntry(entry)),
    hash: hash.toLowerCase(),
    v: signature.yParity,
    r: padTo32Bytes(signature.r),
    s: padTo32Bytes(signature.s),
    from,
    confirmations: 0,
  };
}

function toV5LegacyTransferRecord(transaction: SignedTransactionFields, hash: string, from: string): V5LegacyTransferRecord {
  const { signature, gasPrice, to } = transaction;
  if (!signature || gasPrice === null || !to) throw new Error("a transfer record needs a signed transaction with a recipient");
  return {
    nonce: transaction.nonce,
    gasPrice: toV5BigNumber(gasPrice),
    gasLimit: toV5BigNumber(transaction.gasLimit),
    to,
    value: toV5BigNumber(transaction.value),
    data: transaction.data.toLowerCase(),
    chainId: Number(transaction.chainId),
    v: Number(transaction.chainId) * 2 + 35 + signature.yParity,
    r: padTo32Bytes(signature.r),
    s: padTo32Bytes(signature.s),
    from,
    hash: hash.toLowerCase(),
    type: null,
    confirmations: 0,
  };
}

/**
 * The record v5 returned from `provider.getTransaction(hash)`, built from the node's raw answer the way
 * v5's Formatter did: absent optional quantities are left out, absent nullable fields become null.
 */
export function toV5LookupRecord(raw: RpcTransaction, latestBlockNumber: number): V5LookupRecord {
  const to = readTo(raw);
  const blockNumber = optionalNumber(raw.blockNumber);
  const confirmations = countConfirmations(raw, latestBlockNumber);
  const blockHash = raw.blockHash == null ? null : lowercaseHex(raw.blockHash);
  const record: V5LookupRecord = {
    hash: lowercaseHex(raw.hash),
    type: raw.type == null || raw.type === "0x" ? 0 : toNumber(raw.type),
    accessList: readAccessList(raw),
    blockHash: blockHash !== null && /^0x0*$/.test(blockHash) ? null : blockHash,
    blockNumber,
    transactionIndex: optionalNumber(raw.transactionIndex),
    confirmations,
    from: getAddress(String(raw.from)),
    gasPrice: optionalBigNumber(raw.gasPrice),
    maxPriorityFeePerGas: optionalBigNumber(raw.maxPriorityFeePerGas),
    maxFeePerGas: optionalBigNumber(raw.maxFeePerGas),
    gasLimit: toV5BigNumber(String(raw.gasLimit ?? raw.gas)),
    to,
    value: toV5BigNumber(String(raw.value)),
    nonce: toNumber(raw.nonce),
    data: lowercaseHex(raw.data ?? raw.input),
    r: raw.r == null ? undefined : padTo32Bytes(String(raw.r)),
    s: raw.s == null ? undefined : padTo32Bytes(String(raw.s)),
    v: raw.v == null ? undefined : toNumber(raw.v),
    creates: readCreates(raw),
    raw: raw.raw == null ? undefined : lowercaseHex(raw.raw),
    chainId: readChainId(raw),
  };
  return record;
}

function toV5AccessListEntry(entry: { address: string; storageKeys: readonly string[] }): V5AccessListEntry {
  return { address: getAddress(entry.address), storageKeys: entry.storageKeys.map((key) => key.toLowerCase()) };
}

function readAccessList(raw: RpcTransaction): V5AccessListEntry[] | null {
  if (raw.accessList == null) return raw.type === 1 || raw.type === 2 ? [] : null;
  return (raw.accessList as { address: string; storageKeys?: string[] }[]).map((entry) =>
    toV5AccessListEntry({ address: entry.address, storageKeys: entry.storageKeys ?? [] }),
  );
}

// Some nodes write the zero address as "0x0".
function readTo(raw: RpcTransaction): string | null {
  if (raw.to == null) return null;
  return BigInt(String(raw.to)) === 0n ? "0x0000000000000000000000000000000000000000" : getAddress(String(raw.to));
}

function readCreates(raw: RpcTransaction): string | null {
  if (raw.creates != null) return getAddress(String(raw.creates));
  if (raw.to != null) return null;
  return getCreateAddress({ from: String(raw.from), nonce: BigInt(String(raw.nonce)) });
}

// Pre-EIP-155 transactions carry no chain id; v5 derived one from v, or fell back to 0.
function readChainId(raw: RpcTransaction): number {
  const given = raw.chainId ?? raw.networkId;
  if (given != null) return toNumber(given);
  if (raw.v == null) return 0;
  return Math.max(0, Math.trunc((toNumber(raw.v) - 35) / 2));
}

function toNumber(value: unknown): number {
  const number = Number(BigInt(String(value)));
  if (!Number.isSafeInteger(number)) throw new Error(`quantity ${String(value)} does not fit a JSON number`);
  return number;
}

function optionalNumber(value: unknown): number | null {
  return value == null ? null : toNumber(value);
}

function optionalBigNumber(value: unknown): V5BigNumber | undefined {
  return value == null ? undefined : toV5BigNumber(String(value));
}

function lowercaseHex(value: unknown): string {
  const text = String(value);
  return (text.startsWith("0x") ? text : `0x${text}`).toLowerCase();
}

function padTo32Bytes(hex: string): string {
  return `0x${hex.slice(2).padStart(64, "0")}`.toLowerCase();
}

// The confirmations of a looked-up transaction change with every block; everything else in its record
// does not. The record is written once per node answer and only the count is spliced in per reply.
const serializedLookups = new WeakMap<RpcTransaction, [before: string, after: string]>();
const CONFIRMATIONS_KEY = '"confirmations":';

/**
 * The /getTransaction reply body `{"result": record}` as JSON, byte for byte what JSON.stringify of
 * toV5LookupRecord gives, with the record's fixed parts serialised once per node answer.
 */
export function serializeV5LookupReply(found: { transaction: RpcTransaction; latestBlockNumber: number } | null): string {
  if (!found) return '{"result":null}';
  const confirmations = countConfirmations(found.transaction, found.latestBlockNumber);
  let parts = serializedLookups.get(found.transaction);
  if (!parts) {
    const json = JSON.stringify({ result: toV5LookupRecord(found.transaction, found.latestBlockNumber) });
    const at = json.indexOf(CONFIRMATIONS_KEY) + CONFIRMATIONS_KEY.length;
    parts = [json.slice(0, at), json.slice(at + String(confirmations).length)];
    serializedLookups.set(found.transaction, parts);
  }
  return parts[0] + String(confirmations) + parts[1];
}
