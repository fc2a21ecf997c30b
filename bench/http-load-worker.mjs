// Load generator for the benchmarks, run in a worker thread so that it does not share a core with the
// server it measures. Sends `body` to `url` over `connections` keep-alive connections for `seconds`,
// then reports the request count, failures and latency percentiles.
import { parentPort, workerData } from "node:worker_threads";
import { Pool } from "undici";

const { url, path, body, authorization, connections, seconds, warmupSeconds, expectBodyIncludes } = workerData;
const pool = new Pool(url, { connections, pipelining: 1 });

async function run(durationMs, record) {
  const latencies = [];
  let failures = 0;
  const deadline = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        try {
          const response = await pool.request({ path, method: "POST", headers: { "content-type": "application/json", authorization }, body });
          const text = await response.body.text();
          if (response.statusCode !== 200 || !text.includes(expectBodyIncludes)) failures++;
        } catch {
          failures++;
        }
        if (record) latencies.push(performance.now() - started);
      }
    }),
  );
  return { latencies, failures };
}

await run(warmupSeconds * 1000, false);
const started = performance.now();
const { latencies, failures } = await run(seconds * 1000, true);
const elapsed = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const percentile = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
await pool.close();
parentPort.postMessage({ count: latencies.length, failures, seconds: elapsed, perSecond: latencies.length / elapsed, p50Ms: percentile(50), p99Ms: percentile(99) });
