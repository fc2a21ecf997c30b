/** Every 401, 403 and 429 path, over HTTP against a real chain. */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, startTestChain, tokenBalanceOf, waitForMinedCount } from "../helpers/test-chain.js";

const PLAIN_KEY = "plain-key-for-client-a";
const HASHED_KEY = "hashed-key-for-client-b";
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe("access control", () => {
  let chain: TestChain;
  let service: TestService;
  const allowed = freshAddress();

  beforeAll(async () => {
    chain = await startTestChain();
    service = await startService(chain.target, {
      API_KEYS: `${PLAIN_KEY}, sha256:${createHash("sha256").update(HASHED_KEY).digest("hex")}`,
      MAX_TRANSFER_AMOUNT: "100",
      TRANSFER_CAP_PER_DAY: "150",
      ALLOWED_RECIPIENTS: `${allowed},${freshAddress()}`,
      RATE_LIMIT_MAX: "1000",
    });
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  describe("401", () => {
    const cases: [string, Record<string, string>, string][] = [
      ["no Authorization header", {}, "AUTH_REQUIRED"],
      ["a wrong key", bearer("not-a-key-of-this-service"), "AUTH_INVALID"],
      ["a near miss of a real key", bearer(`${PLAIN_KEY}x`), "AUTH_INVALID"],
      ["Basic instead of Bearer", { authorization: `Basic ${Buffer.from(`u:${PLAIN_KEY}`).toString("base64")}` }, "AUTH_INVALID"],
      ["Bearer without a key", { authorization: "Bearer " }, "AUTH_INVALID"],
      ["the hash instead of the key", bearer(`sha256:${createHash("sha256").update(HASHED_KEY).digest("hex")}`), "AUTH_INVALID"],
    ];
    it.each(cases)("%s", async (_label, headers, code) => {
      for (const [method, url] of [["POST", "/transfer"], ["POST", "/getTransaction"], ["GET", "/wallet"], ["GET", "/metrics"], ["GET", `/transactions/0x${"11".repeat(32)}`]] as const) {
        const response = await service.app.inject({ method, url, headers: { "content-type": "application/json", authorization: "", ...headers }, payload: method === "POST" ? "{}" : undefined });
        expect(response.statusCode, `${method} ${url}`).toBe(401);
        expect(response.json()).toEqual({ statusCode: 401, code, error: "Unauthorized", message: expect.any(String) });
        expect(response.headers["www-authenticate"]).toMatch(/^Bearer/);
      }
    });

    it("accepts a plain key and a key configured by its SHA-256", async () => {
      for (const key of [PLAIN_KEY, HASHED_KEY]) {
        const reply = await postJson(service.app, "/getTransaction", { Tx: `0x${"11".repeat(32)}` }, bearer(key));
        expect(reply.statusCode).toBe(200);
      }
    });

    it("leaves /health, /ready, /docs and /openapi.json open", async () => {
      for (const url of ["/health", "/ready", "/openapi.json", "/docs"]) {
        const response = await service.app.inject({ method: "GET", url });
        expect(response.statusCode, url).toBeLessThan(400);
      }
    });
  });

  describe("403, checked before anything is signed", () => {
    const nonce = () => chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");

    it("AMOUNT_ABOVE_LIMIT above MAX_TRANSFER_AMOUNT", async () => {
      const before = await nonce();
      const reply = await postJson(service.app, "/transfer", { toAddress: allowed, amount: "100.000001" }, bearer(PLAIN_KEY));
      expect(reply.statusCode).toBe(403);
      expect(reply.body).toMatchObject({ statusCode: 403, code: "AMOUNT_ABOVE_LIMIT", error: "Forbidden" });
      expect(await nonce()).toBe(before);
    });

    it("RECIPIENT_NOT_ALLOWED for an address off the allow-list (the token contract included)", async () => {
      for (const toAddress of [freshAddress(), chain.demo.tokenAddress]) {
        const reply = await postJson(service.app, "/transfer", { toAddress, amount: "1" }, bearer(PLAIN_KEY));
        expect(reply.statusCode).toBe(403);
        expect(reply.body.code).toBe("RECIPIENT_NOT_ALLOWED");
      }
    });

    it("DAILY_CAP_EXCEEDED per key, counted across concurrent requests, each key on its own", async () => {
      const replies = await Promise.all(Array.from({ length: 4 }, () => postJson(service.app, "/transfer", { toAddress: allowed, amount: "50" }, bearer(PLAIN_KEY))));
      expect(replies.filter((reply) => reply.statusCode === 200)).toHaveLength(3);
      const refused = replies.filter((reply) => reply.statusCode === 403);
      expect(refused).toHaveLength(1);
      expect(refused[0].body.code).toBe("DAILY_CAP_EXCEEDED");
      const accepted = replies.filter((reply) => reply.statusCode === 200).map((reply) => reply.body.result.nonce as number);
      await waitForMinedCount(chain, Math.max(...accepted) + 1, 30_000);
      expect(await tokenBalanceOf(chain, allowed)).toBe(parseUnits("150", 18));
      // The other key still has its whole cap.
      expect((await postJson(service.app, "/transfer", { toAddress: allowed, amount: "100" }, bearer(HASHED_KEY))).statusCode).toBe(200);
    });

    it.each([
      ["MAX_TRANSFER_AMOUNT", "1.0000000000000000001", /MAX_TRANSFER_AMOUNT: amount has more than 18 fractional digits/],
      ["TRANSFER_CAP_PER_DAY", "0", /TRANSFER_CAP_PER_DAY: amount must be greater than zero/],
      ["ALLOWED_RECIPIENTS", "0x70997970c51812dc3A010C7d01b50e0d17dc79C8", /ALLOWED_RECIPIENTS: .*checksum/],
    ])("refuses to start with an unusable %s, naming it", async (variable, value, message) => {
      await expect(startService(chain.target, { API_KEYS: PLAIN_KEY, [variable]: value })).rejects.toThrow(message);
    });

    it("keeps counting the cap after a restart (from the journal)", async () => {
      const journalDir = mkdtempSync(join(tmpdir(), "cap-"));
      const env = { API_KEYS: PLAIN_KEY, TRANSFER_CAP_PER_DAY: "10", JOURNAL_PATH: join(journalDir, "transfers.sqlite") };
      let capped = await startService(chain.target, env);
      try {
        expect((await postJson(capped.app, "/transfer", { toAddress: freshAddress(), amount: "7" }, bearer(PLAIN_KEY))).statusCode).toBe(200);
        await capped.close();
        capped = await startService(chain.target, env);
        const reply = await postJson(capped.app, "/transfer", { toAddress: freshAddress(), amount: "4" }, bearer(PLAIN_KEY));
        expect(reply.body.code).toBe("DAILY_CAP_EXCEEDED");
        expect((await postJson(capped.app, "/transfer", { toAddress: freshAddress(), amount: "3" }, bearer(PLAIN_KEY))).statusCode).toBe(200);
      } finally {
        await capped.close();
        rmSync(journalDir, { recursive: true, force: true });
      }
    });
  });
});

describe("429 for guessing keys", () => {
  let chain: TestChain;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain();
    service = await startService(chain.target, { API_KEYS: PLAIN_KEY });
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("slows an address that keeps sending wrong keys, without locking out a valid key", async () => {
    const lookUp = (key: string) => postJson(service.app, "/getTransaction", { Tx: `0x${"11".repeat(32)}` }, bearer(key));
    const replies = [];
    for (let attempt = 0; attempt < 61; attempt++) replies.push(await lookUp(`guess-${attempt}-0123456789abcdef`));
    expect(replies.slice(0, 60).every((reply) => reply.statusCode === 401)).toBe(true);
    const limited = replies[60];
    expect(limited.statusCode).toBe(429);
    expect(limited.body.code).toBe("RATE_LIMITED");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expect((await lookUp(PLAIN_KEY)).statusCode).toBe(200);
  });
});

describe("429 for guessing keys behind a TLS proxy (TRUST_PROXY=1)", () => {
  let chain: TestChain;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain();
    service = await startService(chain.target, { API_KEYS: PLAIN_KEY, TRUST_PROXY: "1" });
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("counts each client by its forwarded address, not every client as the proxy", async () => {
    const lookUp = (key: string, client: string) =>
      postJson(service.app, "/getTransaction", { Tx: `0x${"11".repeat(32)}` }, { ...bearer(key), "x-forwarded-for": client });
    for (let attempt = 0; attempt < 61; attempt++) await lookUp(`guess-${attempt}-0123456789abcdef`, "203.0.113.7");
    expect((await lookUp("guess-x-0123456789abcdef", "203.0.113.7")).statusCode).toBe(429);
    // Another client behind the same proxy is not punished for the first one's guessing.
    expect((await lookUp("typo-0123456789abcdef", "198.51.100.9")).statusCode).toBe(401);
  });
});

describe("429 per key", () => {
  let chain: TestChain;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain();
    service = await startService(chain.target, { API_KEYS: `${PLAIN_KEY},${HASHED_KEY}`, RATE_LIMIT_MAX: "3", RATE_LIMIT_WINDOW_MS: "60000" });
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("answers 429 RATE_LIMITED with Retry-After past the limit, for that key only", async () => {
    const lookUp = (key: string) => postJson(service.app, "/getTransaction", { Tx: `0x${"11".repeat(32)}` }, bearer(key));
    for (let request = 0; request < 3; request++) {
      const answer = await lookUp(PLAIN_KEY);
      expect(answer.statusCode).toBe(200);
      // Each counted answer says where the key stands.
      expect(answer.headers["x-ratelimit-limit"]).toBe("3");
      expect(answer.headers["x-ratelimit-remaining"]).toBe(String(2 - request));
      expect(Number(answer.headers["x-ratelimit-reset"])).toBeGreaterThan(0);
      expect(Number(answer.headers["x-ratelimit-reset"])).toBeLessThanOrEqual(60);
    }
    const limited = await lookUp(PLAIN_KEY);
    expect(limited.statusCode).toBe(429);
    expect(limited.body).toEqual({ statusCode: 429, code: "RATE_LIMITED", error: "Too Many Requests", message: expect.stringContaining("3 requests") });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    expect((await lookUp(HASHED_KEY)).statusCode).toBe(200);
    // The open routes are never limited.
    for (const url of ["/health", "/openapi.json", "/docs", "/docs/json"]) {
      for (let request = 0; request < 5; request++) expect((await service.app.inject({ method: "GET", url })).statusCode, url).not.toBe(429);
    }
    for (let request = 0; request < 5; request++) expect((await service.app.inject({ method: "GET", url: "/health" })).statusCode).toBe(200);
  });

  it("limits /ready on its own, per address: 120 a minute, whatever the keys' limit", async () => {
    const ready = () => service.app.inject({ method: "GET", url: "/ready", remoteAddress: "198.51.100.20" });
    for (let request = 0; request < 120; request++) expect((await ready()).statusCode).not.toBe(429);
    const limited = await ready();
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["x-ratelimit-limit"]).toBe("120");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
    // Another address has its own count.
    expect((await service.app.inject({ method: "GET", url: "/ready", remoteAddress: "198.51.100.21" })).statusCode).not.toBe(429);
  });
});
