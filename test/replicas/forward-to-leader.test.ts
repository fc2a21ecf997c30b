/**
 * A follower forwarding to the leader while the leadership changes: a recorded leader that refuses
 * connections (it died) or turns out to be a follower (restarted at the old address) never got the
 * request, so the follower asks again and delivers it once to the next leader. The leader here is a
 * plain HTTP server (a boundary fake); the followers are the real follower app.
 */
import { type Server, createServer } from "node:http";
import { type AddressInfo, connect } from "node:net";
import pino from "pino";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import type { TransactionLookup } from "../../src/lookup/transaction-lookup.js";
import { ServiceMetrics } from "../../src/metrics.js";
import { buildFollowerApp } from "../../src/replicas/follower-app.js";
import { type LeaderDirectory, leaderTarget } from "../../src/replicas/forward-to-leader.js";
import type { LeaderRecord } from "../../src/replicas/leadership.js";
import { servedNetworkOf } from "../../src/network-settings/network-choice.js";
import { freePort } from "../helpers/free-port.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A follower app listening on 127.0.0.1, asking `leaders` where to forward (no API keys: AUTH_DISABLED). */
async function startFollower(leaders: LeaderDirectory, rateLimitMax = 1000): Promise<string> {
  const app = buildFollowerApp(
    { rateLimitMax, rateLimitWindowMs: 60_000 },
    {
      replicaId: "follower",
      logger: pino({ level: "silent" }),
      metrics: new ServiceMetrics(),
      apiKeys: undefined,
      network: servedNetworkOf(undefined, { chainId: 31337n, tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" }),
      lookup: {} as TransactionLookup,
      attempts: { findWithSeveralAttempts: () => undefined },
      readinessChecks: {},
      endpointStates: () => ({}),
      leaders,
    },
  );
  await app.listen({ host: "127.0.0.1", port: 0 });
  closers.push(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** The leader: answers 201 with the body it got, and counts what it got. */
async function startLeader(): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  const server: Server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    received.push(body);
    res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ echoed: body }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** Answers `stale` until forgotten once, then `next`. */
function directory(stale: LeaderRecord, next: LeaderRecord): LeaderDirectory & { forgotten: number } {
  const leaders = {
    forgotten: 0,
    current: async () => (leaders.forgotten === 0 ? stale : next),
    forget: () => void leaders.forgotten++,
  };
  return leaders;
}

async function post(url: string, body: string) {
  const response = await request(`${url}/transfer`, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { statusCode: response.statusCode, body: await response.body.text() };
}

describe("forwarding to the leader during a takeover", () => {
  it("waits past a leader that refuses connections and delivers the very bytes once to the next", async () => {
    const leader = await startLeader();
    const deadAddress = `http://127.0.0.1:${await freePort()}`;
    const follower = await startFollower(directory({ replicaId: "dead", url: deadAddress, epoch: 1 }, { replicaId: "next", url: leader.url, epoch: 2 }));
    const body = '{"toAddress":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","amount":12345678901234567890.5}';
    const answer = await post(follower, body);
    expect(answer).toEqual({ statusCode: 201, body: JSON.stringify({ echoed: body }) });
    expect(leader.received).toEqual([body]);
  });

  it("takes a follower at the old leader's address for what it is: 421, not acted on, and asks again", async () => {
    const leader = await startLeader();
    // Every replica reads the same stale record, naming the restarted one: forwarding on would loop.
    let restarted = "";
    const stale = { current: async () => ({ replicaId: "old", url: restarted, epoch: 1 }), forget: () => undefined };
    restarted = await startFollower(stale);
    const follower = await startFollower(directory({ replicaId: "old", url: restarted, epoch: 1 }, { replicaId: "next", url: leader.url, epoch: 2 }));
    const answer = await post(follower, '{"amount":"1"}');
    expect(answer.statusCode).toBe(201);
    // Delivered once: the restarted follower refused it instead of forwarding it (to itself).
    expect(leader.received).toEqual(['{"amount":"1"}']);
  });

  it("does not count what it refuses as a follower against the client's limit: a burst that meets a follower at the leader's address is delivered, each once", async () => {
    const leader = await startLeader();
    let restarted = "";
    const stale = { current: async () => ({ replicaId: "old", url: restarted, epoch: 1 }), forget: () => undefined };
    // The restarted one allows one request a minute: the hops it refused would have spent it.
    restarted = await startFollower(stale, 1);
    // Each request meets the stale record first, and the next leader once it forgot it.
    let forgotten = false;
    const takeover: LeaderDirectory = {
      current: async () => {
        if (!forgotten) return { replicaId: "old", url: restarted, epoch: 1 };
        forgotten = false;
        return { replicaId: "next", url: leader.url, epoch: 2 };
      },
      forget: () => void (forgotten = true),
    };
    const follower = await startFollower(takeover);
    const answers = [];
    for (let index = 0; index < 3; index++) answers.push(await post(follower, `{"amount":"${index}"}`));
    expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 201]);
    expect(leader.received).toEqual(['{"amount":"0"}', '{"amount":"1"}', '{"amount":"2"}']);
  });
});

describe("a leader that got the request and died on it", () => {
  /** A leader that reads each request whole and then drops the connection unanswered (after its headers, with `midway`). */
  async function startDyingLeader(midway = false): Promise<{ url: string; received: string[] }> {
    const received: string[] = [];
    const server: Server = createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      received.push(`${req.method} ${req.url}`);
      if (midway) res.writeHead(200, { "content-length": "1000" }).write('{"result":');
      req.socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
  }

  it("answers a transfer without an Idempotency-Key as a lone service would: its outcome is unknown, and a retry may pay twice", async () => {
    const leader = await startDyingLeader();
    const record = { replicaId: "dying", url: leader.url, epoch: 1 };
    const follower = await startFollower({ current: async () => record, forget: () => undefined });
    const send = async (path: string, headers: Record<string, string> = {}) => {
      const response = await request(`${follower}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: '{"toAddress":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","amount":"1"}' });
      return { statusCode: response.statusCode, ...((await response.body.json()) as { code: string; message: string }) };
    };

    const keyless = await send("/transfer?waitConfirmations=1");
    expect(keyless).toMatchObject({ statusCode: 503, code: "TRANSFER_OUTCOME_UNKNOWN" });
    expect(keyless.message).toMatch(/dying got this transfer.*no Idempotency-Key, so sending it again may pay twice/);
    // With a key, the retry answers what was done: the leader is only unavailable.
    expect(await send("/transfer", { "idempotency-key": "order-1" })).toMatchObject({ statusCode: 503, code: "LEADER_UNAVAILABLE" });
    // A route that sends no new money (a cancel is one per transfer) is not a transfer of unknown outcome.
    expect(await send("/transactions/0x1234/cancel")).toMatchObject({ statusCode: 503, code: "LEADER_UNAVAILABLE" });
    expect(leader.received).toEqual(["POST /transfer?waitConfirmations=1", "POST /transfer", "POST /transactions/0x1234/cancel"]);
  });

  it("knows a transfer by the path the leader routes (slashes folded, dot segments, escapes), and a leader dying after its headers as one that never answered", async () => {
    for (const midway of [false, true]) {
      const leader = await startDyingLeader(midway);
      const record = { replicaId: "dying", url: leader.url, epoch: 1 };
      const follower = await startFollower({ current: async () => record, forget: () => undefined });
      for (const path of ["//transfer", "/a/../transfer", "/%74ransfer"]) {
        const response = await request(`${follower}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"toAddress":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","amount":"1"}' });
        expect({ path, midway, statusCode: response.statusCode, code: ((await response.body.json()) as { code: string }).code }).toEqual({ path, midway, statusCode: 503, code: "TRANSFER_OUTCOME_UNKNOWN" });
      }
    }
  });
});

describe("a follower rate-limits like the leader", () => {
  it("answers 429 RATE_LIMITED past RATE_LIMIT_MAX, and forwards none of what it refused", async () => {
    const leader = await startLeader();
    const follower = await startFollower({ current: async () => ({ replicaId: "leader", url: leader.url, epoch: 1 }), forget: () => undefined }, 2);
    const answers = [];
    for (let index = 0; index < 3; index++) answers.push(await post(follower, `{"amount":"${index}"}`));
    expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 429]);
    expect(JSON.parse(answers[2].body)).toMatchObject({ statusCode: 429, code: "RATE_LIMITED" });
    expect(leader.received).toEqual(['{"amount":"0"}', '{"amount":"1"}']);
  });
});

describe("a follower forwards to its leader's origin and nowhere else", () => {
  it.each([
    ["//internal-host/path", "/internal-host/path"],
    ["/\\internal-host/path", "/internal-host/path"],
    ["\\\\internal-host/path?x=1", "/internal-host/path?x=1"],
    ["http://169.254.169.254/latest/meta-data", "/http://169.254.169.254/latest/meta-data"],
    ["/@internal-host/path", "/@internal-host/path"],
    ["/transfer?waitConfirmations=1", "/transfer?waitConfirmations=1"],
  ])("%s stays a path on the leader", (requestUrl, path) => {
    const target = leaderTarget("http://10.0.0.5:3000/ignored", requestUrl);
    expect(target.origin).toBe("http://10.0.0.5:3000");
    expect(`${target.pathname}${target.search}`).toBe(path);
  });

  it.each(["//127.0.0.1:INTERNAL/secret", "/\\127.0.0.1:INTERNAL/secret", "http://127.0.0.1:INTERNAL/secret"])(
    "a request line %s reaches the leader's origin, never the other host",
    async (requestTarget) => {
      const leader = await startLeaderRecordingPaths();
      const internal = await startLeaderRecordingPaths();
      const follower = await startFollower({ current: async () => ({ replicaId: "leader", url: leader.url, epoch: 1 }), forget: () => undefined });
      const status = await rawRequest(follower, `GET ${requestTarget.replace("INTERNAL", new URL(internal.url).port)} HTTP/1.1`);
      expect(internal.paths).toEqual([]);
      expect(status).not.toBe(0);
      // Either refused as no route, or delivered to the leader as a path there.
      for (const path of leader.paths) expect(path.startsWith("/")).toBe(true);
    },
  );
});

/** A server that records the paths it was asked for and answers 200. */
async function startLeaderRecordingPaths(): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? "");
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths };
}

/** Sends one raw request line (no client library normalises it) and resolves with the answer's status. */
function rawRequest(baseUrl: string, requestLine: string): Promise<number> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), "127.0.0.1", () => socket.write(`${requestLine}\r\nhost: 127.0.0.1:${port}\r\nconnection: close\r\n\r\n`));
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk.toString()));
    socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    socket.on("error", () => resolve(0));
  });
}
