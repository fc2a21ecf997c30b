/** Shared pieces of the benchmarks: the service under test, a fixed-concurrency runner with latency percentiles, RPC counting. */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { JsonRpcProvider } from "ethers";
import { type RunningService, composeService } from "../src/compose.js";
import { type ChainConfig, chainConfigOf, loadConfig } from "../src/config.js";
import type { DemoChain } from "../src/dev/demo-chain.js";
import { bufferedLogDestination, createLogger } from "../src/logger.js";
import { type RunningReplica, startReplica } from "../src/replicas/start-replica.js";
import type { ChainConnection } from "../src/node/connect-chain.js";

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

/** The round in the middle when the rounds are ordered by `ratio` (the upper middle for an even count). */
export function medianRound<T>(rounds: T[], ratio: (round: T) => number): T {
  return [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor(rounds.length / 2)];
}

export function formatRate(result: RunResult): string {
  return `${result.perSecond.toFixed(0).padStart(6)}/s  p50 ${result.p50Ms.toFixed(1).padStart(6)} ms  p99 ${result.p99Ms.toFixed(1).padStart(6)} ms`;
}

/** The API key the benchmarks use. */
export const BENCH_API_KEY = "bench-key-0123456789abcdef";

/**
 * Composes the service as deployed (journal on disk in a fresh folder) against a demo chain, listening
 * on a free port. `close` stops it and removes the journal.
 */
export async function startBenchService(
  rpcUrl: string,
  demo: DemoChain,
  extraEnv: Record<string, string> = {},
): Promise<RunningService & { chain: ChainConnection; baseUrl: string }> {
  const journalDir = mkdtempSync(join(tmpdir(), "bench-journal-"));
  const config = chainConfigOf(loadConfig({
    RPC_URL: rpcUrl,
    PRIVATE_KEY: demo.privateKey,
    TOKEN_ADDRESS: demo.tokenAddress,
    JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
    // The service's default level; its lines go to a file (below), as they would in production.
    LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    API_KEYS: BENCH_API_KEY,
    // The load comes from one key: the rate limit must not be what is measured.
    RATE_LIMIT_MAX: "1000000",
    ...extraEnv,
  }));
  const service = await composeService(config, createLogger(config.logLevel, config, bufferedLogDestination(join(journalDir, "service.log"))));
  await service.app.listen({ host: "127.0.0.1", port: 0 });
  return {
    ...service,
    // RPC_URL: the start stops unless the node answered.
    chain: service.chain as ChainConnection,
    baseUrl: `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`,
    async close() {
      await service.close();
      rmSync(journalDir, { recursive: true, force: true });
    },
  };
}

/** One replica of several on `databaseUrl` (DATABASE_URL), listening on 127.0.0.1; its log goes to a file. */
export async function startBenchReplica(rpcUrl: string, demo: DemoChain, databaseUrl: string, replicaId: string): Promise<RunningReplica & { baseUrl: string }> {
  const logDir = mkdtempSync(join(tmpdir(), "bench-replica-"));
  const config = chainConfigOf(loadConfig({
    RPC_URL: rpcUrl,
    PRIVATE_KEY: demo.privateKey,
    TOKEN_ADDRESS: demo.tokenAddress,
    DATABASE_URL: databaseUrl,
    REPLICA_ID: replicaId,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "info",
    API_KEYS: BENCH_API_KEY,
    RATE_LIMIT_MAX: "1000000",
  })) as ChainConfig & { databaseUrl: string };
  const replica = await startReplica(config, createLogger(config.logLevel, config, bufferedLogDestination(join(logDir, "service.log"))), {
    port: 0,
    host: "127.0.0.1",
    onLeadershipLost: (error) => {
      throw error;
    },
  });
  return {
    ...replica,
    baseUrl: `http://127.0.0.1:${(replica.server.address() as AddressInfo).port}`,
    async close() {
      await replica.close();
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}

export interface LoadOptions {
  url: string;
  path: string;
  body: unknown;
  connections: number;
  /** Either a duration or a number of requests, each with its warm-up. */
  seconds?: number;
  warmupSeconds?: number;
  count?: number;
  warmupCount?: number;
  /** A reply counts as a success only with status 200 and this text in its body. */
  expectBodyIncludes: string;
}

/** Runs the HTTP load generator in a worker thread, with the benchmarks' API key. */
export function loadFromWorker(options: LoadOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./http-load-worker.mjs", import.meta.url), {
      workerData: { ...options, body: JSON.stringify(options.body), authorization: `Bearer ${BENCH_API_KEY}` },
    });
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}
