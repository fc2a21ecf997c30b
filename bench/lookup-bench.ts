/**
 * POST /getTransaction for a mined transaction at 50 connections, next to, in the same run: a bare
 * Fastify route returning the same JSON from memory (the ceiling of the HTTP layer), and the node's own
 * eth_getTransactionByHash straight from a client (the baseline). The load comes from a worker thread.
 * Also counts the service's RPC calls per lookup at steady state.
 *
 * This machine's speed drifts by more than the differences measured, so the service and the bare route
 * are measured in alternating rounds and compared round by round; the median round is reported.
 *
 *   npm run bench:lookup            (SECONDS=3 per target and round, ROUNDS=5)
 */
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { Wallet } from "ethers";
import Fastify from "fastify";
import { startAnvil } from "../src/dev/anvil.js";
import { setUpDemoChain } from "../src/dev/demo-chain.js";
import { BENCH_API_KEY, type RunResult, countRpcCalls, formatRate, loadFromWorker, medianRound, startBenchService } from "./measure.js";

const CONNECTIONS = 50;
const SECONDS = Number(process.env.SECONDS ?? 3);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const WARMUP_SECONDS = 1;

/** A load run, with the main thread's busy time per request (where the service and the bare route run). */
async function load(url: string, path: string, body: unknown, expectBodyIncludes: string): Promise<RunResult & { busyMicroseconds: number }> {
  const before = performance.eventLoopUtilization();
  const result = await loadFromWorker({ url, path, body, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, expectBodyIncludes });
  const { utilization } = performance.eventLoopUtilization(before);
  return { ...result, busyMicroseconds: (utilization / result.perSecond) * 1e6 };
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

console.log(`lookups of one mined transaction, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s per target after ${WARMUP_SECONDS} s of warm-up`);
console.log("(µs: main-thread busy time per request, where the service and the bare route both run)\n");
const rpc = await countRpcCalls(chain.provider);
const rounds: { service: RunResult; bare: RunResult }[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  const serviceRound = await load(serviceUrl, "/getTransaction", { Tx: hash }, hash);
  const bareRound = await load(bareUrl, "/getTransaction", { Tx: hash }, hash);
  rounds.push({ service: serviceRound, bare: bareRound });
  const ratio = serviceRound.perSecond / bareRound.perSecond;
  const busy = (run: { busyMicroseconds: number }) => `${run.busyMicroseconds.toFixed(1)} µs`;
  console.log(
    `  round ${round}: service ${serviceRound.perSecond.toFixed(0)}/s (${busy(serviceRound)}), bare route ${bareRound.perSecond.toFixed(0)}/s (${busy(bareRound)}), ratio ${ratio.toFixed(2)}`,
  );
}
const rpcCalls = rpc.total();
const rpcByMethod = rpc.byMethod();
const nodeResult = await load(node.rpcUrl, "/", { jsonrpc: "2.0", id: 1, method: "eth_getTransactionByHash", params: [hash] }, hash);

const median = medianRound(rounds, (round) => round.service.perSecond / round.bare.perSecond);
const failures = rounds.reduce((sum, round) => sum + round.service.failures + round.bare.failures, 0);
console.log(`\nmedian round:`);
console.log(`  service      ${formatRate(median.service)}`);
console.log(`  bare route   ${formatRate(median.bare)}`);
console.log(`  node direct  ${formatRate(nodeResult)}  failures ${nodeResult.failures}`);
console.log(`  failures in all rounds: ${failures}`);
console.log(`  service / bare route  ${(median.service.perSecond / median.bare.perSecond).toFixed(2)}   (target >= 0.70)`);
console.log(`  service / node        ${(median.service.perSecond / nodeResult.perSecond).toFixed(2)}   (target >= 2.00)`);
const lookups = rounds.reduce((sum, round) => sum + round.service.count + round.service.perSecond * WARMUP_SECONDS, 0);
console.log(`  RPC calls per lookup  ${(rpcCalls / lookups).toFixed(4)}   (${rpcCalls} calls: ${JSON.stringify(rpcByMethod)}; target <= 0.05)`);

await bare.close();
await service.close();
await node.stop();
