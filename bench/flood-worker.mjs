// The flood of the flood benchmark, in a worker thread (its own event loop, so that the lookups measured
// in the main thread are not slowed by it): requests with a wrong API key over `connections` keep-alive
// connections for `seconds`, each from the one client address `from`, or, without it, each from an address
// of its own (X-Forwarded-For, which the service trusts with TRUST_PROXY=true), numbered on from `firstClient`.
// With `count`, exactly that many requests instead of a duration. Reports the rate and the answers' statuses.
import { parentPort, workerData } from "node:worker_threads";
import { Pool } from "undici";

const { url, body, connections, seconds, count, from, firstClient = 0 } = workerData;
const pool = new Pool(url, { connections, pipelining: 1 });
// 10.0.0.0/8 and beyond: 2^24 addresses, each used once.
const addressOf = (index) => `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;

const statuses = {};
let sent = 0;
let failures = 0;
const deadline = count === undefined ? performance.now() + seconds * 1000 : Number.POSITIVE_INFINITY;
const more = () => (count === undefined ? performance.now() < deadline : sent < count);
const started = performance.now();
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (more()) {
      const client = from ?? addressOf(firstClient + sent);
      sent++;
      try {
        const response = await pool.request({
          path: "/getTransaction",
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer not-a-key-of-this-service", "x-forwarded-for": client },
          body,
        });
        await response.body.dump();
        statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
      } catch {
        failures++;
      }
    }
  }),
);
const elapsed = (performance.now() - started) / 1000;
await pool.close();
parentPort.postMessage({ sent, perSecond: sent / elapsed, statuses, failures, nextClient: firstClient + sent });
