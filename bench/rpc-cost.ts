/**
 * What the service costs a node that bills per call: every JSON-RPC call the process sends is counted by
 * an HTTP proxy in front of the node (batches counted per call), first while the service idles (no
 * requests, no new blocks), then over 200 transfers at concurrency 10, and until those are settled; then
 * while a block a second arrives and those transfers wait to be final (anvil's finalized block is 64 below
 * its head, so none is final in that time): what following them costs per new block. With several
 * endpoints (RPC_URL lists one counting proxy per endpoint, all in front of the one node), the figures are
 * the total over all of them, and each endpoint's share is given too.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { JsonRpcProvider, Wallet } from "ethers";
import { request } from "undici";
import { startAnvil } from "../src/dev/anvil.js";
import { setUpDemoChain } from "../src/dev/demo-chain.js";
import { loadFromWorker, startBenchService } from "./measure.js";

export interface RpcCost {
  idleSeconds: number;
  idleCallsPerSecond: number;
  idleByMethod: Record<string, number>;
  transfers: number;
  callsPerTransferWhileSending: number;
  callsPerTransferUntilSettled: number;
  sendingByMethod: Record<string, number>;
  /** Blocks mined one a second while the transfers were not final, and the calls per new block meanwhile. */
  unfinalBlocks: number;
  callsPerNewBlockWhileUnfinal: number;
  unfinalByMethod: Record<string, number>;
  /** Calls each endpoint got in each phase, in the order of RPC_URL. */
  perEndpoint: { idle: number[]; sending: number[]; unfinal: number[] };
}

/** New blocks, one a second, while the transfers wait to be final. */
const UNFINAL_BLOCKS = 20;

interface CountingProxy {
  url: string;
  counts: Map<string, number>;
  total(): number;
  close(): Promise<void>;
}

/** A JSON-RPC proxy that counts the calls it forwards, by method. */
export async function startCountingProxy(targetUrl: string): Promise<CountingProxy> {
  const counts = new Map<string, number>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString();
    const payload = JSON.parse(body) as { method: string } | { method: string }[];
    for (const call of Array.isArray(payload) ? payload : [payload]) counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
    const upstream = await request(targetUrl, { method: "POST", body, headers: { "content-type": "application/json" } });
    res.writeHead(upstream.statusCode, { "content-type": "application/json" });
    res.end(await upstream.body.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    total: () => [...counts.values()].reduce((sum, count) => sum + count, 0),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The calls counted by every proxy together, by method. */
function snapshotCounts(proxies: readonly CountingProxy[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const proxy of proxies) for (const [method, count] of proxy.counts) total[method] = (total[method] ?? 0) + count;
  return total;
}
const difference = (after: Record<string, number>, before: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([method, count]) => [method, count - (before[method] ?? 0)] as const).filter(([, count]) => count > 0));
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((total, count) => total + count, 0);

/** Counts each proxy's calls from now; `calls()` says how many each got since. */
function startCountingEach(proxies: readonly CountingProxy[]): { calls(): number[] } {
  const before = proxies.map((proxy) => proxy.total());
  return { calls: () => proxies.map((proxy, index) => proxy.total() - before[index]) };
}

/**
 * Idles the service for `idleSeconds`, then sends `transfers` at `concurrency` through it, counting node
 * calls; through `endpoints` RPC endpoints (counting proxies) in front of the one node.
 */
export async function measureRpcCost(idleSeconds: number, transfers: number, concurrency: number, endpoints = 1): Promise<RpcCost> {
  const node = await startAnvil();
  const proxies = await Promise.all(Array.from({ length: endpoints }, () => startCountingProxy(node.rpcUrl)));
  try {
    const demo = await setUpDemoChain(node.rpcUrl);
    const service = await startBenchService(proxies.map((proxy) => proxy.url).join(","), demo);
    try {
      // Startup (connecting, the first snapshot, reconciliation) is not idling.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const idleStart = snapshotCounts(proxies);
      const idleEach = startCountingEach(proxies);
      await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1_000));
      const idleByMethod = difference(snapshotCounts(proxies), idleStart);
      const idlePerEndpoint = idleEach.calls();

      const before = snapshotCounts(proxies);
      const sendingEach = startCountingEach(proxies);
      const result = await loadFromWorker({
        url: service.baseUrl,
        path: "/transfer",
        body: { toAddress: Wallet.createRandom().address, amount: "0.000001" },
        connections: concurrency,
        count: transfers,
        warmupCount: 0,
        expectBodyIncludes: '"hash"',
      });
      if (result.failures > 0) throw new Error(`${result.failures} of ${transfers} transfers failed`);
      const sendingByMethod = difference(snapshotCounts(proxies), before);
      const sendingPerEndpoint = sendingEach.calls();
      // Settled: every transfer mined and released from the ledger, the service back to idle.
      const deadline = Date.now() + 30_000;
      while (service.services.networks[0].ledger.unminedCount > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const untilSettled = sum(difference(snapshotCounts(proxies), before));

      // Mined straight at the node, not through the proxies: only the service's calls are counted.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const miner = new JsonRpcProvider(node.rpcUrl, undefined, { staticNetwork: true });
      const unfinalStart = snapshotCounts(proxies);
      const unfinalEach = startCountingEach(proxies);
      for (let block = 0; block < UNFINAL_BLOCKS; block++) {
        await miner.send("evm_mine", []);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      miner.destroy();
      const unfinalByMethod = difference(snapshotCounts(proxies), unfinalStart);
      return {
        idleSeconds,
        idleCallsPerSecond: sum(idleByMethod) / idleSeconds,
        idleByMethod,
        transfers,
        callsPerTransferWhileSending: sum(sendingByMethod) / transfers,
        callsPerTransferUntilSettled: untilSettled / transfers,
        sendingByMethod,
        unfinalBlocks: UNFINAL_BLOCKS,
        callsPerNewBlockWhileUnfinal: sum(unfinalByMethod) / UNFINAL_BLOCKS,
        unfinalByMethod,
        perEndpoint: { idle: idlePerEndpoint, sending: sendingPerEndpoint, unfinal: unfinalEach.calls() },
      };
    } finally {
      await service.close();
    }
  } finally {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await node.stop();
  }
}
