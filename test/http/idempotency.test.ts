/** Idempotency-Key: repeats answer from the journal, in flight 409, another body 422, and after a restart. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.js";
import { type TestService, postJson, startService } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, startTestChain, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";

describe.each(NODE_KINDS)("Idempotency-Key on %s", (kind) => {
  let chain: TestChain;
  let proxy: RpcProxy;
  let service: TestService;
  let journalDir: string;
  const journalEnv = () => ({ JOURNAL_PATH: join(journalDir, "transfers.sqlite"), RPC_TIMEOUT_MS: "500" });

  beforeAll(async () => {
    journalDir = mkdtempSync(join(tmpdir(), "idempotency-"));
    chain = await startTestChainOn(kind);
    proxy = await startRpcProxy(chain.rpcUrl);
    service = await startService({ ...chain.target, rpcUrl: proxy.url }, journalEnv());
  });
  afterAll(async () => {
    await service?.close();
    await proxy?.close();
    await chain?.stop();
    rmSync(journalDir, { recursive: true, force: true });
  });

  const transfer = (body: object, key?: string) => postJson(service.app, "/transfer", body, key === undefined ? {} : { "idempotency-key": key });
  const nonceCount = () => chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");

  it("answers a repeat with the same status and body, sending nothing", async () => {
    const body = { toAddress: freshAddress(), amount: "3" };
    const first = await transfer(body, "order-1");
    expect(first.statusCode).toBe(200);
    const count = await nonceCount();
    const repeat = await transfer(body, "order-1");
    expect(repeat.statusCode).toBe(200);
    expect(repeat.raw).toBe(first.raw);
    expect(repeat.headers["idempotent-replayed"]).toBe("true");
    expect(await nonceCount()).toBe(count);
    await waitForReceipt(chain, first.body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, body.toAddress)).toBe(parseUnits("3", 18));
  });

  it("accepts the IETF quoted form and treats 3 and \"3.0\" as the same body", async () => {
    const recipient = freshAddress();
    const first = await transfer({ toAddress: recipient, amount: 3 }, '"order-2"');
    const repeat = await transfer({ to: recipient.toLowerCase(), amount: "3.0" }, "order-2");
    expect(repeat.statusCode).toBe(200);
    expect(repeat.body.result.hash).toBe(first.body.result.hash);
  });

  it("answers 422 when the key comes back with another body", async () => {
    const recipient = freshAddress();
    const first = await transfer({ toAddress: recipient, amount: "1" }, "order-3");
    const other = await transfer({ toAddress: recipient, amount: "2" }, "order-3");
    expect(other.statusCode).toBe(422);
    expect(other.body).toMatchObject({ statusCode: 422, code: "IDEMPOTENCY_KEY_REUSED", error: "Unprocessable Entity" });
    await waitForReceipt(chain, first.body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("1", 18));
  });

  it("a retry storm of 20 parallel copies sends once; every answer is the same or 409", async () => {
    const body = { toAddress: freshAddress(), amount: "4" };
    const count = await nonceCount();
    const replies = await Promise.all(Array.from({ length: 20 }, () => transfer(body, "storm-1")));
    const successes = replies.filter((reply) => reply.statusCode === 200);
    const inFlight = replies.filter((reply) => reply.statusCode === 409);
    expect(successes.length + inFlight.length).toBe(20);
    expect(successes.length).toBeGreaterThanOrEqual(1);
    expect(new Set(successes.map((reply) => reply.raw)).size).toBe(1);
    for (const reply of inFlight) expect(reply.body.code).toBe("IDEMPOTENCY_KEY_IN_FLIGHT");
    expect(await nonceCount()).toBe(count + 1);
    await waitForReceipt(chain, successes[0].body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, body.toAddress)).toBe(parseUnits("4", 18));
  });

  it("keeps a 417 as the key's one answer: the repeat gets the same 417, another body 422, and nothing is sent", async () => {
    const body = { toAddress: freshAddress(), amount: "100000000" };
    const count = await nonceCount();
    const first = await transfer(body, "too-big");
    expect(first.statusCode).toBe(417);
    expect(first.body.code).toBe("INSUFFICIENT_TOKEN_BALANCE");
    const repeat = await transfer(body, "too-big");
    expect(repeat.statusCode).toBe(417);
    expect(repeat.raw).toBe(first.raw);
    expect((await transfer({ ...body, amount: "1" }, "too-big")).statusCode).toBe(422);
    expect(await nonceCount()).toBe(count);
    expect(await tokenBalanceOf(chain, body.toAddress)).toBe(0n);
  });

  it("refuses a malformed key with 400", async () => {
    const reply = await transfer({ toAddress: freshAddress(), amount: "1" }, " ");
    expect(reply.statusCode).toBe(400);
    expect(reply.body.code).toBe("INVALID_IDEMPOTENCY_KEY");
  });

  it("a broadcast whose answer is lost is answered 200 (the service owns it), and the repeat gets the same answer; it is on chain once", async () => {
    const body = { toAddress: freshAddress(), amount: "6" };
    const count = await nonceCount();
    proxy.fault = { kind: "swallow-reply", methods: ["eth_sendRawTransaction"] };
    const lost = await transfer(body, "lost-reply");
    proxy.fault = undefined;
    expect(lost.statusCode).toBe(200);
    expect(lost.body.result.nonce).toBe(count);

    const retry = await transfer(body, "lost-reply");
    expect(retry.statusCode).toBe(200);
    expect(retry.raw).toBe(lost.raw);
    // The next transfer takes the following nonce: the lost one's nonce stayed taken.
    const next = await transfer({ toAddress: freshAddress(), amount: "1" });
    expect(next.body.result.nonce).toBe(count + 1);
    await waitForReceipt(chain, next.body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, body.toAddress)).toBe(parseUnits("6", 18));
  });

  it("answers a repeat the same way after a restart, 200 and 417 alike", async () => {
    const body = { toAddress: freshAddress(), amount: "2.5" };
    const first = await transfer(body, "before-restart");
    const refusedBody = { toAddress: freshAddress(), amount: "100000000" };
    const refused = await transfer(refusedBody, "refused-before-restart");
    expect(refused.statusCode).toBe(417);
    await service.close();
    service = await startService({ ...chain.target, rpcUrl: proxy.url }, journalEnv());
    const count = await nonceCount();
    const repeat = await transfer(body, "before-restart");
    expect(repeat.statusCode).toBe(200);
    expect(repeat.raw).toBe(first.raw);
    const repeatedRefusal = await transfer(refusedBody, "refused-before-restart");
    expect(repeatedRefusal.statusCode).toBe(417);
    expect(repeatedRefusal.raw).toBe(refused.raw);
    expect(await nonceCount()).toBe(count);
    await waitForReceipt(chain, first.body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, body.toAddress)).toBe(parseUnits("2.5", 18));
  });
});

describe("a request refused before any work (policy 403)", () => {
  it("leaves its Idempotency-Key unused: the corrected retry runs", async () => {
    const chain = await startTestChain();
    const service = await startService(chain.target, { MAX_TRANSFER_AMOUNT: "10" });
    try {
      const recipient = freshAddress();
      const tooMuch = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "11" }, { "idempotency-key": "policy" });
      expect(tooMuch.statusCode).toBe(403);
      expect(tooMuch.body.code).toBe("AMOUNT_ABOVE_LIMIT");
      // In tokens, as the request wrote them (the token's symbol is its address without NETWORKS_FILE).
      expect(tooMuch.body.message).toBe("a single transfer may move at most 10 tokens (10000000000000000000 base units); 11 tokens (11000000000000000000 base units) requested");
      const allowed = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "10" }, { "idempotency-key": "policy" });
      expect(allowed.statusCode).toBe(200);
      await waitForReceipt(chain, allowed.body.result.hash, 5000);
      expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("10", 18));
    } finally {
      await service.close();
      await chain.stop();
    }
  });
});

describe("a transaction the node drops from its pool", () => {
  it("is sent again with the same bytes, and mined", async () => {
    const chain = await startTestChain(["--no-mining"]);
    const service = await startService(chain.target, { REBROADCAST_AFTER_MS: "300" });
    try {
      const recipient = freshAddress();
      const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "5" });
      const hash: string = sent.body.result.hash;
      await chain.provider.send("anvil_dropTransaction", [hash]);
      expect(await chain.provider.getTransaction(hash)).toBeNull();

      const deadline = Date.now() + 10_000;
      while (!(await chain.provider.getTransaction(hash)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await chain.provider.getTransaction(hash))?.hash).toBe(hash);
      await chain.provider.send("evm_mine", []);
      expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("5", 18));
      expect(service.logs.join("")).toMatch(/"outcomes":\["taken"\]/);
    } finally {
      await service.close();
      await chain.stop();
    }
  });
});

describe("a lost broadcast that a node refuses when it is sent again", () => {
  it("keeps its nonce (another node may hold the first copy), keeps sending it, and it is mined once; nothing jams", async () => {
    const chain = await startTestChain();
    const proxy = await startRpcProxy(chain.rpcUrl);
    const service = await startService({ ...chain.target, rpcUrl: proxy.url }, { RPC_TIMEOUT_MS: "300", REBROADCAST_AFTER_MS: "200" });
    try {
      const nonce = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
      const lostRecipient = freshAddress();
      proxy.fault = { kind: "hang", methods: ["eth_sendRawTransaction"] };
      const lost = await postJson(service.app, "/transfer", { toAddress: lostRecipient, amount: "1" });
      expect(lost.statusCode).toBe(200);
      expect(lost.body.result.nonce).toBe(nonce);
      // The background resend meets a refusal: that proves nothing about the copy sent first.
      proxy.fault = { kind: "rpc-error", methods: ["eth_sendRawTransaction"], message: "max fee per gas less than block base fee" };
      const deadline = Date.now() + 5000;
      while (!service.logs.join("").includes('"outcomes":["waiting: fee-cap-below-base-fee"]') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(service.logs.join("")).toContain('"outcomes":["waiting: fee-cap-below-base-fee"]');
      proxy.fault = undefined;

      const recipient = freshAddress();
      const next = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" });
      expect(next.statusCode).toBe(200);
      expect(next.body.result.nonce).toBe(nonce + 1);
      await waitForReceipt(chain, next.body.result.hash, 10_000);
      expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("2", 18));
      expect(await tokenBalanceOf(chain, lostRecipient)).toBe(parseUnits("1", 18));
      expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(nonce + 2);
    } finally {
      await service.close();
      await proxy.close();
      await chain.stop();
    }
  });
});
