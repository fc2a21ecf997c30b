/** The serializer against ethers v5's own code: its Formatter for lookups, its parser for sent transactions. */
import { ethers as ethers5 } from "ethers5";
import { Transaction, Wallet } from "ethers";
import { describe, expect, it } from "vitest";
import type { RpcTransaction } from "../../src/lookup/transaction-lookup.js";
import { serializeV5LookupReply, toV5BigNumber, toV5LookupRecord, toV5TransferRecord } from "../../src/wire/v5-record.js";

/** What ethers v5's provider.getTransaction made of the same node answer, with the same head. */
function v5Lookup(raw: RpcTransaction, latestBlockNumber: number): string {
  const tx = new ethers5.providers.Formatter().transactionResponse(structuredClone(raw));
  if (tx.blockNumber == null) tx.confirmations = 0;
  else tx.confirmations = Math.max(1, latestBlockNumber - tx.blockNumber + 1);
  return JSON.stringify(tx);
}

const TYPE2: RpcTransaction = {
  hash: "0xC193F20058868225941BC91A8286D45A4EAC2105BEA5D70F7A09E55C2C411DEB",
  type: "0x2",
  accessList: [],
  blockHash: "0x7479bcc643fe94fe8f742d3adacf2893c3fce8f4c8ce2a47d60fce6941893040",
  blockNumber: "0x4",
  transactionIndex: "0x0",
  from: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  gasPrice: "0x8199b8cd",
  maxPriorityFeePerGas: "0x59682f00",
  maxFeePerGas: "0xb53b9eb0",
  gas: "0x85c4",
  to: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
  value: "0x0",
  nonce: "0x1",
  input: "0xA9059CBB000000000000000000000000000000000000000000000000000000000000dead0000000000000000000000000000000000000000000000000000000000000001",
  r: "0x1fc3c25a9be22a7e69d393e58cdff2a5d11f8b7501fcb84000ef819f66cb21d",
  s: "0x9cd63b58743cfe7868661323c62b27c79123f3914a33d184aca8373f64f550",
  v: "0x1",
  yParity: "0x1",
  chainId: "0x7a69",
};

describe("toV5BigNumber", () => {
  it.each([
    [0n, "0x00"],
    [1n, "0x01"],
    [15n, "0x0f"],
    [256n, "0x0100"],
    [4095n, "0x0fff"],
    [10n ** 18n, "0x0de0b6b3a7640000"],
    [(1n << 256n) - 1n, `0x${"ff".repeat(32)}`],
  ])("%s is %s, as v5 writes it", (value, hex) => {
    expect(toV5BigNumber(value)).toEqual({ type: "BigNumber", hex });
    expect(JSON.stringify(toV5BigNumber(value))).toBe(JSON.stringify(ethers5.BigNumber.from(value.toString())));
  });
});

describe("toV5LookupRecord matches v5's Formatter", () => {
  const cases: [string, RpcTransaction, number][] = [
    ["a mined type-2 transaction with short r and s and upper-case hex", TYPE2, 6],
    ["a head read just before the block arrived", TYPE2, 3],
    ["a pending transaction", { ...TYPE2, blockHash: null, blockNumber: null, transactionIndex: null }, 10],
    ["an all-zero block hash", { ...TYPE2, blockHash: `0x${"00".repeat(32)}` }, 6],
    ["a legacy EIP-155 transaction", { ...TYPE2, type: "0x0", accessList: undefined, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined, v: "0xf4f6", yParity: undefined }, 6],
    ["a pre-EIP-155 transaction without chain id", { ...TYPE2, type: "0x0", accessList: undefined, maxFeePerGas: undefined, maxPriorityFeePerGas: undefined, v: "0x1b", chainId: undefined }, 6],
    ["a node that omits the type", { ...TYPE2, type: undefined }, 6],
    ["a contract creation", { ...TYPE2, to: null }, 6],
    ["a zero address written as 0x0", { ...TYPE2, to: "0x0" }, 6],
    ["a type-1 transaction with an access list", { ...TYPE2, type: "0x1", maxFeePerGas: undefined, maxPriorityFeePerGas: undefined, accessList: [{ address: "0x5fbdb2315678afecb367f032d93f642f64180aa3", storageKeys: [`0x${"AB".repeat(32)}`] }] }, 6],
    ["a node that sends the raw transaction", { ...TYPE2, raw: "0x02F8AA" }, 6],
  ];
  it.each(cases)("%s", (_label, raw, head) => {
    expect(JSON.stringify(toV5LookupRecord(raw, head))).toBe(v5Lookup(raw, head));
  });
});

describe("serializeV5LookupReply", () => {
  it("writes what JSON.stringify writes, also when the same node answer is reused as the head moves", () => {
    const mined = structuredClone(TYPE2);
    for (const head of [4, 12, 13, 103, 1003, 5]) {
      expect(serializeV5LookupReply({ transaction: mined, latestBlockNumber: head })).toBe(JSON.stringify({ result: toV5LookupRecord(mined, head) }));
    }
    const pending = { ...TYPE2, blockHash: null, blockNumber: null, transactionIndex: null };
    expect(serializeV5LookupReply({ transaction: pending, latestBlockNumber: 9 })).toBe(JSON.stringify({ result: toV5LookupRecord(pending, 9) }));
    expect(serializeV5LookupReply(null)).toBe('{"result":null}');
  });
});

describe("toV5TransferRecord matches v5's own parse of the signed transaction", () => {
  it("field for field, key order included", async () => {
    const wallet = Wallet.createRandom();
    for (let attempt = 0; attempt < 20; attempt++) {
      const transaction = Transaction.from({
        type: 2,
        chainId: 31337n,
        nonce: attempt,
        to: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
        value: 0n,
        data: `0xa9059cbb${"00".repeat(12)}${wallet.address.slice(2).toLowerCase()}${(BigInt(attempt) * 10n ** 17n).toString(16).padStart(64, "0")}`,
        gasLimit: 51_620n,
        maxFeePerGas: 2_000_000_000n + BigInt(attempt),
        maxPriorityFeePerGas: 1_000_000_000n,
        accessList: [],
      });
      transaction.signature = wallet.signingKey.sign(transaction.unsignedHash);
      const v5 = ethers5.utils.parseTransaction(transaction.serialized) as ethers5.Transaction & { confirmations?: number };
      v5.confirmations = 0;
      const record = toV5TransferRecord({ transaction, hash: transaction.hash as string, from: wallet.address });
      expect(JSON.stringify(record)).toBe(JSON.stringify(v5));
    }
  });

  it("refuses anything but a signed type-2 transaction", () => {
    const unsigned = Transaction.from({ type: 2, chainId: 1n, to: Wallet.createRandom().address });
    expect(() => toV5TransferRecord({ transaction: unsigned, hash: `0x${"00".repeat(32)}`, from: Wallet.createRandom().address })).toThrow(/signed type-2/);
  });
});
