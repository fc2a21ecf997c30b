/**
 * Every lane's balances and nonce count in one request a block, on real nodes through the service's own
 * provider, and the fallbacks to call-by-call reads an endpoint can force.
 */
import { inspect } from "node:util";
import { Contract, Wallet, parseUnits, toQuantity } from "ethers";
import demoToken from "../../contracts/artifacts/DemoToken.json" with { type: "json" };
import { deployDemoToken } from "../../src/dev/demo-chain.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChainConnection } from "../../src/node/connect-chain.js";
import { createEndpoints, createRpcProvider, endpointSetOf } from "../../src/node/rpc-provider.js";
import { PoolWalletReads } from "../../src/lanes/pool-wallet-reads.js";
import { readFeeBlock, readWalletSnapshot } from "../../src/send-path/wallet-snapshot.js";
import { type ProxyFault, type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.js";
import { NODE_KINDS, type TestChain, addPoolWallets, startTestChainOn, tokenBalanceOf } from "../helpers/test-chain.js";

const POLICY = { tipPercentile: 50, minTip: parseUnits("1", "gwei"), maxFeePerGas: undefined, maxTip: undefined };

/** The pool's connection as the service makes it: the service's provider, through a proxy that counts and misbehaves. */
function poolConnection(chain: TestChain, proxy: RpcProxy, lanes: readonly string[]): ChainConnection {
  const endpoints = createEndpoints({ rpcUrls: [proxy.url], timeoutMs: 5_000, maxInFlight: 16 });
  const set = endpointSetOf(endpoints, 31337n, 1);
  for (const endpoint of endpoints) set.markOnTheChain(endpoint);
  const provider = createRpcProvider(set, proxy.url, { maxCalls: 20, onRefused: () => undefined });
  const laneSigners = lanes.map((address) => ({ address })) as unknown as ChainConnection["laneSigners"];
  return { provider, endpoints: set, wallet: { address: lanes[0] }, laneSigners, tokenAddress: chain.demo.tokenAddress, opStack: false, chainId: 31337n } as unknown as ChainConnection;
}

/** A proxy script that answers the balances call (an eth_call without `to`: creation code) with `answer`, and forwards the rest. */
function answeringCreationCalls(answer: { result: string } | { error: { code: number; message: string } }): ProxyFault {
  return { kind: "script", answer: ({ method, params }) => (method === "eth_call" && !(params[0] as { to?: string }).to ? answer : undefined) };
}

function readsOf(connection: ChainConnection, onCallByCall: (reason: string) => void = () => undefined): PoolWalletReads {
  return new PoolWalletReads(connection, POLICY, onCallByCall);
}

describe.each(NODE_KINDS)("PoolWalletReads on %s", (kind) => {
  let chain: TestChain;
  let proxy: RpcProxy;
  let lanes: string[];

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    proxy = await startRpcProxy(chain.rpcUrl);
    const others = await addPoolWallets(chain, 3, { tokens: 7n, ether: "3" });
    // A lane that has sent one transaction, so that nonce counts differ between lanes.
    const sender = new Wallet(others[1].privateKey, chain.provider);
    await (await sender.sendTransaction({ to: others[2].address, value: 1n })).wait();
    lanes = [chain.demo.walletAddress, ...others.map((wallet) => wallet.address)];
  });
  afterAll(async () => {
    await proxy?.close();
    await chain?.stop();
  });

  it("reads every lane in two requests at a block (the counts, then the balances, the counts again and the fees): the same balances and nonce counts as call by call, shared by the lanes", async () => {
    const connection = poolConnection(chain, proxy, lanes);
    const reads = readsOf(connection);
    const block = await readFeeBlock(connection);
    // The first read is checked against the calls it replaces (once); the second block is read alone.
    await reads.read(lanes[0], block);
    await chain.provider.send(kind === "anvil" ? "anvil_mine" : "hardhat_mine", ["0x1"]);
    const next = await readFeeBlock(connection);
    proxy.calls.clear();
    const requestsBefore = proxy.requests;
    const snapshots = await Promise.all(lanes.map((lane) => reads.read(lane, next)));
    expect(proxy.requests - requestsBefore).toBe(2);
    // One balances call, two nonce counts per lane (before and after the balances, the lower kept), one fee read: 2 + 2 x lanes.
    expect(Object.fromEntries(proxy.calls)).toEqual({ eth_call: 1, eth_getTransactionCount: 2 * lanes.length, eth_feeHistory: 1 });
    for (const [index, lane] of lanes.entries()) {
      const alone = await readWalletSnapshot({ ...connection, wallet: { address: lane } }, POLICY, next);
      expect({ ...snapshots[index], readAt: 0 }).toEqual({ ...alone, readAt: 0 });
    }
    // Against the chain read directly, not through the service's provider.
    expect(snapshots.map((snapshot) => snapshot.tokenBalance)).toEqual(await Promise.all(lanes.map((lane) => tokenBalanceOf(chain, lane))));
    expect(snapshots.slice(1).map((snapshot) => snapshot.tokenBalance)).toEqual(lanes.slice(1).map(() => parseUnits("7", chain.decimals)));
    expect(snapshots.map((snapshot) => snapshot.minedNonceCount).slice(1)).toEqual([0, 1, 0]);
    expect(reads.callByCall).toBeUndefined();
    // A lane asking later for the same block gets that read: no call.
    proxy.calls.clear();
    expect((await reads.read(lanes[2], next)).blockHash).toBe(next.hash);
    expect(proxy.calls.size).toBe(0);
  });

  it("reads every ERC-20 token of the network, one balances call per token, as call by call does (the native coin is the ETH balance)", async () => {
    const second = await deployDemoToken(chain.hotWallet, 6, 1_000n);
    await (await (new Contract(second, demoToken.abi, chain.hotWallet).getFunction("transfer"))(lanes[2], 5_000_000n)).wait();
    const tokens = [
      { symbol: "DEMO", address: chain.demo.tokenAddress, native: false, decimals: 18, mayReturnFalse: false },
      { symbol: "ETH", address: "native", native: true, decimals: 18, mayReturnFalse: false },
      { symbol: "SIX", address: second, native: false, decimals: 6, mayReturnFalse: false },
    ];
    const connection = { ...poolConnection(chain, proxy, lanes), tokens } as ChainConnection;
    const reads = readsOf(connection);
    const block = await readFeeBlock(connection);
    proxy.calls.clear();
    const snapshots = await Promise.all(lanes.map((lane) => reads.read(lane, block)));
    expect(reads.callByCall).toBeUndefined();
    // Two balances calls in the batch, then the first lane alone (its two balanceOf) to check the batch once.
    expect(proxy.calls.get("eth_call")).toBe(2 + 2);
    expect(snapshots.map((snapshot) => snapshot.otherTokenBalances?.get(second.toLowerCase()))).toEqual([1_000n * 10n ** 6n - 5_000_000n, 0n, 5_000_000n, 0n]);
    for (const [index, lane] of lanes.entries()) {
      const alone = await readWalletSnapshot({ ...connection, wallet: { address: lane } }, POLICY, block);
      expect({ ...snapshots[index], readAt: 0 }).toEqual({ ...alone, readAt: 0 });
    }
  });

  it("reads afresh when asked without a block, in one request for lanes that ask together; later asks at that block get it", async () => {
    const connection = poolConnection(chain, proxy, lanes);
    const reads = readsOf(connection);
    const block = await readFeeBlock(connection);
    await reads.read(lanes[0], block);
    // A development node changes a balance without a block: a read "now" sees it, a read at the block kept does not ask.
    await chain.provider.send(kind === "anvil" ? "anvil_setBalance" : "hardhat_setBalance", [lanes[3], "0x2a"]);
    expect((await reads.read(lanes[3], block)).ethBalance).not.toBe(42n);
    const requestsBefore = proxy.requests;
    proxy.calls.clear();
    const now = await Promise.all(lanes.map((lane) => reads.read(lane)));
    expect(now[3].ethBalance).toBe(42n);
    // The latest block's read, and two batches for every lane.
    expect([proxy.requests - requestsBefore, proxy.calls.get("eth_getTransactionCount")]).toEqual([3, 2 * lanes.length]);
    expect((await reads.read(lanes[3], block)).ethBalance).toBe(42n);
  });

  it("reads call by call from then on when the endpoint plainly refuses batches", async () => {
    const connection = poolConnection(chain, proxy, lanes);
    const told: string[] = [];
    const reads = readsOf(connection, (reason) => told.push(reason));
    proxy.refuseBatches = "one-error";
    try {
      const block = await readFeeBlock(connection);
      const snapshot = await reads.read(lanes[1], block);
      expect(snapshot.tokenBalance).toBe(parseUnits("7", chain.decimals));
      expect(told).toEqual(["the endpoint answered 1 of a batch of 4 calls: batch requests are not supported on this plan"]);
      expect(reads.callByCall).toBe(told[0]);
      proxy.calls.clear();
      await reads.read(lanes[3], block);
      expect(proxy.calls.get("eth_getBalance")).toBe(1);
    } finally {
      proxy.refuseBatches = false;
    }
  });

  it("answers every read call by call after a batch failed, and gives batches up after 5 in a row (an endpoint that answers them HTTP 400)", async () => {
    const connection = poolConnection(chain, proxy, lanes);
    const told: string[] = [];
    const reads = readsOf(connection, (reason) => told.push(reason));
    proxy.refuseBatches = "http-400";
    try {
      for (let read = 1; read <= 5; read++) {
        expect((await reads.read(lanes[1])).tokenBalance).toBe(parseUnits("7", chain.decimals));
        expect(reads.callByCall).toBe(read < 5 ? undefined : "5 batches in a row failed where the same reads call by call did not");
      }
      expect(told).toHaveLength(1);
    } finally {
      proxy.refuseBatches = false;
    }
  });

  it("an error for one call of the batch: that read goes call by call, and batches go on", async () => {
    const connection = poolConnection(chain, proxy, lanes);
    const told: string[] = [];
    const reads = readsOf(connection, (reason) => told.push(reason));
    try {
      // Every read refused (a block the node lacks): the calls fail too, and the read fails with the node's words.
      proxy.fault = { kind: "script", answer: () => ({ error: { code: -32000, message: "header not found" } }) };
      const failed = await reads.read(lanes[0]).catch((error: unknown) => error);
      expect(inspect(failed, { depth: 6 })).toMatch(/header not found/);
      // Only the creation call refused: the read is answered call by call.
      proxy.fault = answeringCreationCalls({ error: { code: -32602, message: "missing to address" } });
      expect((await reads.read(lanes[2])).tokenBalance).toBe(parseUnits("7", chain.decimals));
      proxy.fault = undefined;
      // Batches work again (the first is checked once against the calls it replaces), and go on.
      expect((await reads.read(lanes[2])).tokenBalance).toBe(parseUnits("7", chain.decimals));
      proxy.calls.clear();
      expect((await reads.read(lanes[2])).tokenBalance).toBe(parseUnits("7", chain.decimals));
      expect(proxy.calls.get("eth_getBalance")).toBeUndefined();
      expect([reads.callByCall, told]).toEqual([undefined, []]);
    } finally {
      proxy.fault = undefined;
    }
  });

  it("reads call by call from then on when the creation call answers balances other than the calls give", async () => {
    const connection = poolConnection(chain, proxy, lanes);
    const reads = readsOf(connection);
    const block = await readFeeBlock(connection);
    const wrong = `0x${"00".repeat(31)}20${"00".repeat(31)}${toQuantity(2 * lanes.length).slice(2).padStart(2, "0")}${"00".repeat(32 * 2 * lanes.length)}`;
    proxy.fault = answeringCreationCalls({ result: wrong });
    try {
      const snapshot = await reads.read(lanes[1], block);
      expect(snapshot.tokenBalance).toBe(parseUnits("7", chain.decimals));
      expect(reads.callByCall).toMatch(/^the batched balances of 0x[0-9a-fA-F]{40} differ from its balanceOf and eth_getBalance at block \d+$/);
      // An answer that is no list of two balances a wallet: the same.
      const other = readsOf(connection);
      proxy.fault = answeringCreationCalls({ result: "0x6080" });
      expect((await other.read(lanes[1], block)).tokenBalance).toBe(parseUnits("7", chain.decimals));
      expect(other.callByCall).toBe("the node's answer to the balances call is not a balance per wallet");
    } finally {
      proxy.fault = undefined;
    }
  });
});
