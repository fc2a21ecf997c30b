/**
 * A provider's distance for bench/transfer-bench.ts: a JSON-RPC proxy in front of the local node that holds
 * every call half the distance on the way there and half on the way back, as an endpoint 20-100 ms away
 * does. Everything the process sends goes through it (the service's background reads too).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "undici";

export interface DistanceProxy {
  url: string;
  close(): Promise<void>;
}

/** Forwards to `targetUrl` with `roundTripMs` added to each call, half each way. */
export async function startDistanceProxy(targetUrl: string, roundTripMs: number): Promise<DistanceProxy> {
  const upstream = new Pool(targetUrl, { connections: 256 });
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await sleep(roundTripMs / 2);
    try {
      const answer = await upstream.request({ path: "/", method: "POST", body: Buffer.concat(chunks), headers: { "content-type": "application/json" } });
      const body = await answer.body.text();
      await sleep(roundTripMs / 2);
      res.writeHead(answer.statusCode, { "content-type": "application/json" });
      res.end(body);
    } catch {
      res.writeHead(502).end();
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await upstream.close();
    },
  };
}
