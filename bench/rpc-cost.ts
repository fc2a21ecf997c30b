/**
 * What the service costs a node that bills per call: every JSON-RPC call the process sends is counted by
 * an HTTP proxy in front of the node (batches counted per call), first while the service idles (no
 * requests, no new blocks), then over 200 transfers at concurrency 10, and until those are settled.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Wallet } from "ethers";
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
}

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

const snapshotCounts = (counts: Map<string, number>) => Object.fromEntries(counts);
const difference = (after: Record<string, number>, before: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([method, count]) => [method, count - (before[method] ?? 0)] as const).filter(([, count]) => count > 0));

/** Idles the service for `idleSeconds`, then sends `transfers` at `concurrency` through it, counting node calls. */
export async function measureRpcCost(idleSeconds: number, transfers: number, concurrency: number): Promise<RpcCost> {
  const node = await startAnvil();
  const proxy = await startCountingProxy(node.rpcUrl);
  try {
    const demo = await setUpDemoChain(node.rpcUrl);
    const service = await startBenchService(proxy.url, demo);
    try {
      // Startup (connecting, the first snapshot, reconciliation) is not idling.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const idleStart = snapshotCounts(proxy.counts);
      await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1_000));
      const idleByMethod = difference(snapshotCounts(proxy.counts), idleStart);
      const idleCalls = Object.values(idleByMethod).reduce((sum, count) => sum + count, 0);

      const before = snapshotCounts(proxy.counts);
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
      const sendingByMethod = difference(snapshotCounts(proxy.counts), before);
      const whileSending = Object.values(sendingByMethod).reduce((sum, count) => sum + count, 0);
      // Settled: every transfer mined and released from the ledger, the service back to idle.
      const deadline = Date.now() + 30_000;
      while (service.services.ledger.unminedCount > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const untilSettled = Object.values(difference(snapshotCounts(proxy.counts), before)).reduce((sum, count) => sum + count, 0);
      return {
        idleSeconds,
        idleCallsPerSecond: idleCalls / idleSeconds,
        idleByMethod,
        transfers,
        callsPerTransferWhileSending: whileSending / transfers,
        callsPerTransferUntilSettled: untilSettled / transfers,
        sendingByMethod,
      };
    } finally {
      await service.close();
    }
  } finally {
    await proxy.close();
    await node.stop();
  }
}
