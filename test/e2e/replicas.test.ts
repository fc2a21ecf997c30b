/**
 * Several replicas of the service (real processes, the compiled entry point) on one real PostgreSQL and one wallet
 * on anvil: transfers spread across them, a leader killed (-9) in the middle, a key sent to two at once.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits } from "ethers";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION, TEST_API_KEY, TEST_API_KEYS } from "../helpers/service.js";
import { retryWhilePoolBusy } from "../helpers/pool-client.js";
import { type TestPostgres, startTestPostgres } from "../helpers/postgres.js";
import {
  NODE_KINDS,
  type NodeKind,
  type TestChain,
  addPoolWallets,
  freshAddress,
  setEthBalance,
  startTestChain,
  startTestChainOn,
  tokenBalanceOf,
  waitForMinedCount,
  waitForReceipt,
} from "../helpers/test-chain.js";

interface Answer {
  statusCode: number;
  raw: string;
}

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

let chain: TestChain | undefined;
const replicas: ServerProcess[] = [];
afterEach(async () => {
  for (const replica of replicas.splice(0)) replica.child.kill("SIGKILL");
  await chain?.stop();
  chain = undefined;
});

async function startReplicas(
  count: number,
  extraEnvOfFirst: Record<string, string> = {},
  extraEnv: Record<string, string> = {},
  kind: NodeKind = "anvil",
): Promise<{ env: Record<string, string>; started: ServerProcess[] }> {
  chain = await startTestChainOn(kind);
  const env = {
    RPC_URL: chain.rpcUrl,
    PRIVATE_KEY: chain.demo.privateKey,
    TOKEN_ADDRESS: chain.demo.tokenAddress,
    DATABASE_URL: await postgres.createDatabase(),
    REBROADCAST_AFTER_MS: "500",
    ...extraEnv,
  };
  // The first one leads: the others, started together once it does, find the lock taken.
  const leader = await startServerProcess({ ...env, REPLICA_ID: "replica-0", ...extraEnvOfFirst });
  replicas.push(leader);
  await leader.waitForOutput("this replica leads");
  // Every start settled before a failure is thrown: afterEach then stops each follower that did start.
  const starts = await Promise.allSettled(Array.from({ length: count - 1 }, (_, index) => startServerProcess({ ...env, REPLICA_ID: `replica-${index + 1}` })));
  const followers = starts.flatMap((start) => (start.status === "fulfilled" ? [start.value] : []));
  replicas.push(...followers);
  const failed = starts.find((start) => start.status === "rejected");
  if (failed) throw failed.reason;
  return { env, started: [leader, ...followers] };
}

function send(replica: ServerProcess, path: string, body: unknown, key?: string): Promise<Answer | undefined> {
  return request(`${replica.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...AUTHORIZATION, ...(key && { "idempotency-key": key }) },
    body: JSON.stringify(body),
  }).then(
    async (response) => ({ statusCode: response.statusCode, raw: await response.body.text() }),
    () => undefined,
  );
}

async function getJson(replica: ServerProcess, path: string): Promise<unknown> {
  const response = await request(`${replica.baseUrl}${path}`, { headers: AUTHORIZATION });
  return path === "/metrics" ? response.body.text() : response.body.json();
}

/** Runs `work` for each index with at most `concurrency` at a time. */
async function withConcurrency<T>(count: number, concurrency: number, work: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await work(index);
      }
    }),
  );
  return results;
}

describe("three replicas on one PostgreSQL and one wallet", () => {
  it("300 transfers spread across them at concurrency 50: every one 200, nonces contiguous, each recipient paid once", async () => {
    const { started } = await startReplicas(3);
    const testChain = chain as TestChain;
    const firstNonce = await testChain.provider.getTransactionCount(testChain.demo.walletAddress, "latest");
    const bodies = Array.from({ length: 300 }, (_, index) => ({ toAddress: freshAddress(), amount: `${(index % 7) + 1}` }));
    const answers = await withConcurrency(300, 50, (index) => send(started[index % 3], "/transfer", bodies[index], `spread-${index}`));
    expect(answers.filter((answer) => answer?.statusCode !== 200).map((answer) => answer?.raw)).toEqual([]);
    const nonces = answers.map((answer) => JSON.parse((answer as Answer).raw).result.nonce as number).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: 300 }, (_, index) => firstNonce + index));
    await waitForMinedCount(testChain, firstNonce + 300, 60_000);
    for (const body of bodies) expect(await tokenBalanceOf(testChain, body.toAddress)).toBe(BigInt(body.amount) * 10n ** 18n);

    // Every replica answers lookups itself; /wallet and /metrics say which replica answered and whether it leads.
    // (The record is of the attempt that carries the transfer: a replacement's if anvil held the first one.)
    const { hash, nonce } = JSON.parse((answers[1] as Answer).raw).result;
    const lookups = await Promise.all(started.map(async (replica) => JSON.parse((await send(replica, "/getTransaction", { Tx: hash }))?.raw ?? "{}").result));
    for (const record of lookups) expect(record).toMatchObject({ hash: lookups[0].hash, nonce, to: testChain.demo.tokenAddress });
    expect(await getJson(started[0], "/wallet")).toMatchObject({ replica: { id: "replica-0", leads: true } });
    expect(await getJson(started[1], "/wallet")).toMatchObject({ replica: { id: "replica-1", leads: false }, nonces: { next: firstNonce + 300 } });
    expect(await getJson(started[0], "/metrics")).toContain('replica_leader{replica="replica-0"} 1');
    expect(await getJson(started[2], "/metrics")).toContain('replica_leader{replica="replica-2"} 0');
  });

  it("TRANSFER_CAP_PER_DAY holds across them: 100 concurrent transfers at the cap's boundary spend exactly the cap, and a new leader keeps counting", async () => {
    const { started } = await startReplicas(3, {}, { TRANSFER_CAP_PER_DAY: "60", RATE_LIMIT_MAX: "10000" });
    const testChain = chain as TestChain;
    const bodies = Array.from({ length: 100 }, () => ({ toAddress: freshAddress(), amount: "1" }));
    const answers = await Promise.all(bodies.map((body, index) => send(started[index % 3], "/transfer", body, `capped-${index}`)));
    const byStatus = (status: number) => answers.filter((answer) => answer?.statusCode === status);
    expect(byStatus(200)).toHaveLength(60);
    expect(byStatus(403)).toHaveLength(40);
    for (const answer of byStatus(403)) expect(JSON.parse((answer as Answer).raw).code).toBe("DAILY_CAP_EXCEEDED");
    // On chain: 60 recipients got their token, the other 40 nothing.
    const nonces = byStatus(200).map((answer) => JSON.parse((answer as Answer).raw).result.nonce as number);
    await waitForMinedCount(testChain, Math.max(...nonces) + 1, 60_000);
    const received = await Promise.all(bodies.map((body) => tokenBalanceOf(testChain, body.toAddress)));
    expect(received.reduce((sum, units) => sum + units, 0n)).toBe(60n * 10n ** 18n);

    // The leader killed: the next one counts what the journal says this key sent.
    started[0].child.kill("SIGKILL");
    let after: Answer | undefined;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 250))) {
      after = await send(started[1], "/transfer", { toAddress: freshAddress(), amount: "1" }, "capped-after-takeover");
      if (after?.statusCode === 403) break;
    }
    expect(JSON.parse(after?.raw ?? "{}")).toMatchObject({ statusCode: 403, code: "DAILY_CAP_EXCEEDED" });
  });

  it("the same Idempotency-Key sent to two replicas at once makes one transfer", async () => {
    const { started } = await startReplicas(3);
    const testChain = chain as TestChain;
    const recipient = freshAddress();
    const body = { toAddress: recipient, amount: "3" };
    const both = await Promise.all([send(started[1], "/transfer", body, "twice"), send(started[2], "/transfer", body, "twice")]);
    const done = both.filter((answer) => answer?.statusCode === 200);
    expect(done.length).toBeGreaterThanOrEqual(1);
    // The other is the same answer, or 409 while the first was still in flight.
    for (const answer of both) expect(answer?.statusCode === 409 || answer?.raw === done[0]?.raw).toBe(true);
    expect((await send(started[0], "/transfer", body, "twice"))?.raw).toBe(done[0]?.raw);
    expect((await send(started[1], "/transfer", { ...body, amount: "4" }, "twice"))?.statusCode).toBe(422);
    await waitForMinedCount(testChain, JSON.parse((done[0] as Answer).raw).result.nonce + 1, 60_000);
    expect(await tokenBalanceOf(testChain, recipient)).toBe(3n * 10n ** 18n);
  });
});

describe("a wallet pool on replicas", () => {
  it("the leader sends on every lane; killed (-9) in a burst, the next leader takes every lane over: replays answer the first answer, each lane's nonces contiguous", async () => {
    chain = await startTestChainOn("anvil");
    const testChain = chain;
    const [second] = await addPoolWallets(testChain, 1, { tokens: 1_000n, ether: "10" });
    const lanes = [testChain.demo.walletAddress, second.address];
    const env = {
      RPC_URL: testChain.rpcUrl,
      PRIVATE_KEY: `${testChain.demo.privateKey},${second.privateKey}`,
      TOKEN_ADDRESS: testChain.demo.tokenAddress,
      DATABASE_URL: await postgres.createDatabase(),
      REBROADCAST_AFTER_MS: "500",
    };
    const started: ServerProcess[] = [];
    for (let index = 0; index < 2; index++) {
      const replica = await startServerProcess({ ...env, REPLICA_ID: `replica-${index}` });
      replicas.push(replica);
      started.push(replica);
      if (index === 0) await replica.waitForOutput("this replica leads");
    }
    const firstNonces = await Promise.all(lanes.map((lane) => testChain.provider.getTransactionCount(lane, "latest")));
    const bodies = Array.from({ length: 60 }, () => ({ toAddress: freshAddress(), amount: "1" }));
    const first = withConcurrency(60, 20, (index) => send(started[index % 2], "/transfer", bodies[index], `pool-${index}`));
    const pendingTotal = async () => (await Promise.all(lanes.map((lane) => testChain.provider.getTransactionCount(lane, "pending")))).reduce((sum, count) => sum + count, 0);
    const deadline = Date.now() + 10_000;
    while ((await pendingTotal()) < firstNonces[0] + firstNonces[1] + 20 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    started[0].child.kill("SIGKILL");
    const firstAnswers = await first;
    await started[1].waitForOutput("this replica leads", 15_000);

    // Lanes all at MAX_IN_FLIGHT_PER_LANE answer 503 NO_LANE_AVAILABLE: the client asks again.
    const replays = await withConcurrency(60, 20, (index) => retryWhilePoolBusy(() => send(started[1], "/transfer", bodies[index], `pool-${index}`)));
    const senders = replays.map((replay) => (replay?.statusCode === 200 ? String(JSON.parse(replay.raw).result.from) : undefined));
    for (const [index, replay] of replays.entries()) {
      const answer = firstAnswers[index]?.statusCode === 503 ? undefined : firstAnswers[index];
      expect(replay?.statusCode, `replay ${index}: ${replay?.raw}`).toBe(200);
      if (answer) expect({ statusCode: replay?.statusCode, raw: replay?.raw }, `request ${index}`).toEqual({ statusCode: answer.statusCode, raw: answer.raw });
    }
    const sentBy = lanes.map((lane) => senders.filter((sender) => sender === lane).length);
    expect(sentBy.every((count) => count > 0), `transfers per lane: ${sentBy.join(", ")}`).toBe(true);
    for (const [index, lane] of lanes.entries()) {
      const expected = firstNonces[index] + sentBy[index];
      const laneDeadline = Date.now() + 30_000;
      while ((await testChain.provider.getTransactionCount(lane, "latest")) < expected && Date.now() < laneDeadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await testChain.provider.getTransactionCount(lane, "latest"), `lane ${index}`).toBe(expected);
      expect(await testChain.provider.getTransactionCount(lane, "pending"), `lane ${index}`).toBe(expected);
    }
    for (const body of bodies) expect(await tokenBalanceOf(testChain, body.toAddress)).toBe(10n ** 18n);
    // A follower's view of the leader's /wallet lists both lanes.
    const wallet = (await getJson(started[1], "/wallet")) as { lanes: { address: string }[] };
    expect(wallet.lanes.map((lane) => lane.address)).toEqual(lanes);
  });
});

describe("roles through a follower", () => {
  it("a follower forwards what the role allows and the leader decides by its own route table", async () => {
    const transferKey = "transfer-role-key-0123456789";
    const readKey = "read-role-key-0123456789";
    const { started } = await startReplicas(2, {}, { API_KEYS: `${TEST_API_KEYS},${transferKey},read:${readKey}` });
    const follower = started[1];
    const call = async (key: string, method: "GET" | "POST", path: string, body?: unknown) => {
      const response = await request(`${follower.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.body.text();
      return { statusCode: response.statusCode, body: (text.startsWith("{") ? JSON.parse(text) : { text }) as { code?: string } };
    };
    const transfer = { toAddress: freshAddress(), amount: "1" };
    expect((await call(transferKey, "POST", "/transfer", transfer)).statusCode).toBe(200);
    expect((await call(readKey, "POST", "/transfer", transfer)).body).toMatchObject({ code: "FORBIDDEN_FOR_ROLE" });
    expect((await call(transferKey, "GET", "/wallet")).body).toMatchObject({ code: "FORBIDDEN_FOR_ROLE" });
    expect((await call(readKey, "GET", "/metrics")).statusCode).toBe(200);
    expect((await call(transferKey, "GET", "/metrics")).body).toMatchObject({ code: "FORBIDDEN_FOR_ROLE" });
    expect((await call(TEST_API_KEY, "GET", "/wallet")).statusCode).toBe(200);
  });
});

describe("bad input reaching a follower", () => {
  it("gets the answer the leader gives, or the same 400 for a lookup answered by the follower itself", async () => {
    const { started } = await startReplicas(2);
    const raw = async (replica: ServerProcess, path: string, body: string) => {
      const response = await request(`${replica.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...AUTHORIZATION }, body });
      return { statusCode: response.statusCode, body: (await response.body.json()) as { code: string } };
    };
    for (const body of ["{not json", '{"__proto__":{"polluted":true},"Tx":"0x1"}']) {
      const [follower, leader] = await Promise.all([raw(started[1], "/getTransaction", body), raw(started[0], "/getTransaction", body)]);
      expect(follower.statusCode).toBe(400);
      expect(follower.body.code).toBe(leader.body.code);
    }
    const testChain = chain as TestChain;
    const nonceCountBefore = await testChain.provider.getTransactionCount(testChain.demo.walletAddress, "pending");
    const badTransfer = { toAddress: "0x123", amount: "1" };
    const [viaFollower, direct] = await Promise.all([send(started[1], "/transfer", badTransfer), send(started[0], "/transfer", badTransfer)]);
    expect(viaFollower?.statusCode).toBe(400);
    expect(JSON.parse(viaFollower?.raw ?? "{}").code).toBe(JSON.parse(direct?.raw ?? "{}").code);
    expect(await testChain.provider.getTransactionCount(testChain.demo.walletAddress, "pending")).toBe(nonceCountBefore);
  });
});

describe("the daily cap per API key across replicas", () => {
  it("holds whichever replica the transfers reach", async () => {
    const { started } = await startReplicas(3, {}, { TRANSFER_CAP_PER_DAY: "10" });
    const answers = [];
    for (const replica of started) answers.push(await send(replica, "/transfer", { toAddress: freshAddress(), amount: "4" }));
    expect(answers.map((answer) => answer?.statusCode)).toEqual([200, 200, 403]);
    expect(JSON.parse((answers[2] as Answer).raw).code).toBe("DAILY_CAP_EXCEEDED");
  });
});

// The answer contract across a takeover is proven on both node implementations.
describe.each(NODE_KINDS)("the leader killed (-9), on %s", (kind) => {
  it.each([
    ["journaled but not broadcast", "after-sign"],
    ["broadcast, with the node's reply lost", "after-broadcast"],
  ])("with a transfer %s: another replica leads within 10 s and completes it, once", async (_label, faultPoint) => {
    // The leader stops at the fault point of its first transfer, and is killed there.
    const { started } = await startReplicas(3, { TEST_FAULT_POINT: faultPoint }, {}, kind);
    const testChain = chain as TestChain;
    const firstNonce = await testChain.provider.getTransactionCount(testChain.demo.walletAddress, "latest");
    const recipient = freshAddress();
    const answered = send(started[1], "/transfer", { toAddress: recipient, amount: "5" }, "lost-reply");
    await started[0].waitForOutput(`TEST_FAULT_POINT reached: ${faultPoint}`);
    const killedAt = Date.now();
    started[0].child.kill("SIGKILL");
    // The leader got the request and died on it: whether it sent anything, the follower cannot know.
    expect(JSON.parse((await answered)?.raw ?? "{}")).toMatchObject({ statusCode: 503, code: "LEADER_UNAVAILABLE" });

    const newLeader = await Promise.race(started.slice(1).map((replica) => replica.waitForOutput("this replica leads", 15_000).then(() => replica)));
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(10_000);
    await waitForMinedCount(testChain, firstNonce + 1, 20_000);
    expect(await tokenBalanceOf(testChain, recipient)).toBe(5n * 10n ** 18n);
    // The client's retry, on any replica, answers the transfer that was completed, and sends nothing more.
    const follower = started.find((replica) => replica !== newLeader && replica !== started[0]) as ServerProcess;
    const retry = await send(follower, "/transfer", { toAddress: recipient, amount: "5" }, "lost-reply");
    expect(retry?.statusCode).toBe(200);
    expect(JSON.parse((retry as Answer).raw).result.nonce).toBe(firstNonce);
    expect(await testChain.provider.getTransactionCount(testChain.demo.walletAddress, "pending")).toBe(firstNonce + 1);
  });

  it("in the middle of 300 transfers across the replicas at concurrency 50, then started again: every 200 is on chain once, every replay answers the first answer", async () => {
    const { env, started } = await startReplicas(3, {}, {}, kind);
    const testChain = chain as TestChain;
    const firstNonce = await testChain.provider.getTransactionCount(testChain.demo.walletAddress, "latest");
    const bodies = Array.from({ length: 300 }, () => ({ toAddress: freshAddress(), amount: "1" }));
    const first = withConcurrency(300, 50, (index) => send(started[index % 3], "/transfer", bodies[index], `burst-${index}`));
    const deadline = Date.now() + 10_000;
    while ((await testChain.provider.getTransactionCount(testChain.demo.walletAddress, "pending")) < firstNonce + 100 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    started[0].child.kill("SIGKILL");
    const firstAnswers = await first;
    const restarted = await startServerProcess({ ...env, REPLICA_ID: "replica-0" });
    replicas.push(restarted);
    await Promise.race(started.slice(1).map((replica) => replica.waitForOutput("this replica leads", 15_000)));

    // Replays go to another replica than the first request: the answers must not depend on where they land.
    const replays = await withConcurrency(300, 50, (index) => send([started[1], started[2], restarted][(index + 1) % 3], "/transfer", bodies[index], `burst-${index}`));
    for (const [index, replay] of replays.entries()) {
      const answer = firstAnswers[index]?.statusCode === 503 ? undefined : firstAnswers[index];
      expect(replay?.statusCode, `replay ${index}: ${replay?.raw}`).toBe(200);
      if (answer) expect({ statusCode: replay?.statusCode, raw: replay?.raw }, `request ${index}`).toEqual({ statusCode: answer.statusCode, raw: answer.raw });
    }
    await waitForMinedCount(testChain, firstNonce + 300, 60_000);
    expect(await testChain.provider.getTransactionCount(testChain.demo.walletAddress, "pending")).toBe(firstNonce + 300);
    for (const body of bodies) expect(await tokenBalanceOf(testChain, body.toAddress)).toBe(10n ** 18n);
  });
});

describe("replicas paying on two networks (NETWORKS_FILE)", () => {
  let beta: TestChain | undefined;
  afterEach(async () => {
    await beta?.stop();
    beta = undefined;
  });

  it("a transfer on the second network through a follower is paid once, and the follower finds its hash, named or not", async () => {
    chain = await startTestChainOn("anvil");
    beta = await startTestChain(["--chain-id", "31338"]);
    const wallet = chain.demo.walletAddress;
    await setEthBalance(beta, wallet, "1000");
    await (await beta.token.getFunction("transfer")(wallet, parseUnits("100", 18))).wait();
    const dir = mkdtempSync(join(tmpdir(), "replicas-networks-"));
    const file = join(dir, "networks.json");
    writeFileSync(
      file,
      JSON.stringify({
        networks: [
          { name: "alpha", chainId: 31337, rpcUrls: [chain.rpcUrl], tokens: { AAA: chain.demo.tokenAddress } },
          { name: "beta", chainId: 31338, rpcUrls: [beta.rpcUrl], tokens: { BBB: beta.demo.tokenAddress } },
        ],
        default: { network: "alpha", token: "AAA" },
      }),
    );
    const env = { NETWORKS_FILE: file, PRIVATE_KEY: chain.demo.privateKey, DATABASE_URL: await postgres.createDatabase() };
    for (const index of [0, 1]) {
      const replica = await startServerProcess({ ...env, REPLICA_ID: `replica-${index}` });
      replicas.push(replica);
      if (index === 0) await replica.waitForOutput("this replica leads");
    }
    const [, follower] = replicas;
    const recipient = freshAddress();
    const sent = await send(follower, "/transfer", { toAddress: recipient, amount: "3", network: "beta" }, "beta-through-a-follower");
    expect(sent?.statusCode, sent?.raw).toBe(200);
    const { hash } = JSON.parse(sent?.raw ?? "{}").result as { hash: string };
    await waitForReceipt(beta, hash, 10_000);
    expect(await tokenBalanceOf(beta, recipient)).toBe(parseUnits("3", 18));
    // The follower connects to the default network only: the leader answers another network's lookups.
    for (const body of [{ Tx: hash }, { Tx: hash, network: "beta" }, { Tx: hash, network: 31338 }]) {
      const looked = await send(follower, "/getTransaction", body);
      expect({ statusCode: looked?.statusCode, hash: JSON.parse(looked?.raw ?? "{}").result?.hash, chainId: JSON.parse(looked?.raw ?? "{}").result?.chainId }, JSON.stringify(body)).toEqual({
        statusCode: 200,
        hash,
        chainId: 31338,
      });
    }
    // A network not configured is still refused by the follower itself.
    expect((await send(follower, "/getTransaction", { Tx: hash, network: "gamma" }))?.statusCode).toBe(400);
    rmSync(dir, { recursive: true, force: true });
  });
});
