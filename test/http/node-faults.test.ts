/** What the service answers when the node misbehaves, and that it recovers by itself when the node is back. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READINESS_CACHE_MS } from "../../src/http/routes/health.js";
import type { RpcProxy } from "../helpers/rpc-proxy.js";
import { AUTHORIZATION, type ProxiedService, type TestService, postJson, startServiceBehindProxy } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, mineBlocks, startTestChain, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";

// The answers to node faults are the contract (417 only when nothing was or will be sent, 200 when the
// fate is unknown), so they are proven on both node implementations.
describe.each(NODE_KINDS)("node faults, through a proxy in front of %s", (kind) => {
  let chain: TestChain;
  let proxied: ProxiedService;
  let proxy: RpcProxy;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    proxied = await startServiceBehindProxy(chain.target, { RPC_TIMEOUT_MS: "300", REBROADCAST_AFTER_MS: "200" });
    ({ proxy, service } = proxied);
  });
  afterAll(async () => {
    await proxied?.close();
    await chain?.stop();
  });

  const transfer = (toAddress = freshAddress()) => postJson(service.app, "/transfer", { toAddress, amount: "1" });
  const lookUp = () => postJson(service.app, "/getTransaction", { Tx: `0x${"ab".repeat(32)}` });

  it.each([
    ["a node that does not answer in time", () => (proxy.fault = { kind: "hang" }), "TIMEOUT"],
    ["a node answering HTTP 500", () => (proxy.fault = { kind: "http-500" }), "SERVER_ERROR"],
    ["a gateway answering its time-out in JSON-RPC words", () => (proxy.fault = { kind: "rpc-error", methods: ["eth_estimateGas"], message: "request timed out" }), "TIMEOUT"],
  ] as [string, () => void, string][])("transfer: %s before anything is sent gives 503 %s (slow is not refused); the key is left unused, and its retry is paid once", async (_label, injectFault, code) => {
    const recipient = freshAddress();
    const key = { "idempotency-key": `transient-${recipient}` };
    injectFault();
    const failed = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" }, key);
    proxy.fault = undefined;
    expect(failed.statusCode).toBe(503);
    expect(failed.body).toMatchObject({ statusCode: 503, code });
    expect(failed.body.message).not.toContain(proxy.url);
    const retried = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" }, key);
    expect(retried.statusCode, retried.raw).toBe(200);
    await waitForReceipt(chain, retried.body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(2n * 10n ** 18n);
    const repeat = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" }, key);
    expect(repeat.raw).toBe(retried.raw);
  });

  const cases: [string, () => void, string][] = [
    ["a node refusing the fee", () => (proxy.fault = { kind: "rpc-error", methods: ["eth_sendRawTransaction"], message: "max fee per gas less than block base fee" }), "FEE_REFUSED"],
    ["a node whose pool is full", () => (proxy.fault = { kind: "rpc-error", methods: ["eth_sendRawTransaction"], message: "txpool is full" }), "NODE_POOL_FULL"],
    // ethers calls any error answer to a simulation a call exception; the node's own fault is no revert.
    ["a node failing the simulation in words no table knows", () => (proxy.fault = { kind: "rpc-error", methods: ["eth_estimateGas"], message: "Internal error" }), "UNKNOWN_ERROR"],
  ];

  it.each(cases)("transfer: %s gives 417 %s, then works again", async (_label, injectFault, code) => {
    injectFault();
    const failed = await transfer();
    proxy.fault = undefined;
    expect(failed.statusCode).toBe(417);
    expect(failed.body).toMatchObject({ statusCode: 417, code, error: "Expectation Failed" });
    expect(failed.body.message).not.toContain(proxy.url);
    expect(failed.body.message).not.toContain("127.0.0.1");
    const recipient = freshAddress();
    const works = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" });
    expect(works.statusCode).toBe(200);
    await waitForReceipt(chain, works.body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(2n * 10n ** 18n);
  });

  it.each([
    ["an error no table knows (Besu's -32603, a gateway's body)", { kind: "rpc-error", methods: ["eth_sendRawTransaction"], message: "Internal error" } as const],
    ["a lost answer", { kind: "swallow-reply", methods: ["eth_sendRawTransaction"] } as const],
    ["an endpoint rate limiting the broadcast (HTTP 429, after the transport's own retries)", { kind: "http-429", methods: ["eth_sendRawTransaction"] } as const],
    // Words for a used nonce prove nothing about these bytes (a gateway may have retried them elsewhere, and
    // they may be what used it); the chain's count did not move here, so the bytes go out again and are mined.
    ["a node calling the nonce used (\"nonce too low\")", { kind: "rpc-error", methods: ["eth_sendRawTransaction"], message: "nonce too low" } as const],
    ["a node calling the nonce used in Nethermind's words", { kind: "rpc-error", methods: ["eth_sendRawTransaction"], message: "OldNonce, Current nonce: 7, nonce of rejected tx: 5" } as const],
    ["a node calling the nonce taken by another pending transaction", { kind: "rpc-error", methods: ["eth_sendRawTransaction"], message: "replacement transaction underpriced" } as const],
  ])("transfer: %s is no refusal: 200, the bytes stay journaled and are sent until a node holds them, mined once", async (_label, fault) => {
    const recipient = freshAddress();
    proxy.fault = fault;
    const sent = await transfer(recipient);
    proxy.fault = undefined;
    expect(sent.statusCode).toBe(200);
    const hash: string = sent.body.result.hash;
    const mined = await waitForReceipt(chain, hash, 10_000).catch((error: Error) => {
      const notable = service.logs.filter((line) => !/request completed|transfer sent/.test(line)).slice(-30);
      throw new Error(`${error.message}; the service's last notable log lines:\n${notable.join("")}`);
    });
    expect(mined.status).toBe(1);
    expect(await tokenBalanceOf(chain, recipient)).toBe(10n ** 18n);
  });

  it("transfer?waitConfirmations: a node that fails every read once the transfer is sent: 200 with the record (nothing to retry), paid once", async () => {
    const recipient = freshAddress();
    let broadcast = false;
    proxy.fault = {
      kind: "script",
      answer: ({ method }) => {
        if (method === "eth_sendRawTransaction") broadcast = true;
        else if (broadcast) return "hang";
        return undefined;
      },
    };
    const started = Date.now();
    const waited = await postJson(service.app, "/transfer?waitConfirmations=1&waitTimeoutMs=1500", { toAddress: recipient, amount: "1" });
    proxy.fault = undefined;
    expect(waited.statusCode, waited.raw).toBe(200);
    expect(waited.body.result.confirmations).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    await waitForReceipt(chain, waited.body.result.hash, 10_000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(10n ** 18n);
  });

  it("transfer: an endpoint rate limiting the simulation answers 503 NODE_RATE_LIMITED (not a failed transfer), and nothing is sent", async () => {
    const before = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
    proxy.fault = { kind: "http-429", methods: ["eth_estimateGas"] };
    const limited = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" }, { "idempotency-key": "limited" });
    proxy.fault = undefined;
    expect(limited.statusCode).toBe(503);
    expect(limited.body.code).toBe("NODE_RATE_LIMITED");
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending")).toBe(before);
    // The key was left unused: the retry runs.
    const retry = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" }, { "idempotency-key": "limited" });
    expect(retry.statusCode).toBe(200);
  });

  it("the node's own refusal text is quoted", async () => {
    proxy.fault = { kind: "rpc-error", methods: ["eth_sendRawTransaction"], message: "max fee per gas less than block base fee" };
    const failed = await transfer();
    proxy.fault = undefined;
    expect(failed.body.message).toContain("max fee per gas less than block base fee");
  });

  it.each([
    ["hang", { kind: "hang" } as const],
    ["HTTP 500", { kind: "http-500" } as const],
  ])("lookup: a node fault (%s) gives 503 NODE_UNAVAILABLE, then works again", async (_label, fault) => {
    proxy.fault = fault;
    const failed = await lookUp();
    proxy.fault = undefined;
    expect(failed.statusCode).toBe(503);
    expect(failed.body).toMatchObject({ statusCode: 503, code: "NODE_UNAVAILABLE", error: "Service Unavailable" });
    expect((await lookUp()).statusCode).toBe(200);
  });

  // Last: the service remembers the refusal for the rest of its life.
  it("transfer: a node that refuses the estimate's block parameter (-32602, as some forks did) is asked without it, and the transfer is sent", async () => {
    const estimates: unknown[][] = [];
    proxy.fault = {
      kind: "script",
      answer: ({ method, params }) => {
        if (method !== "eth_estimateGas") return undefined;
        estimates.push(params);
        return params.length > 1 ? { error: { code: -32602, message: "too many arguments, want at most 1" } } : undefined;
      },
    };
    const recipient = freshAddress();
    const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "1" });
    const again = await transfer();
    proxy.fault = undefined;
    expect(sent.statusCode, JSON.stringify(sent.body)).toBe(200);
    expect(again.statusCode).toBe(200);
    // Refused once with the block, then without it: the second transfer did not try it again.
    expect(estimates.map((params) => params.length)).toEqual([2, 1, 1]);
    await waitForReceipt(chain, sent.body.result.hash, 10_000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(10n ** 18n);
  });
});

describe("a node that stops and starts again", () => {
  let chain: TestChain;
  let proxied: ProxiedService;
  let proxy: RpcProxy;
  let service: TestService;

  // The node is reached through a proxy that stops listening and comes back on the same port: to the
  // service that is a node going down and returning, while the chain behind it keeps its state.
  beforeAll(async () => {
    chain = await startTestChain();
    proxied = await startServiceBehindProxy(chain.target);
    ({ proxy, service } = proxied);
  });
  afterAll(async () => {
    await proxied?.close();
    await chain?.stop();
  });

  it("gives 503 NETWORK_ERROR to transfers and 503 to lookups while down, and serves again without a restart", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(sent.statusCode).toBe(200);
    const hash: string = sent.body.result.hash;

    await proxy.goDown();
    const transferWhileDown = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(transferWhileDown.statusCode).toBe(503);
    expect(transferWhileDown.body.code).toBe("NETWORK_ERROR");
    const lookupWhileDown = await postJson(service.app, "/getTransaction", { Tx: `0x${"cd".repeat(32)}` });
    expect(lookupWhileDown.statusCode).toBe(503);
    expect(lookupWhileDown.body.code).toBe("NODE_UNAVAILABLE");
    expect((await service.app.inject({ method: "GET", url: "/ready" })).statusCode).toBe(503);

    await proxy.comeBack();
    const lookupAfter = await postJson(service.app, "/getTransaction", { Tx: hash });
    expect(lookupAfter.statusCode).toBe(200);
    expect(lookupAfter.body.result.hash).toBe(hash);
    expect(lookupAfter.body.result.confirmations).toBeGreaterThanOrEqual(1);
    const recipient = freshAddress();
    const sentAfter = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "3" });
    expect(sentAfter.statusCode).toBe(200);
    // anvil may answer the broadcast a moment before it mines the block.
    await waitForReceipt(chain, sentAfter.body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(3n * 10n ** 18n);
    // /ready's answer is worked out at most once a second, whoever asks.
    await new Promise((resolve) => setTimeout(resolve, READINESS_CACHE_MS + 50));
    expect((await service.app.inject({ method: "GET", url: "/ready" })).statusCode).toBe(200);
  });
});

describe("a lagging backend behind a load-balanced endpoint", () => {
  let chain: TestChain;
  let proxied: ProxiedService;

  beforeAll(async () => {
    chain = await startTestChain();
    proxied = await startServiceBehindProxy(chain.target, { REBROADCAST_AFTER_MS: "200" });
  });
  afterAll(async () => {
    await proxied?.close();
    await chain?.stop();
  });

  it("is lag, not loss: a mined transfer stays confirmed, nothing is marked replaced or sent twice, nonces never go back", async () => {
    const { proxy, service } = proxied;
    const recipient = freshAddress();
    const mined = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "1" });
    await waitForReceipt(chain, mined.body.result.hash, 5000);
    await mineBlocks(chain, 1);
    expect((await postJson(service.app, "/getTransaction", { Tx: mined.body.result.hash })).body.result.confirmations).toBeGreaterThanOrEqual(1);

    // From now on the service talks to a backend that has seen none of its transactions.
    proxy.fault = { kind: "lagging", nonceCount: mined.body.result.nonce };
    const during = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(during.statusCode).toBe(200);
    expect(during.body.result.nonce).toBe(mined.body.result.nonce + 1);
    // A receipt seen once and then missing is lag: the lookup still answers what was seen.
    const lookup = await postJson(service.app, "/getTransaction", { Tx: mined.body.result.hash });
    expect(lookup.body.result.blockNumber).not.toBeNull();
    // Background rounds meet "nonce too low" for the transfer the backend cannot see, and receipts that
    // are missing: with no new block meanwhile, nothing is concluded.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(service.services.journal.findByHash(during.body.result.hash)?.state).not.toBe("replaced");
    proxy.fault = undefined;

    const after = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(after.body.result.nonce).toBe(mined.body.result.nonce + 2);
    await waitForReceipt(chain, after.body.result.hash, 5000);
    const status = await service.app.inject({ method: "GET", url: `/transactions/${during.body.result.hash}`, headers: AUTHORIZATION });
    expect(status.json().state).toBe("confirmed");
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(mined.body.result.nonce + 3);
    expect(await tokenBalanceOf(chain, recipient)).toBe(10n ** 18n);
  });
});

describe("a status read while the node does not return a mined transfer (no lookup cache)", () => {
  it("answers from the journal without changing it: lag is no proof of replacement", async () => {
    const chain = await startTestChain();
    const proxied = await startServiceBehindProxy(chain.target, { TRANSACTION_CACHE_SIZE: "0" });
    try {
      const { proxy, service } = proxied;
      const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
      await waitForReceipt(chain, sent.body.result.hash, 5000);
      // Once the snapshot shows its nonce mined, the journal says so.
      const deadline = Date.now() + 5000;
      while (service.services.journal.findByHash(sent.body.result.hash)?.state !== "nonce-used" && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(service.services.journal.findByHash(sent.body.result.hash)?.state).toBe("nonce-used");

      proxy.fault = { kind: "lagging", nonceCount: 0 };
      for (let read = 0; read < 3; read++) {
        const status = await service.app.inject({ method: "GET", url: `/transactions/${sent.body.result.hash}`, headers: AUTHORIZATION });
        expect(status.json().state).toBe("unknown");
      }
      expect(service.services.journal.findByHash(sent.body.result.hash)?.state).toBe("nonce-used");
      proxy.fault = undefined;
      const status = await service.app.inject({ method: "GET", url: `/transactions/${sent.body.result.hash}`, headers: AUTHORIZATION });
      expect(status.json().state).toBe("confirmed");
    } finally {
      await proxied.close();
      await chain.stop();
    }
  });
});
