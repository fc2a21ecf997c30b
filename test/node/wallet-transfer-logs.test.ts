/** The wallet's Transfer log cache against a scripted node. */
import { describe, expect, it } from "vitest";
import { WalletTransferLogs } from "../../src/node/wallet-transfer-logs.js";
import { fakeChain } from "../helpers/fake-chain.js";

const HASH = `0x${"ab".repeat(32)}`;

describe("WalletTransferLogs", () => {
  it("keeps nothing of a read during which it was told to forget (a reorganisation), and vouches for none of it", async () => {
    let answer: (logs: unknown) => void = () => undefined;
    const { chain, calls } = fakeChain(async ({ method }) => {
      if (method !== "eth_getLogs") throw new Error(`unexpected ${method}`);
      return new Promise((resolve) => (answer = resolve));
    });
    const logs = new WalletTransferLogs(chain);
    const reading = logs.read(100, 110);
    await new Promise((resolve) => setImmediate(resolve));
    logs.forget();
    answer([{ transactionHash: HASH, blockNumber: "0x6a", blockHash: `0x${"cd".repeat(32)}` }]);
    expect((await reading).size).toBe(0);
    // The next read asks the node again, for the whole range.
    const again = logs.read(100, 110);
    await new Promise((resolve) => setImmediate(resolve));
    answer([{ transactionHash: HASH, blockNumber: "0x6a", blockHash: `0x${"cd".repeat(32)}` }]);
    expect((await again).has(HASH)).toBe(true);
    expect(calls.filter((call) => call.method === "eth_getLogs")).toHaveLength(2);
  });

  it("reads a range longer than a window in windows, as far back as the receipts it spares are worth, and keeps no more than its last read's range", async () => {
    const ranges: [number, number][] = [];
    const { chain } = fakeChain(async ({ method, params }) => {
      if (method !== "eth_getLogs") throw new Error(`unexpected ${method}`);
      const { fromBlock, toBlock } = (params as [{ fromBlock: string; toBlock: string }])[0];
      ranges.push([Number(fromBlock), Number(toBlock)]);
      // One transfer logged in every tenth block.
      return Array.from({ length: Number(toBlock) - Number(fromBlock) + 1 }, (_, index) => Number(fromBlock) + index)
        .filter((block) => block % 10 === 0)
        .map((block) => ({ transactionHash: `0x${block.toString(16).padStart(64, "0")}`, blockNumber: `0x${block.toString(16)}`, blockHash: `0x${"cd".repeat(32)}` }));
    });
    const hashAt = (block: number) => `0x${block.toString(16).padStart(64, "0")}`;
    const logs = new WalletTransferLogs(chain);
    // 600 blocks back, for 100 transfers: the whole range, a window a call, each block once.
    const all = await logs.read(1_000, 1_600, 100);
    expect(ranges).toEqual([
      [1_000, 1_128],
      [1_129, 1_257],
      [1_258, 1_386],
      [1_387, 1_515],
      [1_516, 1_600],
    ]);
    expect(all.has(hashAt(1_000))).toBe(true);
    expect(all.has(hashAt(1_600))).toBe(true);
    // The next read fetches only the new blocks, and keeps nothing below its own range.
    ranges.length = 0;
    const next = await logs.read(1_472, 1_700, 100);
    expect(ranges).toEqual([[1_601, 1_700]]);
    expect(next.has(hashAt(1_480))).toBe(true);
    expect(next.has(hashAt(1_470))).toBe(false);
    // What a read returned is what the logs keep: a reorganisation's forget() empties it under its reader.
    logs.forget();
    expect(next.size).toBe(0);
    // For two transfers, one window: the older blocks are left to their receipts.
    ranges.length = 0;
    logs.forget();
    const few = await logs.read(1_000, 1_600, 2);
    expect(ranges).toEqual([[1_472, 1_600]]);
    expect(few.has(hashAt(1_000))).toBe(false);
  });

  it("reads afresh without taking or emptying what the lane keeps, whatever forget() happens meanwhile", async () => {
    let answer: (logs: unknown) => void = () => undefined;
    const { chain, calls } = fakeChain(async ({ method }) => {
      if (method !== "eth_getLogs") throw new Error(`unexpected ${method}`);
      return new Promise((resolve) => (answer = resolve));
    });
    const logs = new WalletTransferLogs(chain);
    const kept = logs.read(100, 110);
    await new Promise((resolve) => setImmediate(resolve));
    answer([{ transactionHash: HASH, blockNumber: "0x6a", blockHash: `0x${"cd".repeat(32)}` }]);
    expect((await kept).has(HASH)).toBe(true);
    const afresh = logs.readAfresh(100, 110);
    await new Promise((resolve) => setImmediate(resolve));
    logs.forget();
    answer([{ transactionHash: HASH, blockNumber: "0x6a", blockHash: `0x${"ef".repeat(32)}` }]);
    expect((await afresh).get(HASH)?.blockHash).toBe(`0x${"ef".repeat(32)}`);
    expect(calls.filter((call) => call.method === "eth_getLogs")).toHaveLength(2);
  });
});
