import { SigningKey, Transaction, Wallet, getAddress, hexlify, keccak256 } from "ethers";
import { describe, expect, it } from "vitest";
import { signedTransactionBytes, unsignedTransactionBytes } from "../../src/send-path/transaction-bytes.js";
import { signWalletTransaction } from "../../src/send-path/wallet-transaction.js";
import { toV5TransferRecord } from "../../src/wire/v5-record.js";

const key = new SigningKey(keccak256("0x01"));
const wallet = new Wallet(key);

/** A seeded generator, so that a failing case is the same case on the next run. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomBytes(random: () => number, length: number): Uint8Array {
  return Uint8Array.from({ length }, () => Math.floor(random() * 256));
}

/** An integer of 0 to `maxBytes` bytes, often at the RLP edges (0, 0x7f, 0x80, whole bytes of 0xff). */
function randomInteger(random: () => number, maxBytes: number): bigint {
  const edges = [0n, 1n, 0x7fn, 0x80n, 0xffn, 0x100n, 2n ** BigInt(8 * maxBytes) - 1n];
  if (random() < 0.3) return edges[Math.floor(random() * edges.length)];
  const bytes = randomBytes(random, Math.floor(random() * (maxBytes + 1)));
  return bytes.length === 0 ? 0n : BigInt(hexlify(bytes));
}

/** Data lengths around RLP's short/long boundaries, a token transfer's 68 bytes and a long payout call. */
const DATA_LENGTHS = [0, 1, 1, 54, 55, 56, 68, 255, 256, 1_000, 70_000];

function randomTransaction(random: () => number, type: 0 | 2): Transaction {
  const dataLength = DATA_LENGTHS[Math.floor(random() * DATA_LENGTHS.length)];
  const common = {
    chainId: [1n, 10n, 56n, 31337n, 2n ** 40n + 7n][Math.floor(random() * 5)],
    nonce: Number(randomInteger(random, 4) % 2n ** 32n),
    gasLimit: randomInteger(random, 8),
    to: getAddress(hexlify(randomBytes(random, 20))),
    value: randomInteger(random, 32),
    data: hexlify(randomBytes(random, dataLength)),
  };
  // ethers refuses a priority fee above the fee cap, as nodes do.
  const maxFeePerGas = randomInteger(random, 32);
  const maxPriorityFeePerGas = random() < 0.2 ? maxFeePerGas : randomInteger(random, 32) % (maxFeePerGas + 1n);
  return type === 2
    ? Transaction.from({ ...common, type: 2, maxFeePerGas, maxPriorityFeePerGas, accessList: [] })
    : Transaction.from({ ...common, type: 0, gasPrice: randomInteger(random, 32) });
}

function hex(bytes: Buffer): string {
  return `0x${bytes.toString("hex")}`;
}

describe("the bytes of the wallet's transactions", () => {
  for (const type of [2, 0] as const) {
    it(`type ${type}: unsigned and signed bytes are ethers' own, byte for byte, for 400 seeded transactions`, () => {
      const random = seededRandom(type === 2 ? 20261128 : 1128);
      for (let i = 0; i < 400; i++) {
        const transaction = randomTransaction(random, type);
        const unsigned = unsignedTransactionBytes(transaction);
        expect(hex(unsigned), `case ${i}`).toBe(transaction.unsignedSerialized);
        const signature = key.sign(keccak256(unsigned));
        transaction.signature = signature;
        expect(hex(signedTransactionBytes(transaction, signature)), `case ${i}`).toBe(transaction.serialized);
      }
    });
  }

  it("a signature whose r or s starts with a zero byte is encoded without it, as ethers does", () => {
    const transaction = Transaction.from({ type: 2, chainId: 1n, nonce: 0, gasLimit: 60_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, to: wallet.address, value: 0n, data: "0x", accessList: [] });
    const legacy = Transaction.from({ type: 0, chainId: 1n, nonce: 0, gasLimit: 60_000n, gasPrice: 2n, to: wallet.address, value: 0n, data: "0x" });
    let found = 0;
    for (let nonce = 0; nonce < 20_000 && found < 2; nonce++) {
      transaction.nonce = nonce;
      const signature = key.sign(transaction.unsignedHash);
      if (!signature.r.startsWith("0x00") && !signature.s.startsWith("0x00")) continue;
      found++;
      transaction.signature = signature;
      expect(hex(signedTransactionBytes(transaction, signature))).toBe(transaction.serialized);
      legacy.nonce = nonce;
      legacy.signature = signature;
      expect(hex(signedTransactionBytes(legacy, signature))).toBe(legacy.serialized);
    }
    expect(found).toBe(2);
  });

  it("refuses what the wallet never signs instead of encoding it wrongly: an access list, another type, a number where a bigint belongs", () => {
    const withAccessList = Transaction.from({ type: 2, chainId: 1n, nonce: 0, gasLimit: 1n, to: wallet.address, accessList: [{ address: wallet.address, storageKeys: [] }] });
    expect(() => unsignedTransactionBytes(withAccessList)).toThrow(/no access list/);
    const accessListType = Transaction.from({ type: 1, chainId: 1n, nonce: 0, gasLimit: 1n, to: wallet.address });
    expect(() => unsignedTransactionBytes(accessListType)).toThrow(/type 2 or 0, not 1/);
    const numberValue = { type: 0, chainId: 1n, nonce: 0, gasLimit: 21_000n, gasPrice: 1n, maxFeePerGas: null, maxPriorityFeePerGas: null, to: wallet.address, value: 0, data: "0x", accessList: null };
    expect(() => unsignedTransactionBytes(numberValue as never)).toThrow(/must be a bigint, not number/);
  });

  it("signWalletTransaction: ethers' bytes and hash, fields that recover the wallet, and the v5 record of ethers' own Transaction, byte for byte", async () => {
    const chain = { chainId: 31337n, wallet: { address: wallet.address }, signer: { sign: async (digest: string) => key.sign(digest) } };
    // As a caller may hand them: an address in lower case, data in upper case.
    const token = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
    const call = { nonce: 7, to: token.toLowerCase(), data: `0xA9059CBB${"00".repeat(12)}${"AB".repeat(20)}${"00".repeat(31)}01`, gasLimit: 51_234n };
    const feeChoices = [{ type: 2, maxFeePerGas: 3_000_000_000n, maxPriorityFeePerGas: 1n } as const, { type: 0, gasPrice: 1_000_000_000n } as const];
    for (const fees of feeChoices) {
      const signed = await signWalletTransaction(chain as never, call, fees);
      const parsed = Transaction.from(signed.rawTransaction);
      expect(signed.hash).toBe(parsed.hash);
      expect(parsed.from).toBe(wallet.address);
      const { type, chainId, nonce, gasLimit, gasPrice, maxFeePerGas, maxPriorityFeePerGas, to, value, data, accessList } = parsed;
      expect({ ...signed.transaction, signature: null }).toEqual({ type, chainId, nonce, gasLimit, gasPrice, maxFeePerGas, maxPriorityFeePerGas, to, value, data, accessList, signature: null });
      expect(signed.transaction.to).toBe(token);
      const ours = JSON.stringify(toV5TransferRecord(signed));
      expect(ours).toBe(JSON.stringify(toV5TransferRecord({ transaction: parsed, hash: parsed.hash as string, from: wallet.address })));
    }
  });

  it("signWalletTransaction refuses what ethers refused: a priority fee above the fee cap, a nonce that is not a whole number", async () => {
    const chain = { chainId: 1n, wallet: { address: wallet.address }, signer: { sign: async (digest: string) => key.sign(digest) } };
    const call = { nonce: 0, to: wallet.address, data: "0x", gasLimit: 21_000n };
    await expect(signWalletTransaction(chain as never, call, { type: 2, maxFeePerGas: 1n, maxPriorityFeePerGas: 2n })).rejects.toThrow(/priorityFee cannot be more than maxFee/);
    await expect(signWalletTransaction(chain as never, { ...call, nonce: 1.5 }, { type: 0, gasPrice: 1n })).rejects.toThrow(/invalid nonce/);
    await expect(signWalletTransaction(chain as never, { ...call, to: "0xnot-an-address" }, { type: 0, gasPrice: 1n })).rejects.toThrow(/invalid address/);
  });
});
