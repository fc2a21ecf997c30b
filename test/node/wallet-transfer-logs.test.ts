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
});
