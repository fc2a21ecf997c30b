/**
 * The logs of every route, success and failure, node faults included, never hold the private key, an
 * API key, the Authorization header, or the credentials and path of RPC_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProxyFault, RpcProxy } from "../helpers/rpc-proxy.js";
import { type ProxiedService, type TestService, postJson, startServiceBehindProxy } from "../helpers/service.js";
import { type TestChain, freshAddress, mineBlocks, startTestChain } from "../helpers/test-chain.js";

const API_KEY = "super-secret-api-key-1234567890";
const WRONG_KEY = "wrong-but-secret-looking-key-0987";
const RPC_PASSWORD = "rpc-password-5f1d";
const RPC_PATH_KEY = "infura-project-key-77aa";
// A client that puts its key in the wrong place: the query string, or a header of its own choosing.
const QUERY_KEY = "query-string-key-3c9e1b";
const QUERY_TOKEN = "query-string-token-8d2f";
const ODD_HEADER_KEY = "odd-header-key-61b0";

describe("secrets in logs", () => {
  let chain: TestChain;
  let proxied: ProxiedService;
  let proxy: RpcProxy;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain();
    proxied = await startServiceBehindProxy(chain.target, { API_KEYS: API_KEY, RPC_TIMEOUT_MS: "300", LOG_LEVEL: "debug" }, (proxyUrl) => `${proxyUrl.replace("http://", `http://operator:${RPC_PASSWORD}@`)}/v3/${RPC_PATH_KEY}`);
    ({ proxy, service } = proxied);
  });
  afterAll(async () => {
    await proxied?.close();
    await chain?.stop();
  });

  it("keeps them out of every line, across every route and failure", async () => {
    const auth = { authorization: `Bearer ${API_KEY}` };
    const get = (url: string, headers: Record<string, string> = auth) => service.app.inject({ method: "GET", url, headers });
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" }, { ...auth, "idempotency-key": "k1" });
    await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" }, { ...auth, "idempotency-key": "k1" });
    await mineBlocks(chain, 1);
    await postJson(service.app, "/getTransaction", { Tx: sent.body.result.hash }, auth);
    await get(`/transactions/${sent.body.result.hash}`);
    await get("/wallet");
    await get("/metrics");
    await get("/health");
    await get("/ready");
    await get("/openapi.json");
    // Failures: bad input, bad keys, refusals, node faults.
    await postJson(service.app, "/transfer", { toAddress: "0x1", amount: "1" }, auth);
    await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "999999999" }, auth);
    await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" }, { authorization: `Bearer ${WRONG_KEY}` });
    await get(`/transactions/0x${"12".repeat(32)}`);
    await get(`/wallet?api_key=${QUERY_KEY}`);
    await get(`/wallet?token=${QUERY_TOKEN}&api_key=${QUERY_KEY}`, { "x-api-key": ODD_HEADER_KEY });
    await get(`/health?api_key=${QUERY_KEY}`);
    await get("/transfers?state=pending&limit=5");
    await get(`/wallet?snapshot=true&api_key=${QUERY_KEY}`);
    await postJson(service.app, `/transfer?waitConfirmations=0&api_key=${QUERY_KEY}`, { toAddress: freshAddress(), amount: "1" }, auth);
    await postJson(service.app, `/getTransaction?token=${QUERY_TOKEN}`, { Tx: sent.body.result.hash }, { "x-api-key": ODD_HEADER_KEY });
    const faults: ProxyFault[] = [{ kind: "hang" }, { kind: "http-500" }, { kind: "rpc-error", methods: ["eth_sendRawTransaction"], message: "max fee too low" }];
    for (const fault of faults) {
      proxy.fault = fault;
      await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" }, auth);
      await postJson(service.app, "/getTransaction", { Tx: `0x${"34".repeat(32)}` }, auth);
      await get("/wallet");
      await get("/ready");
      proxy.fault = undefined;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));

    const logs = service.logs.join("");
    expect(service.logs.length).toBeGreaterThan(40);
    expect(logs).toContain('"msg":"transfer sent"');
    // The path is still logged, and the values of the service's own query parameters.
    expect(logs).toContain('"url":"/wallet?api_key=[redacted]"');
    expect(logs).toContain('"url":"/transfers?state=pending&limit=5"');
    expect(logs).toContain('"url":"/wallet?snapshot=true&api_key=[redacted]"');
    expect(logs).toContain('"url":"/transfer?waitConfirmations=0&api_key=[redacted]"');
    for (const secret of [chain.demo.privateKey.slice(2), API_KEY, WRONG_KEY, RPC_PASSWORD, RPC_PATH_KEY, QUERY_KEY, QUERY_TOKEN, ODD_HEADER_KEY]) {
      expect(logs.toLowerCase(), secret).not.toContain(secret.toLowerCase());
    }
    // No Authorization header value either (the refusal message names the header's form: "Bearer <key>").
    expect(logs).not.toMatch(/bearer (?!<key>)/i);
  });
});
