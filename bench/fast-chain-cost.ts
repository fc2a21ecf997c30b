/**
 * npm run bench:fast-chain
 *
 * What the service costs a node that bills per call on a fast chain: node calls a second (counted by a
 * proxy in front of anvil, batches per call) of an idle service, on a chain making a block every 12 s and on
 * one making one every 250 ms (a rollup); then on the 250 ms chain, of a service whose 10 transfers, mined,
 * wait to be final while the finalized tag trails the head by 300 blocks (the proxy answers the tag so, as a
 * rollup's endpoint does). Reads paced by time, not by blocks: the idle cost must not grow with the block
 * rate. Prints one line per case: `RESULT fast-chain <case> calls/s=<X>` and the calls by method.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { JsonRpcProvider, Wallet, toQuantity } from "ethers";
import { request } from "undici";
import { startAnvil } from "../src/dev/anvil.js";
import { setUpDemoChain } from "../src/dev/demo-chain.js";
import { BENCH_API_KEY, startBenchService } from "./measure.js";

const SECONDS = Number(process.env.SECONDS_PER_CASE ?? 30);
const FINALIZED_LAG_BLOCKS = 300;

/** A proxy that counts the calls it forwards, by method, and answers the finalized tag `finalizedLag` blocks behind the head. */
async function startProxy(targetUrl: string, finalizedLag: number | undefined) {
  const counts = new Map<string, number>();
  const direct = new JsonRpcProvider(targetUrl, undefined, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const payload = JSON.parse(Buffer.concat(chunks).toString()) as { method: string; params?: unknown[] } | { method: string; params?: unknown[] }[];
    const calls = Array.isArray(payload) ? payload : [payload];
    for (const call of calls) {
      counts.set(call.method, (counts.get(call.method) ?? 0) + 1);
      if (finalizedLag !== undefined && call.method === "eth_getBlockByNumber" && call.params?.[0] === "finalized") {
        call.params = [toQuantity(Math.max(0, (await direct.getBlockNumber()) - finalizedLag)), call.params[1]];
      }
    }
    const upstream = await request(targetUrl, { method: "POST", body: JSON.stringify(payload), headers: { "content-type": "application/json" } });
    res.writeHead(upstream.statusCode, { "content-type": "application/json" });
    res.end(await upstream.body.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counted: () => Object.fromEntries(counts),
    close: () =>
      new Promise<void>((resolve) => {
        direct.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const difference = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([method, count]) => [method, count - (before[method] ?? 0)] as const).filter(([, count]) => count > 0));
const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, count) => sum + count, 0);

async function measure(name: string, blockTime: string, transfers: number): Promise<void> {
  const node = await startAnvil(["--block-time", blockTime]);
  const proxy = await startProxy(node.rpcUrl, transfers > 0 ? FINALIZED_LAG_BLOCKS : undefined);
  try {
    const demo = await setUpDemoChain(node.rpcUrl);
    const service = await startBenchService(proxy.url, demo);
    try {
      for (let index = 0; index < transfers; index++) {
        const answer = await request(`${service.baseUrl}/transfer`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_API_KEY}` },
          body: JSON.stringify({ toAddress: Wallet.createRandom().address, amount: "0.000001" }),
        });
        if (answer.statusCode !== 200) throw new Error(`transfer answered ${answer.statusCode}: ${await answer.body.text()}`);
        await answer.body.dump();
      }
      // Startup, and the transfers' own sending and mining, are not what is measured.
      const settleBy = Date.now() + 30_000;
      while (service.services.networks[0].ledger.unminedCount > 0 && Date.now() < settleBy) await new Promise((resolve) => setTimeout(resolve, 100));
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const before = proxy.counted();
      await new Promise((resolve) => setTimeout(resolve, SECONDS * 1_000));
      const byMethod = difference(proxy.counted(), before);
      const unfinal = transfers > 0 ? service.services.journal.unfinal().length : 0;
      console.log(`RESULT fast-chain ${name} calls/s=${(total(byMethod) / SECONDS).toFixed(3)} over ${SECONDS} s${transfers > 0 ? ` (${unfinal} of ${transfers} transfers not final at the end)` : ""}; by method ${JSON.stringify(byMethod)}`);
    } finally {
      await service.close();
    }
  } finally {
    await proxy.close();
    await node.stop();
  }
}

await measure("idle-12s-blocks", "12", 0);
await measure("idle-250ms-blocks", "0.25", 0);
await measure("awaiting-finality-250ms-blocks", "0.25", 10);
