/**
 * POST /getTransaction for a mined transaction at 50 connections, next to, in the same run: a bare
 * Fastify route returning the same JSON from memory (the ceiling of the HTTP layer), and the node's own
 * eth_getTransactionByHash straight from a client (the baseline). The load comes from a worker thread.
 * Also counts the service's RPC calls per lookup at steady state.
 *
 *   npm run bench:lookup            (SECONDS=5 to change the measuring time per target)
 */
import type { AddressInfo } from "node:net";
import { Wallet } from "ethers";
import Fastify from "fastify";
import { startAnvil } from "../src/dev/anvil.js";
import { setUpDemoChain } from "../src/dev/demo-chain.js";
import { BENCH_API_KEY, type RunResult, countRpcCalls, formatRate, loadFromWorker, startBenchService } from "./measure.js";

const CONNECTIONS = 50;
const SECONDS = Number(process.env.SECONDS ?? 5);
const WARMUP_SECONDS = 1;

function load(url: string, path: string, body: unknown, expectBodyIncludes: string): Promise<RunResult> {
  return loadFromWorker({ url, path, body, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, expectBodyIncludes });
}

const node = await startAnvil();
const demo = await setUpDemoChain(node.rpcUrl);
const service = await startBenchService(node.rpcUrl, demo);
const { app, chain } = service;
const serviceUrl = service.baseUrl;

// One mined transfer to look up (anvil automines).
const authorization = `Bearer ${BENCH_API_KEY}`;
const sent = await app.inject({ method: "POST", url: "/transfer", headers: { authorization }, payload: { toAddress: Wallet.createRandom().address, amount: "1" } });
const hash: string = sent.json().result.hash;
await new Promise((resolve) => setTimeout(resolve, 600));
const expected = (await app.inject({ method: "POST", url: "/getTransaction", headers: { authorization }, payload: { Tx: hash } })).json();
if (!expected.result?.blockNumber) throw new Error("the benchmark transaction is not mined");

// The ceiling: a bare Fastify route answering the same JSON from memory.
const bare = Fastify({ logger: false });
bare.post("/getTransaction", async () => expected);
await bare.listen({ host: "127.0.0.1", port: 0 });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}`;

console.log(`lookups of one mined transaction, ${CONNECTIONS} connections, ${SECONDS} s each after ${WARMUP_SECONDS} s of warm-up\n`);
const rpc = await countRpcCalls(chain.provider);
const serviceResult = await load(serviceUrl, "/getTransaction", { Tx: hash }, hash);
const rpcCalls = rpc.total();
const rpcByMethod = rpc.byMethod();
const bareResult = await load(bareUrl, "/getTransaction", { Tx: hash }, hash);
const nodeResult = await load(node.rpcUrl, "/", { jsonrpc: "2.0", id: 1, method: "eth_getTransactionByHash", params: [hash] }, hash);

console.log(`  service      ${formatRate(serviceResult)}  failures ${serviceResult.failures}`);
console.log(`  bare route   ${formatRate(bareResult)}  failures ${bareResult.failures}`);
console.log(`  node direct  ${formatRate(nodeResult)}  failures ${nodeResult.failures}`);
console.log(`  service / bare route  ${(serviceResult.perSecond / bareResult.perSecond).toFixed(2)}   (target >= 0.70)`);
console.log(`  service / node        ${(serviceResult.perSecond / nodeResult.perSecond).toFixed(2)}   (target >= 2.00)`);
const lookups = serviceResult.count + serviceResult.perSecond * WARMUP_SECONDS;
console.log(`  RPC calls per lookup  ${(rpcCalls / lookups).toFixed(4)}   (${rpcCalls} calls: ${JSON.stringify(rpcByMethod)}; target <= 0.05)`);

await bare.close();
await service.close();
await node.stop();
