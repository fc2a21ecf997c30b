// Load generator for the benchmarks, run in a worker thread so that it does not share the event loop of
// the server it measures. Sends `body` to `url` over `connections` keep-alive connections, either for
// `seconds` or for `count` requests (after a warm-up of `warmupSeconds` or `warmupCount`), then reports
// the request count, failures and latency percentiles.
import { parentPort, workerData } from "node:worker_threads";
import { Pool } from "undici";

const { url, path, body, authorization, connections, seconds, count, warmupSeconds = 0, warmupCount = 0, expectBodyIncludes } = workerData;
const pool = new Pool(url, { connections, pipelining: 1 });

async function run(limit, record) {
  const latencies = [];
  let failures = 0;
  let started = 0;
  const deadline = limit.seconds === undefined ? Number.POSITIVE_INFINITY : performance.now() + limit.seconds * 1000;
  const more = () => (limit.count === undefined ? performance.now() < deadline : started < limit.count);
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (more()) {
        started++;
        const begin = performance.now();
        try {
          const response = await pool.request({ path, method: "POST", headers: { "content-type": "application/json", authorization }, body });
          const text = await response.body.text();
          if (response.statusCode !== 200 || !text.includes(expectBodyIncludes)) failures++;
        } catch {
          failures++;
        }
        if (record) latencies.push(performance.now() - begin);
      }
    }),
  );
  return { latencies, failures };
}

await run(count === undefined ? { seconds: warmupSeconds } : { count: warmupCount }, false);
const started = performance.now();
const { latencies, failures } = await run(count === undefined ? { seconds } : { count }, true);
const elapsed = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const percentile = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
await pool.close();
parentPort.postMessage({ count: latencies.length, failures, seconds: elapsed, perSecond: latencies.length / elapsed, p50Ms: percentile(50), p99Ms: percentile(99) });
