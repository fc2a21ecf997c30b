/** Webhooks end to end: a real receiver verifies every event with the standardwebhooks package. */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet, parseUnits, toBeHex } from "ethers";
import { Value } from "@sinclair/typebox/value";
import { Webhook } from "standardwebhooks";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION, type ProxiedService, type TestService, postJson, startService, startServiceBehindProxy } from "../helpers/service.js";
import { type TestChain, freshAddress, mineBlocks, setEthBalance, startTestChain } from "../helpers/test-chain.js";
import { type EventName, WEBHOOKS_OPENAPI, eventSchema } from "../../src/webhooks/webhook-openapi.js";
import { type ReceivedWebhook, type WebhookReceiver, startWebhookReceiver } from "../helpers/webhook-receiver.js";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const RECEIVER_TOKEN = "receiver-token-4a1e9c";

/** Verifies a delivery as a receiver would, checks it against its OpenAPI schema, and returns its event. */
function verified(delivery: ReceivedWebhook, secret = SECRET): { type: string; timestamp: string; data: Record<string, unknown> } {
  const event = new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as ReturnType<typeof verified>;
  expect(Object.keys(WEBHOOKS_OPENAPI), "the event types the OpenAPI document lists").toContain(event.type);
  const schema = eventSchema(event.type as EventName);
  const firstError = Value.Errors(schema, event).First();
  if (firstError) expect.fail(`${event.type} does not match its OpenAPI schema: ${firstError.path} ${firstError.message}`);
  return event;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** For a failure message: what the service, the node and the outbox say of transfers not reported in time. */
async function whereTheyStand(chain: TestChain, service: TestService, hashes: string[]): Promise<string> {
  const states = await Promise.all(
    hashes.map(async (hash) => (await service.app.inject({ method: "GET", url: `/transactions/${hash}`, headers: AUTHORIZATION })).json()),
  );
  const mined = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
  const pending = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
  const pool = await chain.provider.send("txpool_status", []).catch((poolError: Error) => poolError.message);
  const deliveries = (await service.app.inject({ method: "GET", url: "/webhooks/deliveries?state=pending", headers: AUTHORIZATION })).json();
  return JSON.stringify({ notReported: states, nonces: { mined, pending }, pool, pendingDeliveries: deliveries, logTail: service.logs.slice(-40) });
}

describe("webhooks on anvil", () => {
  let chain: TestChain;
  let receiver: WebhookReceiver;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain();
    receiver = await startWebhookReceiver();
    // The receiver's own token rides in the query string: it must reach no log and no listing.
    // REBROADCAST_AFTER_MS 2 s: a transaction anvil holds unmined (see below) is replaced within the waits.
    service = await startService(chain.target, { WEBHOOK_URL: `${receiver.url}?token=${RECEIVER_TOKEN}`, WEBHOOK_SECRET: SECRET, WEBHOOK_RETRY_INITIAL_MS: "200", REBROADCAST_AFTER_MS: "2000" });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await chain?.stop();
  });

  it("100 transfers -> 100 transfer.confirmed, each verified, one id per event, none missing", async () => {
    const sent = await Promise.all(Array.from({ length: 100 }, () => postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" })));
    expect(sent.map((answer) => answer.statusCode)).toEqual(sent.map(() => 200));
    const hashes = new Set(sent.map((answer) => answer.body.result.hash as string));
    const events = () => receiver.received.map((delivery) => verified(delivery)).filter((event) => hashes.has(event.data.transferHash as string));
    const confirmed = () => events().filter((event) => event.type === "transfer.confirmed");
    // anvil in automine mode can hold one of many concurrent transactions unmined (foundry-rs/foundry#10122,
    // see stuck-transfers.test.ts); the service replaces it after REBROADCAST_AFTER_MS and a round.
    await until(() => confirmed().length >= 100).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${await whereTheyStand(chain, service, [...hashes].filter((hash) => !confirmed().some((event) => event.data.transferHash === hash)))}`);
    });
    expect(new Set(confirmed().map((event) => event.data.transferHash)).size).toBe(100);
    // An event names the hash that carries the transfer: the first one, or a replacement the receiver was told of.
    const replacements = new Set(events().filter((event) => event.type === "transfer.replaced").map((event) => event.data.hash));
    for (const event of confirmed()) expect(event.data.hash === event.data.transferHash || replacements.has(event.data.hash)).toBe(true);
    const ids = receiver.received.map((delivery) => delivery.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(ids.length);
    const one = confirmed().find((event) => event.data.hash === event.data.transferHash) as ReturnType<typeof verified>;
    expect(one.data).toMatchObject({ from: chain.demo.walletAddress, token: chain.demo.tokenAddress, amount: parseUnits("1", 18).toString(), amountInTokens: "1" });
    expect(one.data.confirmations).toBeGreaterThanOrEqual(1);
    expect(one.data.blockNumber).toEqual(expect.any(Number));
    // A receiver with the wrong secret rejects them: the signature is checked, not just present.
    expect(() => verified(receiver.received[0], `whsec_${randomBytes(32).toString("base64")}`)).toThrow();
  });

  it("a receiver that answers 500 for a while gets everything once it recovers, with the same id on every retry", async () => {
    receiver.answer(500);
    const before = receiver.received.length;
    const sent = await Promise.all(Array.from({ length: 3 }, () => postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "2" }, { "idempotency-key": `retry-${freshAddress()}` })));
    const hashes = sent.map((answer) => answer.body.result.hash as string);
    const received = (hash: string) => receiver.received.slice(before).filter((delivery) => verified(delivery).data.transferHash === hash);
    const attemptsOf = (hash: string) => received(hash).filter((delivery) => verified(delivery).type === "transfer.confirmed");
    // A transfer's events go out in order: one that anvil held unmined (see above) and the service replaced
    // has its transfer.replaced tried first, its confirmation after. Each transfer's first event is retried.
    const firstEventAttempts = (hash: string) => received(hash).filter((delivery) => delivery.headers["webhook-id"] === received(hash)[0]?.headers["webhook-id"]);
    await until(() => hashes.every((hash) => firstEventAttempts(hash).length >= 2), 60_000).catch(async (error: Error) => {
      throw new Error(`${error.message}: ${await whereTheyStand(chain, service, hashes.filter((hash) => firstEventAttempts(hash).length < 2))}`);
    });
    const pending = (await service.app.inject({ method: "GET", url: "/webhooks/deliveries?state=pending", headers: AUTHORIZATION })).json();
    expect(pending.deliveries.length).toBeGreaterThanOrEqual(3);
    expect(pending.deliveries[0]).toMatchObject({ endpoint: `${receiver.url}?[redacted]`, state: "pending" });
    // Each transfer's first event has been tried (and refused), and a later one of the same transfer waits behind it.
    const tried = pending.deliveries.filter((delivery: { attempts: number }) => delivery.attempts > 0);
    expect(tried.length).toBeGreaterThanOrEqual(3);
    expect(tried.map((delivery: { lastStatus: string }) => delivery.lastStatus)).toEqual(tried.map(() => "500"));
    expect((await service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body).toMatch(/^webhook_backlog [1-9]/m);

    receiver.answer(200);
    // Each is delivered at its next scheduled attempt, which backs off with every 500 it got (and a later
    // event of the same transfer right after it): what fails is deliveries still pending 20 s after the
    // latest scheduled retry, not ones whose schedule lies ahead.
    for (;;) {
      const stillPending = (await service.app.inject({ method: "GET", url: "/webhooks/deliveries?state=pending", headers: AUTHORIZATION })).json().deliveries;
      if (stillPending.length === 0) break;
      const retried = stillPending.filter((delivery: { attempts: number }) => delivery.attempts > 0);
      const latestScheduled = Math.max(0, ...retried.map((delivery: { nextAttemptAt: string }) => Date.parse(delivery.nextAttemptAt)));
      expect(Date.now() > latestScheduled + 20_000 ? stillPending : [], "deliveries 20 s past the latest scheduled retry").toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Without ?state: every delivery, newest first; the retried ones are delivered now.
    const latest = await service.app.inject({ method: "GET", url: "/webhooks/deliveries", headers: AUTHORIZATION });
    expect(latest.statusCode).toBe(200);
    const ids = latest.json().deliveries.map((delivery: { id: string }) => Number(delivery.id));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(latest.json().deliveries.filter((delivery: { state: string }) => delivery.state === "delivered").length).toBeGreaterThanOrEqual(3);
    for (const hash of hashes) {
      // Every event the same id on every try: retries, not new events.
      for (const event of new Set(received(hash).map((delivery) => verified(delivery).type))) {
        expect(new Set(received(hash).filter((delivery) => verified(delivery).type === event).map((delivery) => delivery.headers["webhook-id"])).size).toBe(1);
      }
      const attempts = attemptsOf(hash);
      // One transfer's deliveries, as the console's transfer page shows them: its confirmation (after a
      // transfer.replaced when anvil held it), delivered.
      const own = (await service.app.inject({ method: "GET", url: `/webhooks/deliveries?transfer=${hash}`, headers: AUTHORIZATION })).json().deliveries;
      expect(own.map((delivery: { state: string }) => delivery.state)).toEqual(own.map(() => "delivered"));
      expect(own.filter((delivery: { type: string }) => delivery.type === "transfer.confirmed").map((delivery: { eventId: string }) => delivery.eventId)).toEqual([
        attempts[0].headers["webhook-id"],
      ]);
      expect(own.map((delivery: { type: string }) => delivery.type).filter((type: string) => type !== "transfer.replaced")).toEqual(["transfer.confirmed"]);
      // The client's own Idempotency-Key is in the event (the journal's per-key prefix is not).
      expect(verified(attempts[0]).data.idempotencyKey).toMatch(/^retry-0x/);
    }
    const metrics = (await service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body;
    expect(metrics).toMatch(/^webhook_deliveries_total\{outcome="retrying"\} [1-9]/m);
    expect(metrics).toMatch(/^webhook_backlog 0$/m);
    expect(service.logs.some((line) => line.includes("webhook delivery not accepted"))).toBe(true);
    expect(service.logs.join("")).not.toContain(RECEIVER_TOKEN);
    expect(service.logs.join("")).not.toContain(SECRET.slice(6));
  }, 180_000);

  it("410 Gone stops retries of that event; an operator can retry it", async () => {
    receiver.answer(410);
    const before = receiver.received.length;
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const hash = sent.body.result.hash as string;
    const failed = async () => (await service.app.inject({ method: "GET", url: "/webhooks/deliveries?state=failed", headers: AUTHORIZATION })).json().deliveries;
    await until(async () => (await failed()).length === 1);
    const [delivery] = await failed();
    expect(delivery).toMatchObject({ state: "failed", attempts: 1, lastStatus: "410", nextAttemptAt: null });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.received.slice(before).filter((received) => verified(received).data.transferHash === hash)).toHaveLength(1);

    receiver.answer(200);
    const retried = await service.app.inject({ method: "POST", url: `/webhooks/deliveries/${delivery.id}/retry`, headers: AUTHORIZATION });
    expect(retried.json()).toEqual({ retrying: true });
    const attemptsOf = () => receiver.received.slice(before).filter((received) => verified(received).data.transferHash === hash);
    await until(() => attemptsOf().length === 2);
    const attempts = attemptsOf();
    expect(await failed()).toEqual([]);
    expect(attempts[1].headers["webhook-id"]).toBe(attempts[0].headers["webhook-id"]);
    expect((await service.app.inject({ method: "POST", url: "/webhooks/deliveries/999999/retry", headers: AUTHORIZATION })).json()).toMatchObject({ statusCode: 404, code: "DELIVERY_NOT_FOUND" });
  });
});

describe("webhooks for reverted, re-priced, cancelled and reorganised transfers", () => {
  let chain: TestChain;
  let receiver: WebhookReceiver;
  let proxied: ProxiedService;
  let service: TestService;
  // Owns the token from before the service starts: its ownership transfer uses a nonce of the wallet, which a
  // service started later counts (a transfer that met it would be held until the chain shows it final).
  let admin: ReturnType<typeof Wallet.createRandom>;

  beforeAll(async () => {
    chain = await startTestChain(["--no-mining"]);
    admin = Wallet.createRandom().connect(chain.provider);
    await setEthBalance(chain, admin.address, "10");
    await chain.token.getFunction("transferOwnership")(admin.address);
    await mineBlocks(chain, 1);
    receiver = await startWebhookReceiver();
    // 20 transfers wait for one block: more than MAX_IN_FLIGHT_PER_LANE's default, which anvil (any number
    // pending per sender) does not need.
    // The outflow watch off: its own count and log reads (at most one of each per check) are not following's.
    proxied = await startServiceBehindProxy(chain.target, {
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: SECRET,
      REBROADCAST_AFTER_MS: "500",
      MAX_IN_FLIGHT_PER_LANE: "32",
      OUTFLOW_CHECK_INTERVAL_MS: "0",
    });
    service = proxied.service;
  });
  afterAll(async () => {
    await proxied?.close();
    await receiver?.close();
    await chain?.stop();
  });

  it("follows 20 transfers mined in one block with one log read: no call per transfer", async () => {
    const sent = await Promise.all(Array.from({ length: 20 }, () => postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" })));
    const hashes = sent.map((answer) => answer.body.result.hash as string);
    await new Promise((resolve) => setTimeout(resolve, 300));
    proxied.proxy.calls.clear();
    await mineBlocks(chain, 1);
    await until(() => hashes.every((hash) => eventsOf(hash).some((event) => event.type === "transfer.confirmed")));
    const calls = Object.fromEntries(proxied.proxy.calls);
    console.log(`node calls from the block that mined 20 transfers until their 20 transfer.confirmed were journaled: ${JSON.stringify(calls)}`);
    // Following them: the wallet's nonce count (in the block's wallet snapshot, read before and after its
    // balances, see readWalletSnapshot) and one Transfer log read.
    expect(calls.eth_getLogs).toBe(1);
    expect(calls.eth_getTransactionCount).toBe(2);
    expect(calls.eth_getTransactionReceipt ?? 0).toBe(0);
  });

  it("a re-priced transfer -> transfer.replaced naming the new hash, then transfer.confirmed with the hash that was mined", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const first = sent.body.result.hash as string;
    const spike = 3n * BigInt(sent.body.result.maxFeePerGas.hex);
    for (let block = 0; block < 10 && !eventsOf(first).some((event) => event.type === "transfer.confirmed"); block++) {
      await chain.provider.send("anvil_setNextBlockBaseFeePerGas", [toBeHex(spike)]);
      await mineBlocks(chain, 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    const [replaced, confirmed] = eventsOf(first);
    expect(replaced).toMatchObject({ type: "transfer.replaced", data: { transferHash: first } });
    expect(replaced.data.hash).not.toBe(first);
    expect(confirmed).toMatchObject({ type: "transfer.confirmed", data: { transferHash: first, hash: replaced.data.hash } });
  });

  it("a cancelled transfer -> transfer.cancelled, carried by the cancel", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const first = sent.body.result.hash as string;
    const cancel = await service.app.inject({ method: "POST", url: `/transactions/${first}/cancel`, headers: AUTHORIZATION });
    expect(cancel.statusCode).toBe(202);
    await mineBlocks(chain, 1);
    await until(() => eventsOf(first).length > 0);
    // Nothing moved: a receiver adding up `amount` counts no money that never left the wallet.
    expect(eventsOf(first)).toEqual([
      expect.objectContaining({ type: "transfer.cancelled", data: expect.objectContaining({ hash: cancel.json().carriedBy, amount: "0", amountInTokens: "0", requestedAmount: "1000000000000000000" }) }),
    ]);
  });

  const eventsOf = (hash: string) => receiver.received.map((delivery) => verified(delivery)).filter((event) => event.data.transferHash === hash);

  it("a transfer that reverts on chain -> transfer.failed, with its receipt figures", async () => {
    // Another owner freezes the token in the block that mines the transfer, ahead of it (a higher tip).
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const hash = sent.body.result.hash as string;
    const token = chain.token.connect(admin) as typeof chain.token;
    await token.getFunction("setFrozen")(true, { maxPriorityFeePerGas: parseUnits("100", "gwei"), maxFeePerGas: parseUnits("200", "gwei") });
    await mineBlocks(chain, 1);
    expect((await chain.provider.getTransactionReceipt(hash))?.status).toBe(0);
    await until(() => eventsOf(hash).length > 0);
    const [failed] = eventsOf(hash);
    expect(failed).toMatchObject({ type: "transfer.failed", data: { hash, confirmations: 1, amount: "0", requestedAmount: "1000000000000000000" } });
    expect(Number(failed.data.gasUsed)).toBeGreaterThan(21_000);
    await token.getFunction("setFrozen")(false);
    await mineBlocks(chain, 1);
  });

  it("a confirmed transfer whose block leaves the chain -> transfer.reorged, then transfer.confirmed again when it is mined again", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "3" });
    const hash = sent.body.result.hash as string;
    await mineBlocks(chain, 1);
    await until(() => eventsOf(hash).length === 1);
    expect(eventsOf(hash)[0].type).toBe("transfer.confirmed");
    await new Promise((resolve) => setTimeout(resolve, 500));

    await chain.provider.send("anvil_reorg", [1, []]);
    await until(() => eventsOf(hash).length === 2);
    expect(eventsOf(hash)[1]).toMatchObject({ type: "transfer.reorged", data: { hash } });
    // Sent again by the service (same bytes), mined again.
    await until(async () => (await chain.provider.send("eth_getTransactionByHash", [hash])) !== null);
    await mineBlocks(chain, 1);
    await until(() => eventsOf(hash).length === 3);
    expect(eventsOf(hash)[2]).toMatchObject({ type: "transfer.confirmed", data: { hash } });
  });

  it("a cancelled transfer whose block leaves the chain -> transfer.reorged, then transfer.cancelled again: the receiver never keeps believing an outcome the chain undid", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "2" });
    const first = sent.body.result.hash as string;
    const cancel = (await service.app.inject({ method: "POST", url: `/transactions/${first}/cancel`, headers: AUTHORIZATION })).json();
    await mineBlocks(chain, 1);
    await until(() => eventsOf(first).length === 1);
    expect(eventsOf(first)[0]).toMatchObject({ type: "transfer.cancelled", data: { hash: cancel.carriedBy } });
    await new Promise((resolve) => setTimeout(resolve, 500));

    await chain.provider.send("anvil_reorg", [1, []]);
    await until(() => eventsOf(first).length === 2);
    expect(eventsOf(first)[1]).toMatchObject({ type: "transfer.reorged", data: { transferHash: first } });
    await until(async () => (await chain.provider.send("eth_getTransactionByHash", [cancel.carriedBy])) !== null);
    await mineBlocks(chain, 1);
    await until(() => eventsOf(first).length === 3);
    expect(eventsOf(first)[2]).toMatchObject({ type: "transfer.cancelled", data: { hash: cancel.carriedBy } });
  });
});


describe("kill -9 with deliveries pending and transfers unconfirmed", () => {
  let chain: TestChain;
  let receiver: WebhookReceiver;
  let journalDir: string;
  const running: ServerProcess[] = [];

  beforeAll(async () => {
    chain = await startTestChain(["--no-mining"]);
    receiver = await startWebhookReceiver();
    journalDir = mkdtempSync(join(tmpdir(), "webhook-crash-"));
  });
  afterAll(async () => {
    for (const server of running) server.child.kill("SIGKILL");
    await receiver?.close();
    await chain?.stop();
    rmSync(journalDir, { recursive: true, force: true });
  });

  const start = async () => {
    const server = await startServerProcess({
      RPC_URL: chain.rpcUrl,
      PRIVATE_KEY: chain.demo.privateKey,
      TOKEN_ADDRESS: chain.demo.tokenAddress,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      CHAIN_REFRESH_INTERVAL_MS: "100",
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_RETRY_INITIAL_MS: "200",
    });
    running.push(server);
    return server;
  };
  const transfer = async (server: ServerProcess) => {
    const answer = await request(`${server.baseUrl}/transfer`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTHORIZATION },
      body: JSON.stringify({ toAddress: freshAddress(), amount: "1" }),
    });
    return ((await answer.body.json()) as { result: { hash: string } }).result.hash;
  };
  const eventsOf = (hash: string) => receiver.received.filter((delivery) => verified(delivery).data.transferHash === hash);

  it("delivers every event after a restart, none lost; retries carry the same id", async () => {
    receiver.answer(500);
    const doomed = await start();
    const mined = await transfer(doomed);
    await mineBlocks(chain, 1);
    // Its event is journaled and refused at least once: a delivery is pending.
    await until(() => eventsOf(mined).length >= 1);
    const unconfirmed = await transfer(doomed);
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBeNull();

    receiver.answer(200);
    // Mined while the service is down.
    await mineBlocks(chain, 1);
    await start();
    await until(() => eventsOf(unconfirmed).length >= 1 && eventsOf(mined).length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const hash of [mined, unconfirmed]) {
      const deliveries = eventsOf(hash);
      expect(new Set(deliveries.map((delivery) => delivery.headers["webhook-id"])).size, `one event for ${hash}`).toBe(1);
      expect(verified(deliveries[0])).toMatchObject({ type: "transfer.confirmed", data: { hash } });
    }
  });
});
