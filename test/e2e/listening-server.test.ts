/** End to end: the app listening on a real socket, driven with undici like a client service would. */
import type { AddressInfo } from "node:net";
import { Pool, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTHORIZATION, type TestService, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, mineBlocks, startTestChain, tokenBalanceOf } from "../helpers/test-chain.js";

describe("the service over a real socket", () => {
  let chain: TestChain;
  let service: TestService;
  let baseUrl: string;

  beforeAll(async () => {
    chain = await startTestChain(["--no-mining"]);
    service = await startService(chain.target);
    await service.app.listen({ host: "127.0.0.1", port: 0 });
    baseUrl = `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
    const response = await request(`${baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTHORIZATION, ...headers },
      body: JSON.stringify(body),
    });
    return { statusCode: response.statusCode, headers: response.headers, body: (await response.body.json()) as any };
  }

  it("sends a transfer, reports it pending, then confirmed", async () => {
    const recipient = freshAddress();
    const sent = await post("/transfer", { toAddress: recipient, amount: "42.000001" });
    expect(sent.statusCode).toBe(200);
    expect(sent.headers["content-type"]).toMatch(/^application\/json/);
    expect(sent.body.result.confirmations).toBe(0);

    const pending = await post("/getTransaction", { Tx: sent.body.result.hash });
    expect(pending.body.result.confirmations).toBe(0);

    await mineBlocks(chain, 2);
    const confirmed = await post("/getTransaction", { Tx: sent.body.result.hash });
    expect(confirmed.body.result.confirmations).toBe(2);
    expect(await tokenBalanceOf(chain, recipient)).toBe(42_000_001_000_000_000_000n);
  });

  it("echoes the caller's x-request-id", async () => {
    const reply = await post("/getTransaction", { Tx: `0x${"ab".repeat(32)}` }, { "x-request-id": "trace-123" });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers["x-request-id"]).toBe("trace-123");
    const generated = await post("/getTransaction", { Tx: "0x1" });
    expect(generated.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(service.logs.some((line) => line.includes('"reqId":"trace-123"'))).toBe(true);
  });

  it("checks the key of every request on a keep-alive connection, not only the first", async () => {
    const connection = new Pool(baseUrl, { connections: 1, pipelining: 1 });
    try {
      const lookUp = async (authorization?: string) => {
        const headers: Record<string, string> = { "content-type": "application/json", ...(authorization === undefined ? {} : { authorization }) };
        const response = await connection.request({ path: "/getTransaction", method: "POST", headers, body: JSON.stringify({ Tx: `0x${"cd".repeat(32)}` }) });
        return { statusCode: response.statusCode, code: ((await response.body.json()) as any).code };
      };
      expect((await lookUp(AUTHORIZATION.authorization)).statusCode).toBe(200);
      expect(await lookUp(`${AUTHORIZATION.authorization}x`)).toEqual({ statusCode: 401, code: "AUTH_INVALID" });
      expect(await lookUp()).toEqual({ statusCode: 401, code: "AUTH_REQUIRED" });
      expect((await lookUp(AUTHORIZATION.authorization)).statusCode).toBe(200);
      expect(await lookUp("Bearer not-a-key-at-all-0123456789")).toEqual({ statusCode: 401, code: "AUTH_INVALID" });
    } finally {
      await connection.close();
    }
  });

  it("keeps the private key out of every log line and reply", async () => {
    await post("/transfer", { toAddress: freshAddress(), amount: "1" });
    await post("/transfer", { toAddress: freshAddress(), amount: "999999999" });
    await post("/transfer", { toAddress: "0x1", amount: "1" });
    const keyDigits = chain.demo.privateKey.slice(2).toLowerCase();
    expect(service.logs.length).toBeGreaterThan(3);
    for (const line of service.logs) expect(line.toLowerCase()).not.toContain(keyDigits);
  });
});

describe("closing with a request in flight", () => {
  it("answers it with Connection: close, so that its keep-alive connection does not hold the close up", async () => {
    const chain = await startTestChain(["--no-mining"]);
    const service = await startService(chain.target);
    const connection = new Pool(await listeningUrl(service), { connections: 1 });
    try {
      // Waits for a block that does not come (no mining) until its time-out: in flight when the close starts.
      const answer = connection.request({
        path: "/transfer?waitConfirmations=1&waitTimeoutMs=1500",
        method: "POST",
        headers: { "content-type": "application/json", ...AUTHORIZATION },
        body: JSON.stringify({ toAddress: freshAddress(), amount: "1" }),
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const closeStarted = Date.now();
      const closed = service.close();
      const response = await answer;
      expect(response.statusCode).toBe(200);
      expect(response.headers.connection).toBe("close");
      expect(response.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
      await response.body.json();
      await closed;
      // Well before the keep-alive time-out (72 s), which would otherwise have held it.
      expect(Date.now() - closeStarted).toBeLessThan(10_000);
    } finally {
      await connection.destroy();
      await chain.stop();
    }
  });
});

async function listeningUrl(service: TestService): Promise<string> {
  await service.app.listen({ host: "127.0.0.1", port: 0 });
  return `http://127.0.0.1:${(service.app.server.address() as AddressInfo).port}`;
}
