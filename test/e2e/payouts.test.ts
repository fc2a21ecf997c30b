/**
 * Payouts end to end, on anvil and Hardhat Network: a batch pays many recipients in one transaction, each
 * item on its own (a recipient the token blocks fails alone, with its reason); a repeated batch key answers
 * the first batch; an item id paid once is never paid again; kill -9 between signing and answering loses
 * nothing and pays nothing twice; a reorganisation that drops the batch sends it again (anvil only: Hardhat
 * Network cannot reorganise on demand); webhooks per item, through a reorganisation to finality (anvil).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { type Contract, Wallet, parseUnits } from "ethers";
import { Webhook } from "standardwebhooks";
import { request } from "undici";
import { afterAll, beforeAll, expect } from "vitest";
import { deployPayoutContract } from "../../src/dev/demo-chain.js";
import { type PayoutItemEventName, type TransferEventName, eventSchema } from "../../src/webhooks/webhook-openapi.js";
import { type WebhookReceiver, startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION, type TestService, postJson, startService } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, mineBlocks, setEthBalance, startTestChain, startTestChainOn, waitForReceipt } from "../helpers/test-chain.js";
import { deployTestToken } from "../helpers/test-tokens.js";
import { waitUntil } from "../helpers/wait-until.js";
import { describe, it } from "../helpers/suites-side-by-side.js";

interface PayoutAnswer {
  id: number;
  contract: string;
  transaction: { hash: string; nonce: number; to: string };
  items: { id: string; toAddress: string; amount: string; state: string; reason: string | null; duplicateOf: number | null }[];
  status?: { state: string; carriedBy: string; finalized: boolean };
}

/** A token (RestrictedToken: a USDC-style blocklist) the hot wallet holds, owned by another account, and the payout contract. */
async function setUpPayouts(chain: TestChain): Promise<{ token: Contract; payoutContract: string }> {
  const owner = new Wallet(Wallet.createRandom().privateKey, chain.provider);
  await setEthBalance(chain, owner.address, "10");
  const token = await deployTestToken(chain, "RestrictedToken", parseUnits("1000000", 6), owner);
  return { token, payoutContract: await deployPayoutContract(owner) };
}

describe.each(NODE_KINDS)("payouts on %s", (kind) => {
  let chain: TestChain;
  let token: Contract;
  let payoutContract: string;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    ({ token, payoutContract } = await setUpPayouts(chain));
    service = await startService({ ...chain.target, tokenAddress: await token.getAddress() }, { PAYOUT_CONTRACT: payoutContract, MAX_TRANSFER_AMOUNT: "5000", REBROADCAST_AFTER_MS: "1000" });
  }, 120_000);
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  const balanceOf = async (address: string) => (await token.getFunction("balanceOf")(address)) as bigint;
  const nonceNow = () => chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
  const pay = (items: object[], key: string) => postJson(service.app, "/payouts", { items }, { "idempotency-key": key });
  const payoutOf = async (id: number) => (await service.app.inject({ method: "GET", url: `/payouts/${id}`, headers: AUTHORIZATION })).json() as PayoutAnswer;
  const settled = async (id: number): Promise<PayoutAnswer> => {
    let latest: PayoutAnswer | undefined;
    await waitUntil(async () => (latest = await payoutOf(id)).items.every((item) => item.state !== "pending"), 30_000, () => `payout ${id} settled: ${JSON.stringify(latest?.items.map((item) => item.state))} ${JSON.stringify(latest?.status)}`);
    return latest as PayoutAnswer;
  };
  // The first payout in the token waits for the wallet's approval of the contract: 503, the key unused.
  const payOnceApproved = async (items: object[], key: string) => {
    let answer = await pay(items, key);
    for (const deadline = Date.now() + 30_000; answer.statusCode === 503 && answer.body.code === "PAYOUT_APPROVAL_PENDING" && Date.now() < deadline; answer = await pay(items, key)) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return answer;
  };

  it("checks every item before anything is signed: a bad item is a 400 naming its index; the policy per item a 403; without a key, 400", async () => {
    const nonceBefore = await nonceNow();
    const good = { toAddress: freshAddress(), amount: "1", id: "check-0" };
    const badAddress = await pay([good, good, good, { toAddress: "0x1234", amount: "1", id: "check-3" }].map((item, index) => ({ ...item, id: `check-${index}` })), "checks-1");
    expect({ status: badAddress.statusCode, code: badAddress.body.code }).toEqual({ status: 400, code: "INVALID_PAYOUT" });
    expect(badAddress.body.message).toMatch(/^items\[3\]\.toAddress/);
    const badAmount = await pay([good, { toAddress: freshAddress(), amount: "0.0000001", id: "check-1" }], "checks-2");
    expect(badAmount.body.message).toMatch(/^items\[1\]\.amount/);
    const twice = await pay([good, { ...good, toAddress: freshAddress() }], "checks-3");
    expect(twice.body.message).toMatch(/^items\[1\]\.id: "check-0" is also items\[0\]'s/);
    const aboveLimit = await pay([good, { toAddress: freshAddress(), amount: "5001", id: "check-big" }], "checks-4");
    expect({ status: aboveLimit.statusCode, code: aboveLimit.body.code }).toEqual({ status: 403, code: "AMOUNT_ABOVE_LIMIT" });
    expect(aboveLimit.body.message).toMatch(/^items\[1\]: /);
    const withoutKey = await postJson(service.app, "/payouts", { items: [good] });
    expect({ status: withoutKey.statusCode, code: withoutKey.body.code }).toEqual({ status: 400, code: "IDEMPOTENCY_KEY_REQUIRED" });
    const tooMany = await pay(Array.from({ length: 201 }, (_, index) => ({ ...good, id: `many-${index}` })), "checks-5");
    expect(tooMany.statusCode).toBe(400);
    expect(await nonceNow()).toBe(nonceBefore);
    // Refused before anything was claimed: the items' ids are free, and check-0 is paid by the next test's batch too.
  });

  let firstBatch: PayoutAnswer;
  const items = Array.from({ length: 50 }, (_, index) => ({ toAddress: freshAddress(), amount: `${index + 1}.5`, id: `invoice-${index}` }));

  it("pays 49 items of a 50-item batch in one transaction and reports the one whose recipient the token blocks as failed, with its reason", async () => {
    await (await token.getFunction("setBlocked")(items[17].toAddress, true)).wait();
    const sent = await payOnceApproved(items, "payroll-1");
    expect(sent.statusCode).toBe(200);
    firstBatch = sent.body as PayoutAnswer;
    expect(firstBatch.contract).toBe(payoutContract);
    expect(firstBatch.transaction.to).toBe(payoutContract);
    expect(firstBatch.items.map((item) => item.state)).toEqual(items.map(() => "pending"));

    // Mined: 49 paid; the blocked item's failure is known, and reported failed once its block is final (a
    // client pays a failed item again, and a reorganisation could still change it).
    let mined: PayoutAnswer | undefined;
    await waitUntil(async () => (mined = await payoutOf(firstBatch.id)).items.filter((item) => item.state === "paid").length === 49, 30_000, "49 items paid");
    expect(mined?.items[17]).toMatchObject({ id: "invoice-17", state: "pending", reason: expect.stringMatching(/Blocklistable: account is blocked \(not final yet/) });
    // Finality counts from the block at which the service saw the batch settled: then 64 blocks more.
    await waitUntil(async () => (await service.app.inject({ method: "GET", url: "/wallet", headers: AUTHORIZATION })).json().oldestUnconfirmed === null, 10_000, "the batch settled in the journal");
    await mineBlocks(chain, 70);
    const outcome = await settled(firstBatch.id);
    expect(outcome.status).toMatchObject({ state: "confirmed", finalized: true });
    expect(outcome.items.filter((item) => item.state === "paid")).toHaveLength(49);
    expect(outcome.items[17]).toMatchObject({ id: "invoice-17", state: "failed", reason: "the token reverted the transfer: Blocklistable: account is blocked" });
    for (const [index, item] of items.entries()) expect(await balanceOf(item.toAddress)).toBe(index === 17 ? 0n : parseUnits(item.amount, 6));
    expect(await balanceOf(payoutContract)).toBe(0n);
    // One transaction for the whole batch (and one approval before it).
    const receipt = await waitForReceipt(chain, outcome.status?.carriedBy as string, 5000);
    expect(receipt.to).toBe(payoutContract);
  });

  it("answers a repeated batch key with the first batch, and sends nothing", async () => {
    const nonceBefore = await nonceNow();
    const again = await pay(items, "payroll-1");
    expect(again.statusCode).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body).toMatchObject({ id: firstBatch.id, transaction: { hash: firstBatch.transaction.hash } });
    const otherItems = await pay(items.slice(1), "payroll-1");
    expect({ status: otherItems.statusCode, code: otherItems.body.code }).toEqual({ status: 422, code: "IDEMPOTENCY_KEY_REUSED" });
    expect(await nonceNow()).toBe(nonceBefore);
  });

  it("never pays an item id again: a later batch answers it as a duplicate with its first outcome, and pays only the new items", async () => {
    const newItem = { toAddress: freshAddress(), amount: "2", id: "invoice-new" };
    const later = await pay([items[3], newItem, items[17]], "payroll-2");
    expect(later.statusCode).toBe(200);
    const answer = later.body as PayoutAnswer;
    expect(answer.items[0]).toMatchObject({ id: "invoice-3", duplicateOf: firstBatch.id, state: "paid" });
    expect(answer.items[1]).toMatchObject({ id: "invoice-new", duplicateOf: null, state: "pending" });
    expect(answer.items[2]).toMatchObject({ id: "invoice-17", duplicateOf: firstBatch.id, state: "failed", reason: expect.stringContaining("Blocklistable") });
    const outcome = await settled(answer.id);
    // The duplicates are the first batch's (final by now); the new item is this batch's own.
    expect(outcome.items.map((item) => item.state)).toEqual(["paid", "paid", "failed"]);
    expect(await balanceOf(items[3].toAddress)).toBe(parseUnits(items[3].amount, 6));
    expect(await balanceOf(newItem.toAddress)).toBe(parseUnits("2", 6));

    const nonceBefore = await nonceNow();
    const allPaid = await pay([items[3], newItem], "payroll-3");
    expect({ status: allPaid.statusCode, code: allPaid.body.code }).toEqual({ status: 409, code: "PAYOUT_ITEMS_DUPLICATE" });
    expect(await nonceNow()).toBe(nonceBefore);
  });

  it("refuses an item id reused with another recipient or amount: 422 naming the batch that holds it, nothing sent", async () => {
    const nonceBefore = await nonceNow();
    const otherRecipient = await pay([{ ...items[5], toAddress: freshAddress() }, { toAddress: freshAddress(), amount: "1", id: "reuse-new-1" }], "reuse-1");
    expect({ status: otherRecipient.statusCode, code: otherRecipient.body.code }).toEqual({ status: 422, code: "PAYOUT_ITEM_ID_REUSED" });
    expect(otherRecipient.body.message).toMatch(new RegExp(`^items\\[0\\]\\.id: "invoice-5" is batch ${firstBatch.id}'s item paying 6\\.5 tokens \\(6500000 base units\\) to ${items[5].toAddress}`));
    const otherAmount = await pay([{ toAddress: freshAddress(), amount: "1", id: "reuse-new-2" }, { ...items[6], amount: "7" }], "reuse-2");
    expect({ status: otherAmount.statusCode, code: otherAmount.body.code }).toEqual({ status: 422, code: "PAYOUT_ITEM_ID_REUSED" });
    expect(otherAmount.body.message).toMatch(/^items\[1\]\.id: "invoice-6" .* this one would pay 7 tokens \(7000000 base units\)/);
    // The same payment written another way (the address in lower case, a trailing zero) is the duplicate it was.
    const sameOtherwiseWritten = await pay([{ ...items[5], toAddress: items[5].toAddress.toLowerCase(), amount: `${items[5].amount}0` }], "reuse-3");
    expect({ status: sameOtherwiseWritten.statusCode, code: sameOtherwiseWritten.body.code }).toEqual({ status: 409, code: "PAYOUT_ITEMS_DUPLICATE" });
    expect(await nonceNow()).toBe(nonceBefore);
    // Refused before anything was claimed: the refused batches' new ids are free, and their keys unused.
    const retried = await pay([{ toAddress: freshAddress(), amount: "1", id: "reuse-new-1" }], "reuse-1");
    expect(retried.statusCode).toBe(200);
    await settled((retried.body as PayoutAnswer).id);
  });

  it("shows a batch to the key that sent it (and admins) only, and lists it in the history as a payout", async () => {
    const missing = await service.app.inject({ method: "GET", url: "/payouts/999999", headers: AUTHORIZATION });
    expect({ status: missing.statusCode, code: missing.json().code }).toEqual({ status: 404, code: "PAYOUT_NOT_FOUND" });
    const history = (await service.app.inject({ method: "GET", url: "/transfers?limit=50", headers: AUTHORIZATION })).json() as { transfers: { id: number; kind: string; items?: { id: string }[] }[] };
    const listed = history.transfers.find((entry) => entry.id === firstBatch.id);
    expect(listed?.kind).toBe("payout");
    expect(listed?.items?.map((item) => item.id)).toEqual(items.map((item) => item.id));
    expect(history.transfers.some((entry) => entry.kind === "payout-approval")).toBe(true);
    // An item id finds the batch that pays it; one no batch holds finds nothing; with an Idempotency-Key it is a 400.
    const byItem = async (query: string) => service.app.inject({ method: "GET", url: `/transfers?${query}`, headers: AUTHORIZATION });
    expect(((await byItem("payoutItemId=invoice-17")).json() as { transfers: { id: number }[] }).transfers.map((entry) => entry.id)).toEqual([firstBatch.id]);
    expect(((await byItem("payoutItemId=invoice-never")).json() as { transfers: unknown[] }).transfers).toEqual([]);
    const both = await byItem("payoutItemId=invoice-17&idempotencyKey=payroll-1");
    expect({ status: both.statusCode, code: both.json().code }).toEqual({ status: 400, code: "INVALID_QUERY" });
    // In CSV every payment is a row: the batch's, then one per item it pays.
    const csv = (await service.app.inject({ method: "GET", url: "/transfers", headers: { ...AUTHORIZATION, accept: "text/csv" } })).body.split("\r\n");
    const header = csv[0].split(",");
    const rowsOfBatch = csv.slice(1).filter((line) => line.startsWith(`${firstBatch.id},`)).map((line) => line.split(","));
    expect(rowsOfBatch.map((row) => row[header.indexOf("kind")])).toEqual(["payout", ...items.map(() => "payout-item")]);
    expect(rowsOfBatch.slice(1).map((row) => [row[header.indexOf("payoutItemId")], row[header.indexOf("to")], row[header.indexOf("amountInTokens")]])).toEqual(
      items.map((item) => [item.id, item.toAddress, item.amount]),
    );
  });

  it("refuses to start when PAYOUT_CONTRACT holds other code, or none: the wallet would approve it to spend its tokens", async ({ expect }) => {
    const tokenAddress = await token.getAddress();
    await expect(startService({ ...chain.target, tokenAddress }, { PAYOUT_CONTRACT: tokenAddress })).rejects.toThrow(/PAYOUT_CONTRACT: the contract at .* is not this version's PayoutBatch/);
    await expect(startService({ ...chain.target, tokenAddress }, { PAYOUT_CONTRACT: freshAddress() })).rejects.toThrow(/PAYOUT_CONTRACT: no contract at/);
  });

  it.runIf(kind === "anvil")("sends the batch again when a reorganisation drops it, and every item is paid once", async () => {
    const batch = Array.from({ length: 5 }, (_, index) => ({ toAddress: freshAddress(), amount: "3", id: `reorg-${index}` }));
    const sent = await pay(batch, "reorg-batch");
    expect(sent.statusCode).toBe(200);
    const before = await settled(sent.body.id);
    expect(before.items.every((item) => item.state === "paid")).toBe(true);
    // Past the service's read of the block that mined it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await chain.provider.send("anvil_reorg", [1, []]);
    for (const item of batch) expect(await balanceOf(item.toAddress)).toBe(0n);
    await waitUntil(async () => (await Promise.all(batch.map((item) => balanceOf(item.toAddress)))).every((balance) => balance === parseUnits("3", 6)), 30_000, "the batch mined again");
    const after = await settled(sent.body.id);
    expect(after.items.every((item) => item.state === "paid")).toBe(true);
    // Paid once: a second batch would have doubled the balances. Checked once the service has followed
    // the chain until the batch mined again is final (anvil: 64 blocks below the block at which the
    // service saw it settled again), not after a fixed time: from then on nothing can make it send the
    // items again. Blocks are mined until then: the service sees the batch settled again when it next reads.
    let status: PayoutAnswer["status"];
    await waitUntil(async () => {
      if ((status = (await payoutOf(sent.body.id)).status)?.finalized === true) return true;
      await mineBlocks(chain, 10);
      return false;
    }, 60_000, () => `the batch final: ${JSON.stringify(status)}`);
    for (const item of batch) expect(await balanceOf(item.toAddress)).toBe(parseUnits("3", 6));
  });
});

describe.each(NODE_KINDS)("a payout and kill -9 after signing on %s", (kind) => {
  let chain: TestChain;
  let journalDir: string;
  const running: ServerProcess[] = [];

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    journalDir = mkdtempSync(join(tmpdir(), "payout-crash-"));
  }, 120_000);
  afterAll(async () => {
    for (const server of running) server.child.kill("SIGKILL");
    await chain?.stop();
    rmSync(journalDir, { recursive: true, force: true });
  });

  it("loses nothing and pays nothing twice", async () => {
    const { token, payoutContract } = await setUpPayouts(chain);
    const start = async (extraEnv: Record<string, string> = {}) => {
      const server = await startServerProcess({
        RPC_URL: chain.rpcUrl,
        PRIVATE_KEY: chain.demo.privateKey,
        TOKEN_ADDRESS: await token.getAddress(),
        PAYOUT_CONTRACT: payoutContract,
        JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
        ...extraEnv,
      });
      running.push(server);
      return server;
    };
    const pay = (server: ServerProcess, body: object, key: string) =>
      request(`${server.baseUrl}/payouts`, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": key, ...AUTHORIZATION }, body: JSON.stringify(body) });
    const body = { items: Array.from({ length: 10 }, (_, index) => ({ toAddress: freshAddress(), amount: "4", id: `crash-${index}` })) };

    // The wallet approves the contract first (a transaction of its own), outside the crash.
    const first = await start();
    for (let answer = await pay(first, body, "warm-up"); answer.statusCode === 503; answer = await pay(first, body, "warm-up")) {
      expect(((await answer.body.json()) as { code: string }).code).toBe("PAYOUT_APPROVAL_PENDING");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    first.child.kill("SIGTERM");
    await first.exited;
    const crashBody = { items: body.items.map((item, index) => ({ ...item, toAddress: freshAddress(), id: `crash-batch-${index}` })) };
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");

    const doomed = await start({ TEST_FAULT_POINT: "after-sign" });
    const unanswered = pay(doomed, crashBody, "crash-order").catch((error: Error) => error);
    await doomed.waitForOutput("TEST_FAULT_POINT reached: after-sign");
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBeNull();
    expect(await unanswered).toBeInstanceOf(Error);

    const restarted = await start();
    const retry = await pay(restarted, crashBody, "crash-order");
    expect(retry.statusCode).toBe(200);
    const answer = (await retry.body.json()) as PayoutAnswer;
    expect(answer.transaction.nonce).toBe(nonceBefore);
    const mined = await waitForReceipt(chain, answer.transaction.hash, 15_000);
    expect(mined.status).toBe(1);
    for (const item of crashBody.items) expect((await token.getFunction("balanceOf")(item.toAddress)) as bigint).toBe(parseUnits("4", 6));
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(nonceBefore + 1);
    restarted.child.kill("SIGTERM");
    expect(await restarted.exited).toBe(0);
  });
});

describe("webhooks of a payout's items on anvil", () => {
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  let chain: TestChain;
  let token: Contract;
  let receiver: WebhookReceiver;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain();
    let payoutContract: string;
    ({ token, payoutContract } = await setUpPayouts(chain));
    receiver = await startWebhookReceiver();
    service = await startService(
      { ...chain.target, tokenAddress: await token.getAddress() },
      { PAYOUT_CONTRACT: payoutContract, WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: secret, REBROADCAST_AFTER_MS: "500" },
    );
  }, 120_000);
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await chain?.stop();
  });

  // Each delivery verified as a receiver would, and checked against its OpenAPI schema.
  const events = () =>
    receiver.received.map((delivery) => {
      const event = new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
      const error = Value.Errors(eventSchema(event.type as TransferEventName | PayoutItemEventName), event).First();
      if (error) expect.fail(`${event.type} does not match its schema: ${error.path} ${error.message}`);
      return event;
    });
  const itemEvents = (payoutId: number) => events().filter((event) => event.data.payoutId === payoutId).map((event) => `${event.type} ${event.data.itemId} ${event.data.state}`);

  it("reports each item paid or failed with the batch, again after a reorganisation, and final with the batch", async () => {
    const items = [0, 1, 2].map((index) => ({ toAddress: freshAddress(), amount: "2", id: `hook-${index}` }));
    await (await token.getFunction("setBlocked")(items[1].toAddress, true)).wait();
    let sent = await postJson(service.app, "/payouts", { items }, { "idempotency-key": "hooks" });
    for (const deadline = Date.now() + 30_000; sent.statusCode === 503 && Date.now() < deadline; sent = await postJson(service.app, "/payouts", { items }, { "idempotency-key": "hooks" })) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(sent.statusCode).toBe(200);
    const payoutId = sent.body.id as number;
    const outcome = ["payout.item.paid hook-0 paid", "payout.item.paid hook-2 paid", "payout.item.failed hook-1 failed"];
    await waitUntil(() => itemEvents(payoutId).length === 3, 20_000, () => `the items' events: ${itemEvents(payoutId).join("; ")}`);
    expect(itemEvents(payoutId)).toEqual(outcome);
    const failed = events().find((event) => event.type === "payout.item.failed");
    expect(failed?.data).toMatchObject({ reason: "the token reverted the transfer: Blocklistable: account is blocked", transferHash: sent.body.transaction.hash, idempotencyKey: "hooks" });

    // Past the service's read of the block that mined it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await chain.provider.send("anvil_reorg", [1, []]);
    await waitUntil(() => itemEvents(payoutId).length === 9, 30_000, () => `reorged and reported again: ${itemEvents(payoutId).join("; ")}`);
    expect(itemEvents(payoutId).slice(3)).toEqual(["payout.item.reorged hook-0 pending", "payout.item.reorged hook-1 pending", "payout.item.reorged hook-2 pending", ...outcome]);

    await waitUntil(async () => (await service.app.inject({ method: "GET", url: "/wallet", headers: AUTHORIZATION })).json().oldestUnconfirmed === null, 10_000, "the batch settled in the journal");
    await mineBlocks(chain, 70);
    await waitUntil(() => itemEvents(payoutId).length === 12, 30_000, () => `finalized: ${itemEvents(payoutId).join("; ")}`);
    expect(itemEvents(payoutId).slice(9)).toEqual(["payout.item.finalized hook-0 paid", "payout.item.finalized hook-1 failed", "payout.item.finalized hook-2 paid"]);
    // Each item's events follow the batch's own.
    const types = events().map((event) => event.type);
    expect(types.indexOf("transfer.finalized")).toBeLessThan(types.indexOf("payout.item.finalized"));
  });
});
