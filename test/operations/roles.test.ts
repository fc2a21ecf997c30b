/**
 * Roles of API keys (transfer, read, admin) over HTTP against a real chain: what each may call, that a
 * transfer key sees of another key's transfers only what the chain shows, and that a read key sees every
 * transfer as GET /transfers lists it on every route.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_ROLES } from "../../src/http/auth.js";
import { type TestService, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, startTestChain, waitForReceipt } from "../helpers/test-chain.js";

const SENDER = "transfer-key-of-client-a";
const OTHER_SENDER = "transfer:transfer-key-of-client-b";
const READER = "read-key-of-the-dashboard";
const ADMIN = "admin-key-of-the-operator";
const bearer = (key: string) => ({ authorization: `Bearer ${key.replace(/^transfer:/, "")}` });

describe("roles", () => {
  let chain: TestChain;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain(["--no-mining"]);
    service = await startService(chain.target, { API_KEYS: `${SENDER},${OTHER_SENDER},read:${READER},admin:${ADMIN}`, RATE_LIMIT_MAX: "10000" });
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  const call = (key: string, method: "GET" | "POST", url: string, body?: unknown, headers: Record<string, string> = {}) =>
    service.app.inject({
      method,
      url,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...bearer(key), ...headers },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
  const send = async (key: string, idempotencyKey?: string) => {
    const response = await call(key, "POST", "/transfer", { toAddress: freshAddress(), amount: "1" }, idempotencyKey ? { "idempotency-key": idempotencyKey } : {});
    expect(response.statusCode, response.body).toBe(200);
    return response.json().result.hash as string;
  };

  it("lets each role call its routes and answers 403 FORBIDDEN_FOR_ROLE elsewhere, before anything is done", async () => {
    const hash = await send(SENDER);
    const expectations: [string, "GET" | "POST", string, unknown, string[]][] = [
      ["POST /transfer", "POST", "/transfer", { toAddress: freshAddress(), amount: "1" }, [SENDER, ADMIN]],
      ["POST /getTransaction", "POST", "/getTransaction", { Tx: hash }, [SENDER, READER, ADMIN]],
      ["GET /transactions/:hash", "GET", `/transactions/${hash}`, undefined, [SENDER, READER, ADMIN]],
      ["GET /metrics", "GET", "/metrics", undefined, [READER, ADMIN]],
      ["GET /wallet", "GET", "/wallet", undefined, [ADMIN]],
      ["GET /webhooks/deliveries", "GET", "/webhooks/deliveries", undefined, [ADMIN]],
    ];
    const pendingBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
    for (const [route, method, url, body, allowed] of expectations) {
      for (const key of [SENDER, READER, ADMIN]) {
        const response = await call(key, method, url, body);
        if (allowed.includes(key)) expect(response.statusCode, `${route} by ${key}`).not.toBe(403);
        else expect(response.json(), `${route} by ${key}`).toMatchObject({ statusCode: 403, code: "FORBIDDEN_FOR_ROLE" });
      }
    }
    // The reader's transfer was refused before anything was signed: two transfers went out, not three.
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending")).toBe(pendingBefore + 2);
    expect((await call(READER, "POST", `/transactions/${hash}/cancel`)).json()).toMatchObject({ statusCode: 403, code: "FORBIDDEN_FOR_ROLE" });
  });

  it("names only routes that exist in its role table (a route not named there is admin-only)", () => {
    for (const route of Object.keys(ROUTE_ROLES)) {
      const [method, url] = route.split(" ");
      expect(service.app.hasRoute({ method: method as "GET" | "POST", url }), route).toBe(true);
    }
  });

  it("shows a transfer key the journal's view of its own transfers only; a read key and an admin see all; a read key changes nothing", async () => {
    const mine = await send(SENDER);
    const theirs = await send(OTHER_SENDER);
    const own = (await call(SENDER, "GET", `/transactions/${mine}`)).json();
    expect(own).toMatchObject({ hash: mine, state: "pending", carriedBy: mine });
    expect(own.attempts).toHaveLength(1);
    // Another key's transfer: what the chain shows (pending in the pool), no attempts, no journal facts.
    const foreign = (await call(SENDER, "GET", `/transactions/${theirs}`)).json();
    expect(foreign).toMatchObject({ hash: theirs, state: "pending" });
    expect(foreign).not.toHaveProperty("attempts");
    expect(foreign).not.toHaveProperty("carriedBy");
    // A read key sees every transfer as the journal knows it, as GET /transfers lists them.
    const asReader = (await call(READER, "GET", `/transactions/${mine}`)).json();
    expect(asReader).toMatchObject({ hash: mine, carriedBy: mine });
    expect(asReader.attempts).toHaveLength(1);
    const listed = (await call(READER, "GET", "/transfers?limit=5")).json().transfers as { hash: string; attempts: unknown[] }[];
    expect(listed.find((item) => item.hash === mine)?.attempts).toEqual(asReader.attempts.map(({ hash, kind, fate }: { hash: string; kind: string; fate: string }) => expect.objectContaining({ hash, kind, fate })));
    const asAdmin = (await call(ADMIN, "GET", `/transactions/${theirs}`)).json();
    expect(asAdmin.attempts).toHaveLength(1);
    // Cancels: only the sender or an admin.
    expect((await call(SENDER, "POST", `/transactions/${theirs}/cancel`)).json()).toMatchObject({ statusCode: 403, code: "CANCEL_NOT_ALLOWED" });
    expect((await call(ADMIN, "POST", `/transactions/${theirs}/cancel`)).statusCode).toBe(202);
    await chain.provider.send("evm_mine", []);
    await waitForReceipt(chain, mine, 5_000);
  });

  it("keeps each key's Idempotency-Keys and refusals to itself", async () => {
    const first = await send(SENDER, "order-1");
    const second = await send(OTHER_SENDER, "order-1");
    expect(second).not.toBe(first);
    // A refusal recorded for one key's Idempotency-Key is not another's answer.
    const tooMuch = { toAddress: freshAddress(), amount: "999999999" };
    const refused = await call(SENDER, "POST", "/transfer", tooMuch, { "idempotency-key": "order-2" });
    expect(refused.statusCode).toBe(417);
    const elsewhere = await call(OTHER_SENDER, "POST", "/transfer", { ...tooMuch, amount: "1" }, { "idempotency-key": "order-2" });
    expect(elsewhere.statusCode).toBe(200);
    await chain.provider.send("evm_mine", []);
  });

  it("refuses a key listed twice with two roles, naming the entry", async () => {
    await expect(startService(chain.target, { API_KEYS: `${SENDER},admin:${SENDER}` })).rejects.toThrow(/API_KEYS: entry 2 repeats a key given before/);
  });
});
