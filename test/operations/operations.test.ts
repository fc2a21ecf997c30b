/** Health, readiness, /wallet, /metrics and the OpenAPI document, over HTTP against a real chain. */
import { Validator } from "@seriousme/openapi-schema-validator";
import { Wallet, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READINESS_CACHE_MS } from "../../src/http/routes/health.js";
import type { RpcProxy } from "../helpers/rpc-proxy.js";
import { AUTHORIZATION, type ProxiedService, type TestService, postJson, startService, startServiceBehindProxy } from "../helpers/service.js";
import { type TestChain, freshAddress, setEthBalance, startTestChain } from "../helpers/test-chain.js";

describe("operations", () => {
  let chain: TestChain;
  let proxied: ProxiedService;
  let proxy: RpcProxy;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain();
    proxied = await startServiceBehindProxy(chain.target, { RPC_TIMEOUT_MS: "300" });
    ({ proxy, service } = proxied);
  });
  afterAll(async () => {
    await proxied?.close();
    await chain?.stop();
  });

  const get = (url: string, headers: Record<string, string> = {}) => service.app.inject({ method: "GET", url, headers });

  it("GET /health answers while the node is down", async () => {
    proxy.fault = { kind: "hang" };
    const response = await get("/health");
    proxy.fault = undefined;
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: "ok" });
  });

  it("GET /ready is 200 with every check ok", async () => {
    const response = await get("/ready");
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: "ready", checks: { node: "ok", chainId: "ok", journal: "ok", gas: "ok" }, endpoints: { [proxy.url]: "in" } });
  });

  it.each([
    ["node", { kind: "hang" } as const, /node \(the Ethereum node did not answer\)/],
    ["chainId", { kind: "rpc-result", methods: ["eth_chainId"], result: "0x1" } as const, /chainId \(the node now serves chain 1, expected 31337\)/],
  ])("GET /ready is 503 NOT_READY naming the failing check: %s", async (check, fault, message) => {
    await waitOutReadinessCache();
    proxy.fault = fault;
    const response = await get("/ready");
    proxy.fault = undefined;
    await waitOutReadinessCache();
    expect(response.statusCode).toBe(503);
    const body = response.json();
    expect(body).toMatchObject({ statusCode: 503, code: "NOT_READY", error: "Service Unavailable" });
    expect(body.message).toMatch(message);
    expect(body.checks[check]).not.toBe("ok");
    expect((await get("/ready")).statusCode).toBe(200);
  });

  it("GET /ready is 503 naming gas when the wallet cannot pay for a transfer", async () => {
    const poor = Wallet.createRandom();
    await (await chain.token.getFunction("transfer")(poor.address, parseUnits("1", 18))).wait();
    await setEthBalance(chain, poor.address, "0");
    const poorService = await startService({ ...chain.target, privateKey: poor.privateKey });
    try {
      const response = await poorService.app.inject({ method: "GET", url: "/ready" });
      expect(response.statusCode).toBe(503);
      expect(response.json().message).toBe("not ready: gas (the wallet cannot pay the gas of one more transfer at the current fees)");
    } finally {
      await poorService.close();
    }
  });

  it("GET /ready asks the node at most once per cache interval, however often it is called", async () => {
    await waitOutReadinessCache();
    const chainIdReads = () => proxy.calls.get("eth_chainId") ?? 0;
    const before = chainIdReads();
    const answers = await Promise.all(Array.from({ length: 50 }, () => get("/ready")));
    for (const answer of answers) expect(answer.statusCode).toBe(200);
    // One evaluation for all fifty (each evaluation asks the node for its chain id once).
    expect(chainIdReads() - before).toBe(1);
  });

  it("GET /wallet shows balances, nonces and transfers in flight", async () => {
    await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const response = await get("/wallet", AUTHORIZATION);
    expect(response.statusCode).toBe(200);
    const report = response.json();
    const chainLatest = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
    expect(report).toMatchObject({
      address: chain.demo.walletAddress,
      chainId: 31337,
      token: { address: chain.demo.tokenAddress, decimals: 18 },
      nonces: { next: chainLatest, chainLatest, chainPending: chainLatest },
      jammed: false,
    });
    expect(BigInt(report.tokenBalance)).toBeGreaterThan(0n);
    expect(BigInt(report.ethBalance)).toBeGreaterThan(0n);
  });

  it("GET /networks without NETWORKS_FILE: the token named by its address, its own symbol() beside it for people", async () => {
    const response = await get("/networks", AUTHORIZATION);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      networks: [{ name: "31337", chainId: 31337, default: true, running: true, tokens: [{ symbol: chain.demo.tokenAddress, address: chain.demo.tokenAddress, decimals: 18, displaySymbol: "DEMO" }] }],
    });
  });

  it("GET /metrics has requests, transfers by outcome, RPC calls and wallet gauges", async () => {
    await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "99999999" });
    const response = await get("/metrics", AUTHORIZATION);
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toMatch(/^text\/plain/);
    const text = response.body;
    expect(text).toMatch(/http_requests_total\{route="\/transfer",method="POST",status="200"\} \d+/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="[^"]+",route="\/transfer",method="POST",status="417"\} \d+/);
    expect(text).toMatch(/transfers_total\{outcome="sent",code=""\} \d+/);
    expect(text).toMatch(/transfers_total\{outcome="refused",code="INSUFFICIENT_TOKEN_BALANCE"\} 1/);
    expect(text).toMatch(/rpc_requests_total\{method="eth_estimateGas",outcome="ok"\} \d+/);
    expect(text).toMatch(/rpc_request_duration_seconds_count\{method="eth_sendRawTransaction"\} \d+/);
    // Per network (without NETWORKS_FILE its chain id names it), and the token balance per token too.
    expect(text).toMatch(/wallet_eth_balance_wei\{network="31337"\} \d/);
    expect(text).toMatch(/wallet_token_balance\{network="31337",token="0x[0-9a-fA-F]{40}"\} \d/);
    expect(text).toMatch(/transfers_in_flight\{network="31337"\} \d/);
    expect(text).toMatch(/transfer_tokens_sent_total\{network="31337",token="0x[0-9a-fA-F]{40}"\} \d/);
  });

  it("GET /openapi.json is a valid OpenAPI document listing every route, status and the error envelope", async () => {
    const response = await get("/openapi.json");
    expect(response.statusCode).toBe(200);
    const document = response.json();
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(Object.keys(document.paths).sort()).toEqual(
      ["/address-book", "/address-book/{address}", "/audit", "/getTransaction", "/health", "/metrics", "/networks", "/payouts", "/payouts/{id}", "/ready", "/transactions/{hash}", "/transactions/{hash}/cancel", "/transactions/{hash}/reprice", "/transfer", "/transfers", "/transfers/activity", "/transfers/{id}/approve", "/transfers/{id}/reject", "/wallet", "/wallet/resume", "/webhooks/deliveries", "/webhooks/deliveries/{id}/retry"].sort(),
    );
    // The history in both forms a client may ask for.
    expect(Object.keys(document.paths["/transfers"].get.responses["200"].content).sort()).toEqual(["application/json", "text/csv"]);
    // Every event a receiver may get, with its payload schema (OpenAPI 3.1 webhooks).
    expect(Object.keys(document.webhooks).sort()).toEqual([
      "audit.head",
      "payout.item.failed",
      "payout.item.finalized",
      "payout.item.paid",
      "payout.item.reorged",
      "transfer.awaiting_approval",
      "transfer.cancelled",
      "transfer.confirmed",
      "transfer.failed",
      "transfer.finalized",
      "transfer.rejected",
      "transfer.reorged",
      "transfer.replaced",
      "wallet.unexpected_outflow",
    ]);
    expect(document.webhooks["transfer.confirmed"].post.requestBody.content["application/json"].schema.properties.data.required).toContain("transferHash");
    const transfer = document.paths["/transfer"].post;
    expect(Object.keys(transfer.responses).sort()).toEqual(["200", "202", "400", "401", "403", "409", "413", "415", "417", "422", "429", "500", "503"]);
    expect(transfer.responses["417"].content["application/json"].schema.required).toEqual(["statusCode", "code", "error", "message"]);
    expect(transfer.requestBody.content["application/json"].schema.properties.amount.examples).toBeDefined();
    expect(document.paths["/health"].get.security).toEqual([]);
    expect(document.components.securitySchemes.bearerAuth.scheme).toBe("bearer");
  });

  it("GET /docs serves Swagger UI", async () => {
    const page = await get("/docs/");
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/swagger/i);
  });
});

function waitOutReadinessCache(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, READINESS_CACHE_MS + 50));
}
