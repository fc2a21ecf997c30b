/**
 * One chain behind several RPC endpoints (fault-injecting proxies in front of one real node), as a team
 * runs the service with two or three providers: one endpoint dies in the middle of a burst, one answers
 * HTTP 5xx or 429 for a while, one follows the chain 10 blocks behind, one's receipts lag 8 s. Clients see
 * none of it: every transfer is answered 200 and paid exactly once, lookups never trail the chain, and no
 * money decision reads the endpoint that lags.
 */
import { type TestContext, describe, expect, it } from "vitest";
import { type BehindNode, watchBehindNode } from "../helpers/behind-node.js";
import { type LaggingFleet, watchLaggingFleet } from "../helpers/lagging-fleet.js";
import { AUTHORIZATION, type MultiProxiedService, postJson, startServiceBehindProxies } from "../helpers/service.js";
import { waitUntil } from "../helpers/wait-until.js";
import { NODE_KINDS, type NodeKind, type TestChain, freshAddress, startTestChainOn, tokenBalanceOf } from "../helpers/test-chain.js";
import { PROBE_AFTER_MS } from "../../src/node/endpoint-health.js";

interface Asked {
  toAddress: string;
  units: bigint;
}

/** Transfers of 1, 2, 3 ... tokens to fresh addresses, `concurrency` at a time; `onAnswer` sees each answer's count. */
async function sendBurst(proxied: MultiProxiedService, count: number, concurrency: number, onAnswer: (answered: number) => void = () => {}) {
  const asked: Asked[] = Array.from({ length: count }, (_, index) => ({ toAddress: freshAddress(), units: BigInt((index % 5) + 1) * 10n ** 18n }));
  const statuses: { status: number; raw: string }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < asked.length) {
      const { toAddress, units } = asked[next++];
      const reply = await postJson(proxied.service.app, "/transfer", { toAddress, amount: String(units / 10n ** 18n) });
      statuses.push({ status: reply.statusCode, raw: reply.raw });
      onAnswer(statuses.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { asked, statuses };
}

/** Every transfer settled by the service, then each recipient paid exactly what was asked, and nothing more left the wallet. */
async function expectPaidExactlyOnce(chain: TestChain, proxied: MultiProxiedService, asked: Asked[], spentBefore: bigint, nonceBefore: number) {
  const { journal } = proxied.service.services;
  await waitUntil(() => journal.unsettled().length === 0 && journal.usedUnverified().length === 0, 90_000, "every transfer verified mined");
  const wallet = chain.demo.walletAddress;
  const paid = await Promise.all(asked.map(({ toAddress }) => tokenBalanceOf(chain, toAddress)));
  expect(paid).toEqual(asked.map(({ units }) => units));
  expect(spentBefore - (await tokenBalanceOf(chain, wallet))).toBe(asked.reduce((sum, { units }) => sum + units, 0n));
  expect(await chain.provider.getTransactionCount(wallet, "latest")).toBe(nonceBefore + asked.length);
}

async function getJson(proxied: MultiProxiedService, url: string): Promise<{ statusCode: number; body: any }> {
  const response = await proxied.service.app.inject({ method: "GET", url, headers: AUTHORIZATION });
  return { statusCode: response.statusCode, body: JSON.parse(response.body) };
}

/** A chain of `kind` mining a block a second, stopped when the case that started it ends. */
async function startChainMiningEverySecond(kind: NodeKind, onTestFinished: TestContext["onTestFinished"]): Promise<TestChain> {
  const chain = await startTestChainOn(kind);
  onTestFinished(() => chain.stop());
  await chain.provider.send("evm_setAutomine", [false]);
  // Anvil counts the interval in seconds, Hardhat Network in milliseconds.
  await chain.provider.send("evm_setIntervalMining", [kind === "anvil" ? 1 : 1_000]);
  return chain;
}

// Each case starts its own chain, proxies and service (stopped as it ends): the cases run side by side,
// as the suites do, up to vitest's maxConcurrency at a time; most of their time goes on waiting for blocks.
describe.concurrent.each(NODE_KINDS)("three endpoints for one chain (%s)", (kind) => {
  it("one killed in the middle of a 200-transfer burst at concurrency 50: every transfer answered 200 and paid exactly once", async ({ onTestFinished }) => {
    const chain = await startChainMiningEverySecond(kind, onTestFinished);
    const proxied = await startServiceBehindProxies(chain.target, 3, { REBROADCAST_AFTER_MS: "2000", MAX_IN_FLIGHT_PER_LANE: "256" });
    onTestFinished(() => proxied.close());
    const spentBefore = await tokenBalanceOf(chain, chain.demo.walletAddress);
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
    const doomed = proxied.proxies[0];
    let killed: Promise<void> | undefined;
    const { asked, statuses } = await sendBurst(proxied, 200, 50, (answered) => {
      if (answered === 60) killed = doomed.goDown();
    });
    await killed;
    expect(statuses.filter(({ status }) => status !== 200)).toEqual([]);
    await expectPaidExactlyOnce(chain, proxied, asked, spentBefore, nonceBefore);
    const wallet = await getJson(proxied, "/wallet");
    expect(wallet.body.rpcEndpoints.map((endpoint: { state: string }) => endpoint.state)).toEqual(["failing", "in", "in"]);
    const ready = await proxied.service.app.inject({ method: "GET", url: "/ready" });
    expect(ready.statusCode).toBe(200);
    expect(Object.values(JSON.parse(ready.body).endpoints)).toEqual([expect.stringMatching(/^left out, failing/), "in", "in"]);
  }, 240_000);
});

describe.concurrent("endpoints that fail, lag or trail (anvil, a block a second)", () => {
  it("one answering HTTP 500 and one 429: transfers answered 200 and paid once through the third; both back in rotation once well", async ({ onTestFinished }) => {
    const chain = await startChainMiningEverySecond("anvil", onTestFinished);
    const proxied = await startServiceBehindProxies(chain.target, 3, { REBROADCAST_AFTER_MS: "2000" });
    onTestFinished(() => proxied.close());
    const [failing, limited] = proxied.proxies;
    failing.fault = { kind: "http-500" };
    limited.fault = { kind: "script", answer: () => ({ error: { code: -32005, message: "Your app has exceeded its compute units per second capacity" } }) };
    const spentBefore = await tokenBalanceOf(chain, chain.demo.walletAddress);
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
    const { asked, statuses } = await sendBurst(proxied, 20, 5);
    expect(statuses.filter(({ status }) => status !== 200)).toEqual([]);
    await expectPaidExactlyOnce(chain, proxied, asked, spentBefore, nonceBefore);
    const metrics = (await proxied.service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body;
    expect(metrics).toMatch(/^rpc_endpoints_healthy\{network="31337"\} 1$/m);
    expect(metrics).toMatch(new RegExp(`^rpc_endpoint_up\\{network="31337",endpoint="${failing.url}"\\} 0$`, "m"));

    failing.fault = undefined;
    limited.fault = undefined;
    await waitUntil(
      async () => (await getJson(proxied, "/wallet")).body.rpcEndpoints.every((endpoint: { state: string }) => endpoint.state === "in"),
      PROBE_AFTER_MS + 15_000,
      "both endpoints back in rotation",
    );
  }, 120_000);

  it("one refusing every broadcast as 'insufficient funds', the other taking it and answering 'nonce too low': no 417, every transfer paid once", async ({ onTestFinished }) => {
    const chain = await startChainMiningEverySecond("anvil", onTestFinished);
    const proxied = await startServiceBehindProxies(chain.target, 2, { REBROADCAST_AFTER_MS: "2000" });
    onTestFinished(() => proxied.close());
    const [stale, gateway] = proxied.proxies;
    // An endpoint whose backend has a stale balance, listed first (a tie would go to it), and a gateway that
    // passed the transaction on and answers as the backend it retried on, which had mined it.
    stale.fault = { kind: "script", answer: (call) => (call.method === "eth_sendRawTransaction" ? { error: { code: -32000, message: "insufficient funds for gas * price + value" } } : undefined) };
    gateway.fault = { kind: "script", answer: (call) => (call.method === "eth_sendRawTransaction" ? { errorAfterForward: { code: -32000, message: "nonce too low" } } : undefined) };
    const spentBefore = await tokenBalanceOf(chain, chain.demo.walletAddress);
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
    const { asked, statuses } = await sendBurst(proxied, 16, 8);
    expect(statuses.filter(({ status }) => status !== 200)).toEqual([]);
    stale.fault = undefined;
    gateway.fault = undefined;
    await expectPaidExactlyOnce(chain, proxied, asked, spentBefore, nonceBefore);
  }, 120_000);

  it("one endpoint that takes each transaction and answers 'transaction underpriced' (ganache's words for bytes it holds): no 417, every transfer paid once", async ({ onTestFinished }) => {
    const chain = await startChainMiningEverySecond("anvil", onTestFinished);
    const proxied = await startServiceBehindProxies(chain.target, 1, { REBROADCAST_AFTER_MS: "2000" });
    onTestFinished(() => proxied.close());
    const [node] = proxied.proxies;
    node.fault = { kind: "script", answer: (call) => (call.method === "eth_sendRawTransaction" ? { errorAfterForward: { code: -32003, message: "transaction underpriced" } } : undefined) };
    const spentBefore = await tokenBalanceOf(chain, chain.demo.walletAddress);
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
    const { asked, statuses } = await sendBurst(proxied, 8, 4);
    expect(statuses.filter(({ status }) => status !== 200)).toEqual([]);
    node.fault = undefined;
    await expectPaidExactlyOnce(chain, proxied, asked, spentBefore, nonceBefore);
  }, 120_000);

  it("one 10 blocks behind: no lookup answers fewer confirmations than the chain shows minus one, and no money decision reads it", async ({ onTestFinished }) => {
    const chain = await startChainMiningEverySecond("anvil", onTestFinished);
    await chain.provider.send("anvil_mine", ["0x14"]);
    const behind: BehindNode = watchBehindNode(chain.rpcUrl, 10);
    onTestFinished(() => behind.stop());
    await behind.ready;
    // The lagging endpoint first: the preferred one, were it not behind.
    const proxied = await startServiceBehindProxies(chain.target, 3, { REBROADCAST_AFTER_MS: "2000" }, ([first]) => {
      first.fault = { kind: "script", answer: (call) => behind.answer(call) };
    });
    onTestFinished(() => proxied.close());
    const [lagging] = proxied.proxies;
    // Asked for its head at startup, it was left out there and then.
    expect(lagging.calls).toEqual(new Map([["eth_chainId", 1], ["eth_blockNumber", 1]]));
    const [report] = (await getJson(proxied, "/wallet")).body.rpcEndpoints;
    expect(report.state).toBe("lagging");
    expect(report.headLagBlocks).toBeGreaterThan(5);
    const callsWhenLeftOut = new Map(lagging.calls);
    const spentBefore = await tokenBalanceOf(chain, chain.demo.walletAddress);
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");

    const { asked, statuses } = await sendBurst(proxied, 10, 5);
    expect(statuses.filter(({ status }) => status !== 200)).toEqual([]);
    const hashes = statuses.map(({ raw }) => JSON.parse(raw).result.hash as string);
    const until = Date.now() + 10_000;
    let lookups = 0;
    while (Date.now() < until) {
      for (const hash of hashes) {
        const reply = await postJson(proxied.service.app, "/getTransaction", { Tx: hash });
        expect(reply.statusCode).toBe(200);
        const receipt = await chain.provider.getTransactionReceipt(hash);
        const truth = receipt ? (await chain.provider.getBlockNumber()) - receipt.blockNumber + 1 : 0;
        expect(reply.body.result.confirmations, `${hash}: the chain shows ${truth}`).toBeGreaterThanOrEqual(truth - 1);
        lookups++;
      }
    }
    expect(lookups).toBeGreaterThan(20);
    await expectPaidExactlyOnce(chain, proxied, asked, spentBefore, nonceBefore);
    // Since it was left out, the endpoint behind was only probed for its head.
    const since = [...lagging.calls].filter(([method, count]) => count > (callsWhenLeftOut.get(method) ?? 0)).map(([method]) => method);
    expect(since.filter((method) => method !== "eth_blockNumber")).toEqual([]);
  }, 120_000);
});

describe.concurrent("an endpoint whose receipts, lookups and logs lag 8 s, first of three (hardhat, a block a second)", () => {
  it("16 concurrent transfers: every one answered 200 and paid exactly once", async ({ onTestFinished }) => {
    const chain = await startChainMiningEverySecond("hardhat", onTestFinished);
    const fleet: LaggingFleet = watchLaggingFleet(chain.rpcUrl);
    onTestFinished(() => fleet.stop());
    const proxied = await startServiceBehindProxies(chain.target, 3, { REBROADCAST_AFTER_MS: "500", CHAIN_REFRESH_INTERVAL_MS: "200" });
    onTestFinished(() => proxied.close());
    proxied.proxies[0].fault = { kind: "script", answer: (call) => fleet.answer(call, 8_000) };
    const spentBefore = await tokenBalanceOf(chain, chain.demo.walletAddress);
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
    const { asked, statuses } = await sendBurst(proxied, 16, 16);
    expect(statuses.filter(({ status }) => status !== 200)).toEqual([]);
    await expectPaidExactlyOnce(chain, proxied, asked, spentBefore, nonceBefore);
  }, 120_000);
});
