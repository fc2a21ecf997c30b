/**
 * The wallet pool against a node that keeps at most PENDING_LIMIT pending transactions per sender (as
 * geth's 16 executable slots per account), emulated by a proxy in front of anvil mining a block every
 * BLOCK_TIME seconds. The proxy answers "txpool is full" to a sender's new transaction while that many of
 * its transactions are in the node's pool (sent, not mined), except the sender's next nonce to be mined
 * (a node that kept the transactions above it and refused that one would jam the sender for good).
 *
 * 1. Transfers answered 200 per second, at concurrency CONCURRENCY for SECONDS: one lane, then LANES
 *    lanes, alternating over ROUNDS rounds (a fresh chain each); the median round's ratio is printed.
 * 2. One lane jammed: after a warm-up, the proxy drops everything the first lane sends (answers its hash,
 *    forwards nothing), for JAM_SECONDS. Prints the share of the 200s the other lanes carried, then heals
 *    the node and checks that every transfer answered 200 is mined.
 *
 * 3. Idle: the node calls a second of one lane and of LANES lanes, with no requests and no new blocks,
 *    over IDLE_SECONDS (target for 4 lanes: at most 0.30).
 * 4. An automining node without a pending limit: one lane, then LANES lanes, TRANSFERS transfers at
 *    CONCURRENCY each, three alternating rounds (target: the lanes at least as fast as one wallet).
 *
 *   npm run bench:pool     (LANES=4 CONCURRENCY=50 SECONDS=20 ROUNDS=2 JAM_SECONDS=60 BLOCK_TIME=1 PENDING_LIMIT=16 IDLE_SECONDS=30
 *                           TRANSFERS=2000; PARTS=idle,limit,jam,automine runs only those named)
 */
import { JsonRpcProvider, Wallet, toBeHex } from "ethers";
import { Pool } from "undici";
import { startAnvil } from "../src/dev/anvil.js";
import { type DemoChain, setUpDemoChain } from "../src/dev/demo-chain.js";
import { ERC20_INTERFACE } from "../src/node/erc20.js";
import { limitPendingPerSender } from "../test/helpers/pending-limit.js";
import { startCountingProxy } from "./rpc-cost.js";
import { type RpcProxy, startRpcProxy } from "../test/helpers/rpc-proxy.js";
import { BENCH_API_KEY, loadFromWorker, startBenchService } from "./measure.js";

const LANES = Number(process.env.LANES ?? 4);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);
const SECONDS = Number(process.env.SECONDS ?? 20);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const JAM_SECONDS = Number(process.env.JAM_SECONDS ?? 60);
const BLOCK_TIME = Number(process.env.BLOCK_TIME ?? 1);
const PENDING_LIMIT = Number(process.env.PENDING_LIMIT ?? 16);
const WARMUP_SECONDS = 5;
const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 30);
const TRANSFERS = Number(process.env.TRANSFERS ?? 2000);
const PARTS = new Set((process.env.PARTS ?? "idle,limit,jam,automine").split(","));

/** A chain mining every BLOCK_TIME s, a demo token, `lanes` funded wallets, and the limiting proxy. */
interface PoolChain {
  rpcUrl: string;
  proxy: RpcProxy;
  provider: JsonRpcProvider;
  demo: DemoChain;
  keys: string[];
  addresses: string[];
  /** While set, everything this sender sends is dropped: answered, never forwarded. */
  jam(sender: string | undefined): void;
  /** Transactions the node refused for a full pool so far (the service sends each again, or answers 417). */
  refusedByNode(): number;
  stop(): Promise<void>;
}

/** With `automine`, anvil mines each transaction at once and the service reaches it directly, without the limit. */
async function startPoolChain(lanes: number, automine = false): Promise<PoolChain> {
  const node = await startAnvil(automine ? [] : ["--block-time", String(BLOCK_TIME)]);
  const demo = await setUpDemoChain(node.rpcUrl, { supply: 10_000_000n });
  const provider = new JsonRpcProvider(node.rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  const first = new Wallet(demo.privateKey, provider);
  const others = Array.from({ length: lanes - 1 }, () => Wallet.createRandom());
  let nonce = await provider.getTransactionCount(first.address, "pending");
  const funding = [];
  for (const wallet of others) {
    await provider.send("anvil_setBalance", [wallet.address, toBeHex(10n ** 21n)]);
    const data = ERC20_INTERFACE.encodeFunctionData("transfer", [wallet.address, 2_000_000n * 10n ** 18n]);
    funding.push(await first.sendTransaction({ to: demo.tokenAddress, data, nonce: nonce++ }));
  }
  await Promise.all(funding.map((sent) => sent.wait()));
  const addresses = [first.address, ...others.map((wallet) => wallet.address)];

  const proxy = await startRpcProxy(node.rpcUrl);
  const limit = limitPendingPerSender(proxy, provider, PENDING_LIMIT);
  return {
    rpcUrl: automine ? node.rpcUrl : proxy.url,
    proxy,
    provider,
    demo,
    keys: [demo.privateKey, ...others.map((wallet) => wallet.privateKey)],
    addresses,
    jam: (sender) => limit.jam(sender),
    refusedByNode: () => limit.refused,
    async stop() {
      await limit.stop();
      await proxy.close();
      provider.destroy();
      await node.stop();
    },
  };
}

interface LoadResult {
  seconds: number;
  /** The hashes answered 200, by sender. */
  sentBy: Map<string, string[]>;
  /** Other answers, by status and code. */
  refused: Record<string, number>;
  /** Transactions the node refused for a full pool. */
  refusedByNode?: number;
}

/** POST /transfer from CONCURRENCY clients for `seconds`; `warmupSeconds` first, not counted. */
async function drive(baseUrl: string, seconds: number, warmupSeconds: number): Promise<LoadResult> {
  const pool = new Pool(baseUrl, { connections: CONCURRENCY });
  const result: LoadResult = { seconds, sentBy: new Map(), refused: {} };
  const started = performance.now();
  const countFrom = started + warmupSeconds * 1000;
  const stopAt = countFrom + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < stopAt) {
        const response = await pool.request({
          path: "/transfer",
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${BENCH_API_KEY}` },
          body: JSON.stringify({ toAddress: Wallet.createRandom().address, amount: "1" }),
        });
        const body = (await response.body.json()) as { result?: { from: string; hash: string }; code?: string };
        if (performance.now() < countFrom) continue;
        if (response.statusCode === 200 && body.result) {
          const hashes = result.sentBy.get(body.result.from) ?? [];
          hashes.push(body.result.hash);
          result.sentBy.set(body.result.from, hashes);
        } else {
          const key = `${response.statusCode} ${body.code}`;
          result.refused[key] = (result.refused[key] ?? 0) + 1;
          // A pool that is full says "retry shortly": a client waits a moment, as it would.
          if (response.statusCode === 503) await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    }),
  );
  await pool.close();
  return result;
}

function sentCount(result: LoadResult): number {
  return [...result.sentBy.values()].reduce((sum, hashes) => sum + hashes.length, 0);
}

async function measureThroughput(lanes: number): Promise<LoadResult> {
  const chain = await startPoolChain(lanes);
  const service = await startBenchService(chain.rpcUrl, chain.demo, { PRIVATE_KEY: chain.keys.join(","), CHAIN_REFRESH_INTERVAL_MS: "250" });
  try {
    return { ...(await drive(service.baseUrl, SECONDS, WARMUP_SECONDS)), refusedByNode: chain.refusedByNode() };
  } finally {
    await service.close();
    await chain.stop();
  }
}

function describe(result: LoadResult): string {
  const perSecond = sentCount(result) / result.seconds;
  const refused = Object.entries(result.refused).map(([key, count]) => `${key} x${count}`).join(", ") || "none";
  return `${perSecond.toFixed(1).padStart(6)}/s answered 200; other answers: ${refused}; refused by the node ("txpool is full", sent again after 500 ms): ${result.refusedByNode ?? 0}`;
}

async function measureJam(): Promise<void> {
  const chain = await startPoolChain(LANES);
  const service = await startBenchService(chain.rpcUrl, chain.demo, { PRIVATE_KEY: chain.keys.join(","), CHAIN_REFRESH_INTERVAL_MS: "250" });
  try {
    await drive(service.baseUrl, WARMUP_SECONDS, 0);
    const [jammedLane] = chain.addresses;
    chain.jam(jammedLane);
    const result = await drive(service.baseUrl, JAM_SECONDS, 0);
    const total = sentCount(result);
    const byJammed = result.sentBy.get(jammedLane)?.length ?? 0;
    console.log(`one lane jammed for ${JAM_SECONDS} s: ${total} transfers answered 200, ${byJammed} by the jammed lane; the others carried ${(((total - byJammed) / total) * 100).toFixed(1)} % (target >= 90 %)`);
    console.log(`  other answers: ${Object.entries(result.refused).map(([key, count]) => `${key} x${count}`).join(", ") || "none"}`);
    chain.jam(undefined);
    // Healed: the service sends the jammed lane's transactions again (REBROADCAST_AFTER_MS) and they are mined.
    const hashes = [...result.sentBy.values()].flat();
    const deadline = Date.now() + 180_000;
    let unmined = hashes;
    while (unmined.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const receipts = await Promise.all(unmined.map((hash) => chain.provider.getTransactionReceipt(hash)));
      unmined = unmined.filter((_hash, index) => receipts[index] === null);
    }
    console.log(`  after the node healed: ${hashes.length - unmined.length} of ${hashes.length} answered 200 mined within 180 s${unmined.length > 0 ? ` (NOT MINED: ${unmined.length})` : ""}`);
  } finally {
    await service.close();
    await chain.stop();
  }
}

/** Node calls a second of an idle service with `lanes` lanes: no requests, no new blocks (automining anvil). */
async function idleCallsPerSecond(lanes: number): Promise<{ perSecond: number; byMethod: Record<string, number> }> {
  const node = await startAnvil();
  const proxy = await startCountingProxy(node.rpcUrl);
  try {
    const demo = await setUpDemoChain(node.rpcUrl);
    const others = Array.from({ length: lanes - 1 }, () => Wallet.createRandom());
    const provider = new JsonRpcProvider(node.rpcUrl, undefined, { staticNetwork: true });
    for (const wallet of others) await provider.send("anvil_setBalance", [wallet.address, toBeHex(10n ** 21n)]);
    provider.destroy();
    const service = await startBenchService(proxy.url, demo, { PRIVATE_KEY: [demo.privateKey, ...others.map((wallet) => wallet.privateKey)].join(",") });
    try {
      // Startup (connecting, each lane's first snapshot) is not idling.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const before = new Map(proxy.counts);
      await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1_000));
      const byMethod = Object.fromEntries([...proxy.counts].map(([method, count]) => [method, count - (before.get(method) ?? 0)]).filter(([, count]) => Number(count) > 0));
      return { perSecond: Object.values(byMethod).reduce((sum: number, count) => sum + Number(count), 0) / IDLE_SECONDS, byMethod };
    } finally {
      await service.close();
    }
  } finally {
    await proxy.close();
    await node.stop();
  }
}

/** TRANSFERS transfers at CONCURRENCY on an automining anvil (no pending limit), through `lanes` lanes: per second. */
async function automineRate(lanes: number): Promise<{ perSecond: number; failures: number }> {
  const chain = await startPoolChain(lanes, true);
  const service = await startBenchService(chain.rpcUrl, chain.demo, { PRIVATE_KEY: chain.keys.join(",") });
  try {
    const result = await loadFromWorker({
      url: service.baseUrl,
      path: "/transfer",
      body: { toAddress: Wallet.createRandom().address, amount: "1" },
      connections: CONCURRENCY,
      count: TRANSFERS,
      warmupCount: 100,
      expectBodyIncludes: '"hash"',
    });
    return { perSecond: result.perSecond, failures: result.failures };
  } finally {
    await service.close();
    await chain.stop();
  }
}

if (PARTS.has("idle")) {
  for (const lanes of [1, LANES]) {
    const idle = await idleCallsPerSecond(lanes);
    console.log(`idle, ${lanes} lane${lanes === 1 ? "" : "s"}: ${idle.perSecond.toFixed(3)} node calls a second over ${IDLE_SECONDS} s ${JSON.stringify(idle.byMethod)}${lanes > 1 ? " (target at most 0.30)" : ""}`);
  }
}
if (PARTS.has("limit")) {
  console.log(`node: anvil, a block every ${BLOCK_TIME} s, at most ${PENDING_LIMIT} pending per sender (proxy); concurrency ${CONCURRENCY}, ${SECONDS} s per run`);
  const rounds: { one: LoadResult; pool: LoadResult }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const one = await measureThroughput(1);
    const pool = await measureThroughput(LANES);
    rounds.push({ one, pool });
    console.log(`round ${round}: 1 lane  ${describe(one)}`);
    console.log(`round ${round}: ${LANES} lanes ${describe(pool)}`);
    console.log(`round ${round}: ${LANES} lanes / 1 lane = ${(sentCount(pool) / Math.max(1, sentCount(one))).toFixed(2)}; one wallet ${(sentCount(one) / one.seconds).toFixed(1)}/s (target >= 12, no 417, nothing refused by the node)`);
  }
  const ratios = rounds.map(({ one, pool }) => sentCount(pool) / Math.max(1, sentCount(one))).sort((a, b) => a - b);
  console.log(`median ratio over ${ROUNDS} rounds: ${ratios[Math.floor(ratios.length / 2)].toFixed(2)}`);
}
if (PARTS.has("jam")) await measureJam();
if (PARTS.has("automine")) {
  console.log(`\nautomining anvil, no pending limit: ${TRANSFERS} transfers at concurrency ${CONCURRENCY}, one lane and ${LANES} lanes alternating, 3 rounds`);
  const ratios: number[] = [];
  for (let round = 1; round <= 3; round++) {
    const one = await automineRate(1);
    const pool = await automineRate(LANES);
    ratios.push(pool.perSecond / one.perSecond);
    console.log(`  round ${round}: 1 lane ${one.perSecond.toFixed(0)}/s (${one.failures} failed), ${LANES} lanes ${pool.perSecond.toFixed(0)}/s (${pool.failures} failed): ${(pool.perSecond / one.perSecond).toFixed(2)}`);
  }
  console.log(`  median ${LANES} lanes / 1 lane: ${[...ratios].sort((a, b) => a - b)[1].toFixed(2)} (target at least 1.0)`);
}
