/** Shared pieces of the benchmarks: a fixed-concurrency runner with latency percentiles, and RPC counting. */
import type { JsonRpcProvider } from "ethers";

export interface RunResult {
  count: number;
  failures: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * Runs `job` `count` times with `concurrency` workers; a job returns false (or throws) on failure.
 * The first `warmup` jobs run before the clock starts (JIT, connection pools, first reads).
 */
export async function runAtConcurrency(count: number, concurrency: number, job: (index: number) => Promise<boolean>, warmup = 0): Promise<RunResult> {
  if (warmup > 0) await runAtConcurrency(warmup, concurrency, (index) => job(count + index));
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let index = next++; index < count; index = next++) {
        const begin = performance.now();
        const ok = await job(index).catch(() => false);
        latencies.push(performance.now() - begin);
        if (!ok) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { count, failures, seconds, perSecond: count / seconds, p50Ms: percentile(50), p99Ms: percentile(99) };
}

/** Counts the JSON-RPC calls a provider sends, through ethers' own debug events. */
export async function countRpcCalls(provider: JsonRpcProvider): Promise<{ total: () => number; byMethod: () => Record<string, number> }> {
  const byMethod: Record<string, number> = {};
  await provider.on("debug", (event: { action: string; payload?: { method: string } | { method: string }[] }) => {
    if (event.action !== "sendRpcPayload" || !event.payload) return;
    for (const call of Array.isArray(event.payload) ? event.payload : [event.payload]) byMethod[call.method] = (byMethod[call.method] ?? 0) + 1;
  });
  return { total: () => Object.values(byMethod).reduce((sum, n) => sum + n, 0), byMethod: () => ({ ...byMethod }) };
}

export function formatRate(result: RunResult): string {
  return `${result.perSecond.toFixed(0).padStart(6)}/s  p50 ${result.p50Ms.toFixed(1).padStart(6)} ms  p99 ${result.p99Ms.toFixed(1).padStart(6)} ms`;
}
