/**
 * A flood of requests without a valid API key, as an attacker sends it (npm run bench:flood): from one
 * client address, and from a new address for every request (X-Forwarded-For with TRUST_PROXY=true, as
 * an IPv6 range or a forged header gives), side by side in alternating rounds. Meanwhile a client with a
 * valid key looks a mined transaction up, one request at a time, and its latency is measured. Then
 * 100,000 more clients, and the service's resident memory before and after.
 *
 * Targets (issue #31): the flood from many addresses is served at no less than half the rate of the one
 * from one address; lookups' p99 during it under 100 ms; memory at 100,000 clients under the bound
 * docs/speed.md names. The service runs as `npm start` runs it (node dist/src/server.js, info logging to a
 * file); the flood comes from a worker thread, the lookups from this thread.
 *
 *   npm run bench:flood     (DURATION=5 s per round, ROUNDS=3, CONNECTIONS=50)
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { Wallet } from "ethers";
import { Pool } from "undici";
import { startAnvil } from "../src/dev/anvil.js";
import { freePort } from "../test/helpers/free-port.js";

const DURATION = Number(process.env.DURATION ?? 5);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50);
const CLIENTS = 100_000;
const API_KEY = "flood-bench-key-0123456789";
/** The bound docs/speed.md names for the memory 100,000 clients may add. */
const MEMORY_BOUND_MB = 50;

interface FloodResult {
  sent: number;
  perSecond: number;
  statuses: Record<string, number>;
  failures: number;
  nextClient: number;
}

function flood(url: string, body: string, options: { seconds?: number; count?: number; from?: string; firstClient?: number }): Promise<FloodResult> {
  const worker = new Worker(new URL("./flood-worker.mjs", import.meta.url), { workerData: { url, body, connections: CONNECTIONS, ...options } });
  return new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
}

/** Lookups one after another with a valid key until `until` settles: their latencies (ms). */
async function lookUpUntil(pool: Pool, body: string, until: Promise<unknown>): Promise<{ latencies: number[]; notOk: number }> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies: number[] = [];
  let notOk = 0;
  while (!done) {
    const begin = performance.now();
    const response = await pool.request({ path: "/getTransaction", method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}` }, body });
    await response.body.dump();
    if (response.statusCode !== 200) notOk++;
    latencies.push(performance.now() - begin);
  }
  return { latencies, notOk };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function residentMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((entry) => entry.startsWith("VmRSS:")) as string;
  return Number(line.split(/\s+/)[1]) / 1024;
}

async function startService(env: Record<string, string>, logFile: string): Promise<ChildProcess> {
  const log = openSync(logFile, "w");
  const child = spawn(process.execPath, ["dist/src/server.js"], { env: { ...process.env, ...env }, stdio: ["ignore", log, log] });
  closeSync(log);
  for (const deadline = Date.now() + 60_000; !/"service ready"/.test(readFileSync(logFile, "utf8")); await new Promise((resolve) => setTimeout(resolve, 100))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the service did not start:\n${readFileSync(logFile, "utf8")}`);
  }
  return child;
}

const work = mkdtempSync(join(tmpdir(), "flood-bench-"));
const node = await startAnvil();
let service: ChildProcess | undefined;
try {
  execFileSync("npm", ["run", "-s", "build"], { stdio: "inherit" });
  const port = await freePort();
  service = await startService(
    { RPC_URL: node.rpcUrl, DEMO_SETUP: "true", API_KEYS: `admin:${API_KEY}`, TRUST_PROXY: "true", RATE_LIMIT_MAX: "1000000", LOG_LEVEL: "info", HOST: "127.0.0.1", PORT: String(port), NODE_ENV: "production" },
    join(work, "service.log"),
  );
  const pid = service.pid as number;
  const url = `http://127.0.0.1:${port}`;
  const pool = new Pool(url, { connections: 1 });
  const sent = (await (await fetch(`${url}/transfer`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}` }, body: JSON.stringify({ toAddress: Wallet.createRandom().address, amount: "1" }) })).json()) as {
    result: { hash: string };
  };
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const body = JSON.stringify({ Tx: sent.result.hash });

  console.log(`requests with a wrong API key, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s; meanwhile lookups with a valid key, one at a time\n`);
  const quiet = await lookUpUntil(pool, body, new Promise((resolve) => setTimeout(resolve, DURATION * 1000)));
  let nextClient = 0;
  await flood(url, body, { seconds: 2, from: "192.0.2.1" });
  const runs: Record<"one" | "many", { floods: FloodResult[]; latencies: number[]; notOk: number }> = { one: { floods: [], latencies: [], notOk: 0 }, many: { floods: [], latencies: [], notOk: 0 } };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of ["one", "many"] as const) {
      const flooding = flood(url, body, kind === "one" ? { seconds: DURATION, from: "192.0.2.1" } : { seconds: DURATION, firstClient: nextClient });
      const lookups = await lookUpUntil(pool, body, flooding);
      const result = await flooding;
      if (kind === "many") nextClient = result.nextClient;
      runs[kind].floods.push(result);
      runs[kind].latencies.push(...lookups.latencies);
      runs[kind].notOk += lookups.notOk;
      console.log(`  round ${round}, ${kind === "one" ? "one address  " : "new addresses"}: ${result.perSecond.toFixed(0)}/s, answers ${JSON.stringify(result.statuses)}${result.failures ? `, ${result.failures} failed` : ""}`);
    }
  }
  const median = (floods: FloodResult[]) => [...floods].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(floods.length / 2)].perSecond;
  const lookupFigures = (latencies: number[], notOk: number) => {
    const sorted = [...latencies].sort((a, b) => a - b);
    return `${percentile(sorted, 50).toFixed(1)} / ${percentile(sorted, 99).toFixed(1)} ms (${sorted.length} lookups${notOk ? `, ${notOk} not 200` : ""})`;
  };
  console.log("\n| Flood | Requests a second (median round) | Lookups meanwhile, p50 / p99 |");
  console.log("|---|---|---|");
  console.log(`| none | | ${lookupFigures(quiet.latencies, quiet.notOk)} |`);
  console.log(`| from one address | ${median(runs.one.floods).toFixed(0)} | ${lookupFigures(runs.one.latencies, runs.one.notOk)} |`);
  console.log(`| a new address per request | ${median(runs.many.floods).toFixed(0)} | ${lookupFigures(runs.many.latencies, runs.many.notOk)} |`);
  const ratio = median(runs.many.floods) / median(runs.one.floods);
  const manyP99 = percentile([...runs.many.latencies].sort((a, b) => a - b), 99);
  console.log(`\nnew addresses / one address: ${ratio.toFixed(2)} (target >= 0.50); lookups' p99 during the flood from new addresses: ${manyP99.toFixed(1)} ms (target < 100 ms)`);

  const before = residentMb(pid);
  const more = await flood(url, body, { count: CLIENTS, firstClient: nextClient });
  const after = residentMb(pid);
  console.log(
    `${CLIENTS.toLocaleString("en")} more clients (${more.perSecond.toFixed(0)}/s): resident memory ${before.toFixed(0)} MB before, ${after.toFixed(0)} MB after ` +
      `(+${(after - before).toFixed(1)} MB; bound ${MEMORY_BOUND_MB} MB)`,
  );
  if (ratio < 0.5 || manyP99 >= 100 || after - before > MEMORY_BOUND_MB) process.exitCode = 1;
  await pool.close();
} finally {
  if (service && service.exitCode === null) {
    const exited = new Promise((resolve) => service?.once("exit", resolve));
    service.kill("SIGTERM");
    await exited;
  }
  await node.stop();
  rmSync(work, { recursive: true, force: true });
}
