/**
 * The bytes the wallet signs and sends, RLP-encoded here from a transaction's fields (plain values, or an
 * ethers `Transaction`'s). ethers builds them through hex strings on every read of `unsignedHash` or
 * `serialized`: about 0.1 ms of the event loop per transfer at concurrency 50 (#31 item 6). Byte for byte
 * what ethers encodes for the two types the wallet signs, type 2 with an empty access list and legacy; the
 * tests hold both to that.
 */
import type { Signature, Transaction } from "ethers";

const EMPTY = Buffer.alloc(0);
const SHORT_STRING = 0x80;
const SHORT_LIST = 0xc0;
const MAX_SHORT_LENGTH = 55;
const EIP_1559_TYPE = Buffer.from([2]);

/** The fields of a transaction that its bytes carry; an ethers `Transaction` has them all. */
export type EncodableTransaction = Pick<
  Transaction,
  "type" | "chainId" | "nonce" | "gasLimit" | "gasPrice" | "maxFeePerGas" | "maxPriorityFeePerGas" | "to" | "value" | "data" | "accessList"
>;

/** The bytes whose keccak-256 the wallet signs (ethers' `unsignedSerialized`). */
export function unsignedTransactionBytes(transaction: EncodableTransaction): Buffer {
  return encodeTransaction(transaction, undefined);
}

/** The signed transaction as it is broadcast (ethers' `serialized`); its keccak-256 is the hash. */
export function signedTransactionBytes(transaction: EncodableTransaction, signature: Pick<Signature, "r" | "s" | "yParity">): Buffer {
  return encodeTransaction(transaction, signature);
}

function encodeTransaction(transaction: EncodableTransaction, signature: Pick<Signature, "r" | "s" | "yParity"> | undefined): Buffer {
  if (transaction.type === 2) return encodeEip1559(transaction, signature);
  if (transaction.type === 0) return encodeLegacy(transaction, signature);
  throw new Error(`the wallet signs transactions of type 2 or 0, not ${transaction.type}`);
}

function encodeEip1559(transaction: EncodableTransaction, signature: Pick<Signature, "r" | "s" | "yParity"> | undefined): Buffer {
  // The wallet never signs an access list; one here would be signed without being carried.
  if (transaction.accessList && transaction.accessList.length > 0) throw new Error("the wallet's transactions carry no access list");
  const fields = [
    integer(transaction.chainId),
    integer(BigInt(transaction.nonce)),
    integer(transaction.maxPriorityFeePerGas ?? 0n),
    integer(transaction.maxFeePerGas ?? 0n),
    integer(transaction.gasLimit),
    hexString(transaction.to ?? "0x"),
    integer(transaction.value),
    hexString(transaction.data),
  ].map(encodeString);
  fields.push(encodeList([]));
  if (signature) fields.push(encodeString(integer(BigInt(signature.yParity))), encodeString(integer(BigInt(signature.r))), encodeString(integer(BigInt(signature.s))));
  return Buffer.concat([EIP_1559_TYPE, encodeList(fields)]);
}

function encodeLegacy(transaction: EncodableTransaction, signature: Pick<Signature, "r" | "s" | "yParity"> | undefined): Buffer {
  const fields = [
    integer(BigInt(transaction.nonce)),
    integer(transaction.gasPrice ?? 0n),
    integer(transaction.gasLimit),
    hexString(transaction.to ?? "0x"),
    integer(transaction.value),
    hexString(transaction.data),
  ];
  const { chainId } = transaction;
  if (!signature) {
    // EIP-155: the chain id and two empty fields are signed, so a signature is worth nothing on another chain.
    if (chainId !== 0n) fields.push(integer(chainId), EMPTY, EMPTY);
  } else {
    const v = chainId !== 0n ? chainId * 2n + 35n + BigInt(signature.yParity) : 27n + BigInt(signature.yParity);
    fields.push(integer(v), integer(BigInt(signature.r)), integer(BigInt(signature.s)));
  }
  return encodeList(fields.map(encodeString));
}

/** A non-negative integer as RLP wants it: big-endian, no leading zero bytes, zero as no bytes at all. */
function integer(value: bigint): Buffer {
  // A JavaScript number would be encoded with a leading zero byte (0 as 0x00): invalid RLP, another hash.
  if (typeof value !== "bigint") throw new TypeError(`a transaction field must be a bigint, not ${typeof value}`);
  if (value < 0n) throw new RangeError("a transaction field cannot be negative");
  if (value === 0n) return EMPTY;
  const hex = value.toString(16);
  if (hex.length > 64) throw new RangeError("a transaction field holds at most 32 bytes");
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, "hex");
}

function hexString(hex: string): Buffer {
  if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new Error("a transaction's address and data are 0x-prefixed hex of whole bytes");
  return Buffer.from(hex.slice(2), "hex");
}

function encodeString(bytes: Buffer): Buffer {
  if (bytes.length === 1 && bytes[0] < SHORT_STRING) return bytes;
  return Buffer.concat([lengthPrefix(SHORT_STRING, bytes.length), bytes]);
}

function encodeList(encodedItems: Buffer[]): Buffer {
  const body = Buffer.concat(encodedItems);
  return Buffer.concat([lengthPrefix(SHORT_LIST, body.length), body]);
}

function lengthPrefix(offset: number, length: number): Buffer {
  if (length <= MAX_SHORT_LENGTH) return Buffer.from([offset + length]);
  const lengthBytes = integer(BigInt(length));
  return Buffer.concat([Buffer.from([offset + MAX_SHORT_LENGTH + lengthBytes.length]), lengthBytes]);
}
