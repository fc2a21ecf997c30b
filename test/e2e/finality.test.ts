/**
 * Transfers are followed until final: a reorganisation is seen from the block reads while the service is
 * idle, even when the reads skip blocks, and whatever outcome it undid is reported and followed again; a
 * transfer becomes final at the node's finalized block. anvil (its `finalized` block is 64 below the head;
 * anvil_reorg replaces recent blocks); Hardhat Network cannot reorganise on demand, so only anvil shows it.
 */
import { randomBytes } from "node:crypto";
import { toBeHex } from "ethers";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect } from "vitest";
import { AUTHORIZATION, type ProxiedService, type TestService, postJson, startService, startServiceBehindProxy } from "../helpers/service.js";
import { type TestChain, freshAddress, mineBlocks, startTestChain, tokenBalanceOf } from "../helpers/test-chain.js";
import { type WebhookReceiver, startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { describe, it } from "../helpers/suites-side-by-side.js";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("finality and reorganisations on anvil", () => {
  let chain: TestChain;
  let receiver: WebhookReceiver;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain(["--no-mining"]);
    receiver = await startWebhookReceiver();
    service = await startService(chain.target, { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET, REBROADCAST_AFTER_MS: "500" });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await chain?.stop();
  });

  const eventsOf = (hash: string) =>
    receiver.received
      .map((delivery) => new Webhook(SECRET).verify(delivery.body, delivery.headers as Record<string, string>) as { type: string; data: Record<string, unknown> })
      .filter((event) => event.data.transferHash === hash);
  const status = async (hash: string) => (await service.app.inject({ method: "GET", url: `/transactions/${hash}`, headers: AUTHORIZATION })).json();

  it("a 3-block reorganisation while idle, the head moving on past it: seen within seconds, reported, sent again, paid once", async () => {
    const recipient = freshAddress();
    const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "4" });
    const hash = sent.body.result.hash as string;
    await mineBlocks(chain, 3);
    await until(() => eventsOf(hash).some((event) => event.type === "transfer.confirmed"), "transfer.confirmed");
    // Idle: nothing in flight, the head read every 5 s.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    await chain.provider.send("anvil_reorg", [3, []]);
    expect(await chain.provider.send("eth_getTransactionByHash", [hash])).toBeNull();
    // The chain goes on: the next block read is several blocks past the last one the service saw.
    await chain.provider.send("anvil_mine", [toBeHex(6)]);
    const seenAt = Date.now();
    await until(() => eventsOf(hash).some((event) => event.type === "transfer.reorged"), "transfer.reorged", 12_000);
    expect(Date.now() - seenAt).toBeLessThan(10_000);
    expect((await status(hash)).finalized).toBe(false);
    await until(async () => (await chain.provider.send("eth_getTransactionByHash", [hash])) !== null, "the same bytes sent again");
    await mineBlocks(chain, 1);
    await until(() => eventsOf(hash).filter((event) => event.type === "transfer.confirmed").length === 2, "transfer.confirmed again");
    expect(eventsOf(hash).map((event) => event.type)).toEqual(["transfer.confirmed", "transfer.reorged", "transfer.confirmed"]);
    expect(await tokenBalanceOf(chain, recipient)).toBe(4n * 10n ** 18n);
  });

  it("a reorganisation that moves a confirmed transfer to another block: transfer.reorged, then transfer.confirmed naming the new block; paid once", async () => {
    const recipient = freshAddress();
    const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" });
    const hash = sent.body.result.hash as string;
    const raw = await chain.provider.send("eth_getRawTransactionByHash", [hash]);
    await mineBlocks(chain, 1);
    await until(() => eventsOf(hash).length === 1, "transfer.confirmed");
    const [confirmed] = eventsOf(hash);
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    // The block is replaced by another that holds the same transaction.
    await chain.provider.send("anvil_reorg", [1, [[raw, 0]]]);
    const moved = await chain.provider.getTransactionReceipt(hash);
    expect(moved?.blockHash).not.toBe(confirmed.data.blockHash);
    await until(() => eventsOf(hash).length === 3, "transfer.reorged and transfer.confirmed again");
    expect(eventsOf(hash).map((event) => event.type)).toEqual(["transfer.confirmed", "transfer.reorged", "transfer.confirmed"]);
    expect(eventsOf(hash)[2].data).toMatchObject({ hash, blockHash: moved?.blockHash, blockNumber: moved?.blockNumber });
    expect(await status(hash)).toMatchObject({ state: "confirmed", blockHash: moved?.blockHash });
    expect(await tokenBalanceOf(chain, recipient)).toBe(2n * 10n ** 18n);
  });

  it("is final once its block is at or below the node's finalized block: the status says so, and transfer.finalized follows the outcome", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const hash = sent.body.result.hash as string;
    await mineBlocks(chain, 1);
    await until(() => eventsOf(hash).length === 1, "transfer.confirmed");
    expect(await status(hash)).toMatchObject({ state: "confirmed", finalized: false, finalizedBlock: null });

    // anvil's finalized block is 64 below its head.
    await chain.provider.send("anvil_mine", [toBeHex(70)]);
    await until(async () => (await status(hash)).finalized === true, "finalized in the status document");
    const document = await status(hash);
    expect(document.finalizedBlock).toBeGreaterThanOrEqual(document.blockNumber);
    await until(() => eventsOf(hash).length === 2, "transfer.finalized");
    expect(eventsOf(hash)[1]).toMatchObject({ type: "transfer.finalized", data: { hash, blockNumber: document.blockNumber, blockHash: document.blockHash } });
  });
});

describe("a node whose transaction index outlived a reorganisation (go-ethereum#28885)", () => {
  let chain: TestChain;
  let proxied: ProxiedService;

  beforeAll(async () => {
    chain = await startTestChain(["--no-mining"]);
    // The outside sender is this test's way to take a nonce, not a compromise to pause signing for.
    proxied = await startServiceBehindProxy(chain.target, { REBROADCAST_AFTER_MS: "500", PAUSE_ON_UNEXPECTED_OUTFLOW: "false" });
  });
  afterAll(async () => {
    await proxied?.close();
    await chain?.stop();
  });

  it("believes no receipt of a block that left the chain: a transfer whose nonce another transaction took there is signed again once that is final, and paid once", async () => {
    const { proxy, service } = proxied;
    // Receipts and lookups as the index had them: what the node last said of a hash, once it says nothing.
    const remembered = new Map<string, unknown>();
    proxy.fault = {
      kind: "script",
      answer: ({ method, params }) => {
        if (method !== "eth_getTransactionReceipt" && method !== "eth_getTransactionByHash") return undefined;
        const key = `${method} ${String(params[0]).toLowerCase()}`;
        return {
          transform: (result) => {
            if (result !== null) remembered.set(key, result);
            return result ?? remembered.get(key) ?? null;
          },
        };
      },
    };
    const status = async (hash: string) => (await service.app.inject({ method: "GET", url: `/transactions/${hash}`, headers: AUTHORIZATION })).json();
    const recipient = freshAddress();
    const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "3" });
    expect(sent.statusCode).toBe(200);
    const hash = sent.body.result.hash as string;
    await mineBlocks(chain, 1);
    await until(async () => (await status(hash)).state === "confirmed", "confirmed");
    const minedIn = (await status(hash)).blockHash as string;

    // The block is replaced by one where another sender of the wallet's key used the transfer's nonce.
    const network = await chain.provider.getNetwork();
    const outside = await chain.hotWallet.signTransaction({
      type: 2,
      chainId: network.chainId,
      to: chain.hotWallet.address,
      value: 0n,
      nonce: sent.body.result.nonce as number,
      gasLimit: 21_000n,
      maxFeePerGas: 10n ** 11n,
      maxPriorityFeePerGas: 10n ** 9n,
    });
    await chain.provider.send("anvil_reorg", [1, [[outside, 0]]]);
    expect(await chain.provider.send("eth_getTransactionByHash", [hash])).toBeNull();
    const stale = (await (await fetch(proxy.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getTransactionReceipt", params: [hash] }) })).json()) as { result: { blockHash: string } };
    expect(stale.result.blockHash).toBe(minedIn);
    await chain.provider.send("anvil_mine", [toBeHex(6)]);
    // Neither the journal nor an answer takes the index's word: pending, no confirmation.
    await until(async () => (await status(hash)).state === "pending", "no longer confirmed from the stale receipt");
    const looked = await postJson(service.app, "/getTransaction", { Tx: hash });
    expect(looked.body.result).toMatchObject({ hash, blockNumber: null, blockHash: null, confirmations: 0 });

    // Once the outsider's block is final (anvil: 64 below the head), the transfer is signed again.
    await chain.provider.send("anvil_mine", [toBeHex(70)]);
    await until(async () => (await status(hash)).carriedBy !== hash && (await status(hash)).carriedBy !== null, "signed again at another nonce", 20_000);
    await mineBlocks(chain, 1);
    await until(async () => (await tokenBalanceOf(chain, recipient)) > 0n, "paid");
    await chain.provider.send("anvil_mine", [toBeHex(70)]);
    await until(async () => (await status(hash)).finalized === true, "final");
    expect(await tokenBalanceOf(chain, recipient)).toBe(3n * 10n ** 18n);
    expect((await status(hash)).blockHash).not.toBe(minedIn);
  });
});
