/**
 * Spends nobody asked for, on anvil and Hardhat Network: the wallet's key used by another program (a
 * token transfer and a plain ETH send), and a spender the wallet approved moving its tokens
 * (transferFrom), are each reported in /wallet, the metrics and the log before the chain's next block; the
 * service's own transfers never are, and they go on being paid once after an outside transaction took a nonce.
 * With PAUSE_ON_UNEXPECTED_OUTFLOW the report also stops signing until an admin resumes, and a webhook says so.
 * A token the service does not pay in is watched as well, and a restart goes on from where the watch got to.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { Contract, Wallet, parseEther, parseUnits } from "ethers";
import { afterAll, beforeAll, expect } from "vitest";
import { ApiKeyRing } from "../../src/auth/api-keys.js";
import { deployDemoToken } from "../../src/dev/demo-chain.js";
import { eventSchema } from "../../src/webhooks/webhook-openapi.js";
import { AUTHORIZATION, TEST_API_KEY, type TestService, postJson, startService } from "../helpers/service.js";
import { type WebhookReceiver, startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { NODE_KINDS, type PoolWallet, type TestChain, addPoolWallets, freshAddress, mineBlocks, setEthBalance, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";
import { retryWhilePoolBusy } from "../helpers/pool-client.js";
import { waitUntil } from "../helpers/wait-until.js";
import { describe, it } from "../helpers/suites-side-by-side.js";

interface ReportedOutflow {
  wallet: string;
  hash: string;
  blockNumber: number;
  nonce: number | null;
  token: string | null;
  to: string | null;
  amount: string | null;
  otherToken: boolean;
}

/**
 * Waits until the outflow watch has checked the chain's head as it is now (its progress, kept in the journal
 * at the end of each check): "not reported" is checked then, not after a fixed time, since side by side a
 * check may come late.
 */
async function watchCheckedToHead(chain: TestChain, service: TestService): Promise<void> {
  const head = await chain.provider.getBlockNumber();
  await waitUntil(() => (service.services.journal.outflowWatchProgress()?.logsReadTo ?? -1) >= head, 10_000, `the outflow watch checked through block ${head}`);
}

describe.each(NODE_KINDS)("unexpected outflows on %s", (kind) => {
  let chain: TestChain;
  let service: TestService;
  const outflows = async () => (await service.app.inject({ method: "GET", url: "/wallet?snapshot=true", headers: AUTHORIZATION })).json().unexpectedOutflows as ReportedOutflow[];
  const checkedToHead = () => watchCheckedToHead(chain, service);

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    service = await startService(chain.target, { OUTFLOW_CHECK_INTERVAL_MS: "100" });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("reports a token transfer sent with the wallet's key from outside, as a transaction and a token transfer, before the next block; its own transfers never", async () => {
    const own = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(own.statusCode, own.raw).toBe(200);
    await waitForReceipt(chain, own.body.result.hash, 10_000);

    // Another program holding the same key: the token contract connected to the hot wallet.
    const thief = freshAddress();
    const stolen = await chain.token.getFunction("transfer")(thief, parseUnits("7", 18));
    const { blockNumber } = await waitForReceipt(chain, stolen.hash, 10_000);
    await waitUntil(async () => (await outflows()).length >= 2, 10_000, "both reports");
    // Noticed while that block is still the head: within one block.
    expect(await chain.provider.getBlockNumber()).toBe(blockNumber);

    const wallet = chain.demo.walletAddress;
    const tokenAddress = chain.demo.tokenAddress;
    const reported = await outflows();
    expect(reported).toHaveLength(2);
    expect(reported).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ wallet, hash: stolen.hash, blockNumber, nonce: stolen.nonce, token: null, to: tokenAddress, amount: "0" }),
        expect.objectContaining({ wallet, hash: stolen.hash, blockNumber, nonce: null, token: tokenAddress, to: thief, amount: parseUnits("7", 18).toString() }),
      ]),
    );
    expect(reported.some((outflow) => outflow.hash === own.body.result.hash)).toBe(false);
    const metrics = (await service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body;
    expect(metrics).toContain(`wallet_unexpected_outflows{network="31337",wallet="${wallet}"} 2`);
  });

  it("after the outside transaction took a nonce, the service's next transfers are paid once each, and not reported", async () => {
    const before = (await outflows()).length;
    const recipients = [freshAddress(), freshAddress()];
    for (const toAddress of recipients) {
      const sent = await postJson(service.app, "/transfer", { toAddress, amount: "2" });
      expect(sent.statusCode, sent.raw).toBe(200);
      await waitForReceipt(chain, sent.body.result.hash, 10_000);
    }
    for (const recipient of recipients) expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("2", 18));
    await checkedToHead();
    expect(await outflows()).toHaveLength(before);
  });

  it("reports ETH sent with the key, and tokens a spender the wallet approved moves with transferFrom (the spender's transaction, no nonce of the wallet); not a transferFrom of 0", async () => {
    const before = (await outflows()).length;
    const outside = new Wallet(chain.demo.privateKey, chain.provider);
    const spender = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, spender.address, "1");
    // Address poisoning: anyone may "transferFrom" 0 tokens of any wallet. It moved nothing: not reported.
    const poisoned = await (new Contract(chain.demo.tokenAddress, ["function transferFrom(address,address,uint256) returns (bool)"], spender).getFunction("transferFrom"))(
      chain.demo.walletAddress,
      spender.address,
      0n,
    );
    await waitForReceipt(chain, poisoned.hash, 10_000);
    const sendEth = await outside.sendTransaction({ to: spender.address, value: parseEther("0.5") });
    await waitForReceipt(chain, sendEth.hash, 10_000);
    const approval = await chain.token.getFunction("approve")(spender.address, parseUnits("3", 18));
    await waitForReceipt(chain, approval.hash, 10_000);
    const drained = await (new Contract(chain.demo.tokenAddress, ["function transferFrom(address,address,uint256) returns (bool)"], spender).getFunction("transferFrom"))(
      chain.demo.walletAddress,
      spender.address,
      parseUnits("3", 18),
    );
    await waitForReceipt(chain, drained.hash, 10_000);
    await waitUntil(async () => (await outflows()).length >= before + 3, 10_000, "three more reports");
    // The poisoning would be there once the watch has checked its block.
    await checkedToHead();
    expect(await outflows()).toHaveLength(before + 3);
    const reported = (await outflows()).slice(0, 3);
    expect(reported).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ hash: sendEth.hash, nonce: sendEth.nonce, token: null, to: spender.address, amount: parseEther("0.5").toString() }),
        expect.objectContaining({ hash: approval.hash, nonce: approval.nonce, token: null, to: chain.demo.tokenAddress }),
        expect.objectContaining({ hash: drained.hash, nonce: null, token: chain.demo.tokenAddress, logIndex: expect.any(Number), to: spender.address, amount: parseUnits("3", 18).toString() }),
      ]),
    );
  });
});

describe("an unexpected outflow whose block a reorganisation replaces (anvil)", () => {
  let chain: TestChain;
  let service: TestService;
  const outflows = async () => (await service.app.inject({ method: "GET", url: "/wallet?snapshot=true", headers: AUTHORIZATION })).json().unexpectedOutflows as (ReportedOutflow & { logIndex: number | null })[];

  beforeAll(async () => {
    chain = await startTestChainOn("anvil");
    service = await startService(chain.target, { OUTFLOW_CHECK_INTERVAL_MS: "100" });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("is reported once, though the transaction is mined again in another block at another log index", async () => {
    const transferFrom = ["function transferFrom(address,address,uint256) returns (bool)", "function transfer(address,uint256) returns (bool)"];
    const spender = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    const bystander = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, spender.address, "1");
    await setEthBalance(chain, bystander.address, "1");
    const approval = await chain.token.getFunction("approve")(spender.address, parseUnits("3", 18));
    await waitForReceipt(chain, approval.hash, 10_000);
    await waitUntil(async () => (await outflows()).length === 1, 10_000, "the approval reported");

    // The spender's transferFrom, signed here so that the same bytes can be mined again after the reorganisation.
    const token = new Contract(chain.demo.tokenAddress, transferFrom, spender);
    const drain = await spender.signTransaction(await spender.populateTransaction({ to: chain.demo.tokenAddress, data: token.interface.encodeFunctionData("transferFrom", [chain.demo.walletAddress, spender.address, parseUnits("3", 18)]) }));
    const hash = await chain.provider.send("eth_sendRawTransaction", [drain]);
    const firstReceipt = await waitForReceipt(chain, hash, 10_000);
    await waitUntil(async () => (await outflows()).length === 2, 10_000, "the transferFrom reported");
    expect((await outflows())[0]).toMatchObject({ hash, token: chain.demo.tokenAddress, logIndex: firstReceipt.logs[0].index, blockNumber: firstReceipt.blockNumber });

    // Its block is replaced by an empty one; the next block holds another Transfer first, then the same bytes.
    await chain.provider.send("evm_setAutomine", [false]);
    await chain.provider.send("anvil_reorg", [1, []]);
    const first = await new Contract(chain.demo.tokenAddress, transferFrom, bystander).getFunction("transfer")(freshAddress(), 0n, { maxPriorityFeePerGas: 5_000_000_000n, maxFeePerGas: 50_000_000_000n });
    await chain.provider.send("eth_sendRawTransaction", [drain]).catch((error: Error) => {
      // Still in the node's pool after the reorganisation: the same bytes, held already.
      if (!/already|known/i.test(error.message)) throw error;
    });
    await chain.provider.send("evm_mine", []);
    const again = await waitForReceipt(chain, hash, 10_000);
    expect((await waitForReceipt(chain, first.hash, 10_000)).blockNumber).toBe(again.blockNumber);
    expect(again.logs[0].index).not.toBe(firstReceipt.logs[0].index);
    expect(await tokenBalanceOf(chain, spender.address)).toBe(parseUnits("3", 18));

    // Once the watch has checked the new block: the same outflow, not another.
    await watchCheckedToHead(chain, service);
    expect(await outflows()).toHaveLength(2);
    const metrics = (await service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body;
    expect(metrics).toContain(`wallet_unexpected_outflows{network="31337",wallet="${chain.demo.walletAddress}"} 2`);
  });
});

describe.each(NODE_KINDS)("PAUSE_ON_UNEXPECTED_OUTFLOW on %s", (kind) => {
  const TRANSFER_KEY = "transfer-key-5b8e2d0c41";
  let chain: TestChain;
  let service: TestService;
  let receiver: WebhookReceiver;
  let journalDir: string;
  let settings: Record<string, string>;
  const wallet = async () => (await service.app.inject({ method: "GET", url: "/wallet?snapshot=true", headers: AUTHORIZATION })).json();
  const resume = (key: string, latestHash: string) => service.app.inject({ method: "POST", url: `/wallet/resume?latestHash=${latestHash}`, headers: { authorization: `Bearer ${key}` } });
  const metric = async (name: string) => (await service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body.match(new RegExp(`^${name} (\\d+)$`, "m"))?.[1];
  const outflowEvents = () => receiver.received.map((delivery) => JSON.parse(delivery.body)).filter((event) => event.type === "wallet.unexpected_outflow");

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    receiver = await startWebhookReceiver();
    journalDir = mkdtempSync(join(tmpdir(), "journal-"));
    settings = {
      API_KEYS: `admin:${TEST_API_KEY},transfer:${TRANSFER_KEY}`,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      OUTFLOW_CHECK_INTERVAL_MS: "100",
      PAUSE_ON_UNEXPECTED_OUTFLOW: "true",
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: `whsec_${randomBytes(32).toString("base64")}`,
    };
    service = await startService(chain.target, settings);
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await chain?.stop();
    rmSync(journalDir, { recursive: true, force: true });
  });

  it("stops signing within the block of an outside spend, says so by webhook, refuses new transfers with their key unused, and signs again once an admin resumes", async () => {
    const earlierRecipient = freshAddress();
    const earlier = await postJson(service.app, "/transfer", { toAddress: earlierRecipient, amount: "1" }, { "idempotency-key": "before-the-pause" });
    expect(earlier.statusCode, earlier.raw).toBe(200);
    await waitForReceipt(chain, earlier.body.result.hash, 10_000);
    expect((await wallet()).signingPaused).toBeNull();
    expect(await metric("wallet_signing_paused")).toBe("0");

    const stolen = await chain.token.getFunction("transfer")(freshAddress(), parseUnits("7", 18));
    const { blockNumber } = await waitForReceipt(chain, stolen.hash, 10_000);
    await waitUntil(async () => (await wallet()).signingPaused !== null, 10_000, "the pause");
    expect(await chain.provider.getBlockNumber()).toBe(blockNumber);
    expect((await wallet()).signingPaused).toEqual({ since: expect.any(String), reason: expect.stringContaining(stolen.hash), hash: stolen.hash, latestHash: stolen.hash, outflows: 2 });
    expect(await metric("wallet_signing_paused")).toBe("1");

    // One event for the transaction and one for the tokens it moved, each as its OpenAPI schema says.
    await waitUntil(async () => outflowEvents().length >= 2, 10_000, "both webhook events");
    const events = outflowEvents();
    expect(events).toHaveLength(2);
    for (const event of events) {
      expect(Value.Errors(eventSchema("wallet.unexpected_outflow"), event).First()).toBeUndefined();
      expect(event.data).toMatchObject({ hash: stolen.hash, wallet: chain.demo.walletAddress, blockNumber, signingPaused: true });
    }
    expect(events.map((event) => event.data.token).sort()).toEqual([chain.demo.tokenAddress, null].sort());

    // Nothing is signed while paused: a new transfer is a 503 and its key stays unused; a repeat of a key
    // answered before still gets its first answer.
    const walletAddress = chain.demo.walletAddress;
    const noncesBefore = await chain.provider.getTransactionCount(walletAddress, "pending");
    const recipient = freshAddress();
    const refused = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" }, { "idempotency-key": "during-the-pause" });
    expect(refused.statusCode, refused.raw).toBe(503);
    expect(refused.body.code).toBe("SIGNING_PAUSED");
    const repeat = await postJson(service.app, "/transfer", { toAddress: earlierRecipient, amount: "1" }, { "idempotency-key": "before-the-pause" });
    expect(repeat.statusCode, repeat.raw).toBe(200);
    expect(repeat.body.result.hash).toBe(earlier.body.result.hash);
    expect(await chain.provider.getTransactionCount(walletAddress, "pending")).toBe(noncesBefore);

    // A restart keeps the pause: the journal's, since the first report (a report found again would be a new one).
    const pausedBefore = (await wallet()).signingPaused;
    await service.close();
    service = await startService(chain.target, settings);
    expect((await wallet()).signingPaused).toEqual(pausedBefore);
    const afterRestart = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" }, { "idempotency-key": "during-the-pause" });
    expect([afterRestart.statusCode, afterRestart.body.code]).toEqual([503, "SIGNING_PAUSED"]);

    // Only an admin resumes.
    const byTransferKey = await resume(TRANSFER_KEY, stolen.hash);
    expect(byTransferKey.statusCode, byTransferKey.body).toBe(403);
    // Naming another outflow than the latest resumes nothing.
    const stale = await resume(TEST_API_KEY, earlier.body.result.hash);
    expect([stale.statusCode, stale.json().code]).toEqual([409, "PAUSE_CHANGED"]);
    expect((await wallet()).signingPaused).not.toBeNull();
    const byAdmin = await resume(TEST_API_KEY, stolen.hash);
    expect(byAdmin.statusCode, byAdmin.body).toBe(200);
    expect(byAdmin.json().resumed).toMatchObject({ hash: stolen.hash });
    expect((await wallet()).signingPaused).toBeNull();
    expect(await metric("wallet_signing_paused")).toBe("0");
    expect((await resume(TEST_API_KEY, stolen.hash)).json()).toEqual({ resumed: null });

    // The key refused during the pause was left unused: it sends now, and pays once.
    const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" }, { "idempotency-key": "during-the-pause" });
    expect(sent.statusCode, sent.raw).toBe(200);
    expect(sent.headers["idempotent-replayed"]).toBeUndefined();
    await waitForReceipt(chain, sent.body.result.hash, 10_000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("2", 18));
    expect(await chain.provider.getTransactionCount(walletAddress, "latest")).toBe(noncesBefore + 1);
  });

  it("while paused, a transfer whose nonce the outside sender took is not signed again, yet what was mined is followed and reported; once resumed it is paid once", async () => {
    const walletAddress = chain.demo.walletAddress;
    const hasEvent = (type: string, transferHash: string) =>
      receiver.received.some((delivery) => {
        const event = JSON.parse(delivery.body);
        return event.type === type && event.data.transferHash === transferHash;
      });
    await chain.provider.send("evm_setAutomine", [false]);
    try {
      const [displacedRecipient, minedRecipient] = [freshAddress(), freshAddress()];
      const displaced = await postJson(service.app, "/transfer", { toAddress: displacedRecipient, amount: "4" }, { "idempotency-key": "displaced-while-paused" });
      const mined = await postJson(service.app, "/transfer", { toAddress: minedRecipient, amount: "5" });
      expect([displaced.statusCode, mined.statusCode], displaced.raw + mined.raw).toEqual([200, 200]);
      const { nonce, maxFeePerGas, maxPriorityFeePerGas } = displaced.body.result;
      // The other holder of the key outbids the first transfer at its nonce; the second is mined after it.
      const outside = await chain.hotWallet.sendTransaction({
        to: walletAddress,
        value: 0n,
        nonce,
        maxFeePerGas: BigInt(maxFeePerGas.hex) * 3n,
        maxPriorityFeePerGas: BigInt(maxPriorityFeePerGas.hex) * 3n + 1n,
      });
      await mineBlocks(chain, 1);
      expect((await chain.provider.getTransaction(outside.hash))?.blockNumber).not.toBeNull();
      await waitUntil(async () => (await wallet()).signingPaused !== null, 10_000, "the pause, from the transaction found at the transfer's nonce");
      expect((await wallet()).signingPaused).toMatchObject({ hash: outside.hash });

      // Past the outside transaction's finality (anvil finalizes 64 blocks below its head): the displaced transfer
      // is owed again, which would take a signature. The rounds go on all the same: the mined transfer is reported
      // confirmed and then final.
      await mineBlocks(chain, kind === "anvil" ? 70 : 2);
      await waitUntil(async () => {
        await mineBlocks(chain, 1);
        return hasEvent("transfer.finalized", mined.body.result.hash);
      }, 20_000, "the mined transfer reported final while paused");
      expect(hasEvent("transfer.confirmed", mined.body.result.hash)).toBe(true);
      expect(await tokenBalanceOf(chain, minedRecipient)).toBe(parseUnits("5", 18));
      expect(await tokenBalanceOf(chain, displacedRecipient)).toBe(0n);
      const countWhilePaused = await chain.provider.getTransactionCount(walletAddress, "pending");
      await mineBlocks(chain, 2);
      expect(await chain.provider.getTransactionCount(walletAddress, "pending")).toBe(countWhilePaused);

      // Resumed: signed again at a new nonce, paid once; the key answers that transfer.
      expect((await resume(TEST_API_KEY, outside.hash)).statusCode).toBe(200);
      await waitUntil(async () => {
        await mineBlocks(chain, 1);
        return (await tokenBalanceOf(chain, displacedRecipient)) > 0n;
      }, 20_000, "the displaced transfer paid after the resume");
      await mineBlocks(chain, 3);
      expect(await tokenBalanceOf(chain, displacedRecipient)).toBe(parseUnits("4", 18));
      const repeat = await postJson(service.app, "/transfer", { toAddress: displacedRecipient, amount: "4" }, { "idempotency-key": "displaced-while-paused" });
      expect(repeat.body.result.hash).toBe(displaced.body.result.hash);
    } finally {
      await chain.provider.send("evm_setAutomine", [true]);
    }
  });
});

describe("PAUSE_ON_UNEXPECTED_OUTFLOW in a wallet pool, on anvil", () => {
  let chain: TestChain;
  let service: TestService;
  let second: PoolWallet;

  beforeAll(async () => {
    chain = await startTestChainOn("anvil", { supply: 100n });
    [second] = await addPoolWallets(chain, 1, { tokens: 50n, ether: "10" });
    service = await startService(chain.target, {
      PRIVATE_KEY: [chain.demo.privateKey, second.privateKey].join(","),
      OUTFLOW_CHECK_INTERVAL_MS: "100",
      PAUSE_ON_UNEXPECTED_OUTFLOW: "true",
    });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("a spend with any lane's key stops every lane: the pool answers 503 SIGNING_PAUSED with the key unused, until resumed", async () => {
    const lanes = service.services.networks[0].lanes.map((lane) => lane.address);
    expect(lanes).toHaveLength(2);
    const secondKey = new Wallet(second.privateKey, chain.provider);
    const outside = await secondKey.sendTransaction({ to: freshAddress(), value: parseEther("0.1") });
    await waitForReceipt(chain, outside.hash, 10_000);
    const report = async () => (await service.app.inject({ method: "GET", url: "/wallet?snapshot=true", headers: AUTHORIZATION })).json();
    await waitUntil(async () => (await report()).signingPaused !== null, 10_000, "the pause");
    expect((await report()).unexpectedOutflows).toEqual([expect.objectContaining({ wallet: secondKey.address, hash: outside.hash })]);

    const recipient = freshAddress();
    const refused = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "1" }, { "idempotency-key": "pool-paused" });
    expect([refused.statusCode, refused.body.code], refused.raw).toEqual([503, "SIGNING_PAUSED"]);
    const counts = async () => Promise.all(lanes.map((lane) => chain.provider.getTransactionCount(lane, "pending")));
    const before = await counts();

    const resumed = await service.app.inject({ method: "POST", url: `/wallet/resume?latestHash=${outside.hash}`, headers: AUTHORIZATION });
    expect(resumed.statusCode, resumed.body).toBe(200);
    const sent = await retryWhilePoolBusy(() => postJson(service.app, "/transfer", { toAddress: recipient, amount: "1" }, { "idempotency-key": "pool-paused" }));
    expect(sent.statusCode, sent.raw).toBe(200);
    await waitForReceipt(chain, sent.body.result.hash, 10_000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("1", 18));
    const after = await counts();
    expect(after.reduce((sum, count) => sum + count, 0)).toBe(before.reduce((sum, count) => sum + count, 0) + 1);
  });
});

describe("every token out of the wallet, across a restart, and a resume by two people (anvil)", () => {
  let chain: TestChain;
  let service: TestService | undefined;
  let journalDir: string;
  let settings: Record<string, string>;
  const outflows = async () => (await service!.app.inject({ method: "GET", url: "/wallet?snapshot=true", headers: AUTHORIZATION })).json().unexpectedOutflows as ReportedOutflow[];

  beforeAll(async () => {
    chain = await startTestChainOn("anvil");
    journalDir = mkdtempSync(join(tmpdir(), "journal-"));
    settings = { JOURNAL_PATH: join(journalDir, "transfers.sqlite"), OUTFLOW_CHECK_INTERVAL_MS: "100" };
    service = await startService(chain.target, settings);
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
    rmSync(journalDir, { recursive: true, force: true });
  });

  it("reports a token the service does not pay in moved out by a spender, and one moved while it was down 300 blocks, after its restart", async () => {
    const own = await postJson(service!.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(own.statusCode, own.raw).toBe(200);
    await waitForReceipt(chain, own.body.result.hash, 10_000);
    // Another token the wallet holds, which the service is not configured for; a spender it approved.
    const other = await deployDemoToken(await chain.provider.getSigner(0), 18, 1_000n);
    const otherToken = new Contract(other, ["function transfer(address,uint256) returns (bool)", "function approve(address,uint256) returns (bool)", "function transferFrom(address,address,uint256) returns (bool)"], await chain.provider.getSigner(0));
    await waitForReceipt(chain, (await otherToken.getFunction("transfer")(chain.demo.walletAddress, parseUnits("10", 18))).hash, 10_000);
    const spender = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, spender.address, "1");
    const approval = await otherToken.connect(chain.hotWallet).getFunction("approve")(spender.address, parseUnits("10", 18));
    await waitForReceipt(chain, approval.hash, 10_000);
    await waitUntil(async () => (await outflows()).some((outflow) => outflow.hash === approval.hash), 10_000, "the approval reported");

    const drained = await otherToken.connect(spender).getFunction("transferFrom")(chain.demo.walletAddress, spender.address, parseUnits("2", 18));
    await waitForReceipt(chain, drained.hash, 10_000);
    await waitUntil(async () => (await outflows()).some((outflow) => outflow.hash === drained.hash), 10_000, "the other token's transferFrom reported");
    expect((await outflows()).find((outflow) => outflow.hash === drained.hash)).toMatchObject({ token: other, otherToken: true, nonce: null, to: spender.address, amount: parseUnits("2", 18).toString() });

    // Down while the spender takes more, and for 300 blocks after: more than a restart used to look back.
    await service!.close();
    service = undefined;
    const whileDown = await otherToken.connect(spender).getFunction("transferFrom")(chain.demo.walletAddress, spender.address, parseUnits("3", 18));
    await waitForReceipt(chain, whileDown.hash, 10_000);
    await mineBlocks(chain, 300);
    service = await startService(chain.target, settings);
    await waitUntil(async () => (await outflows()).some((outflow) => outflow.hash === whileDown.hash), 10_000, "the transferFrom made while the service was down reported");
    expect((await outflows()).find((outflow) => outflow.hash === whileDown.hash)).toMatchObject({ token: other, amount: parseUnits("3", 18).toString() });
  });

  it("with RESUME_NEEDS_SECOND_ADMIN a pause ends only when a second admin, another person, confirms the first's resume; each step audited", async () => {
    const [secondKey, thirdKey] = ["second-admin-key-5b1e0c7d93", "third-admin-key-8a2f6d4c10"];
    const idOf = (key: string) => ApiKeyRing.parse(key).identify(key)?.id as string;
    await service!.close();
    service = await startService(chain.target, {
      ...settings,
      API_KEYS: `admin:${TEST_API_KEY},admin:${secondKey},admin:${thirdKey}`,
      // The first two keys are one person's.
      API_KEY_HOLDERS: `${idOf(TEST_API_KEY)}=alice,${idOf(secondKey)}=alice,${idOf(thirdKey)}=bob`,
      PAUSE_ON_UNEXPECTED_OUTFLOW: "true",
      RESUME_NEEDS_SECOND_ADMIN: "true",
    });
    const sentOutside = await chain.hotWallet.sendTransaction({ to: freshAddress(), value: parseEther("0.01") });
    await waitForReceipt(chain, sentOutside.hash, 10_000);
    const wallet = async () => (await service!.app.inject({ method: "GET", url: "/wallet?snapshot=true", headers: AUTHORIZATION })).json();
    await waitUntil(async () => (await wallet()).signingPaused !== null, 10_000, "the pause");
    const latest = (await wallet()).signingPaused.latestHash;
    const resume = (key: string) => service!.app.inject({ method: "POST", url: `/wallet/resume?latestHash=${latest}`, headers: { authorization: `Bearer ${key}` } });

    const asked = await resume(TEST_API_KEY);
    expect(asked.statusCode, asked.body).toBe(202);
    expect(asked.json()).toMatchObject({ resumed: null, awaitingSecondAdmin: { askedBy: idOf(TEST_API_KEY), latestHash: latest.toLowerCase() } });
    const samePerson = await resume(secondKey);
    expect([samePerson.statusCode, samePerson.json().code]).toEqual([403, "RESUME_NEEDS_SECOND_ADMIN"]);
    expect((await wallet()).signingPaused).not.toBeNull();
    const confirmed = await resume(thirdKey);
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json().resumed).toMatchObject({ latestHash: latest });
    expect((await wallet()).signingPaused).toBeNull();

    await service!.services.journal.flushed();
    const audit = (await service!.app.inject({ method: "GET", url: "/audit?order=newest&limit=20", headers: AUTHORIZATION })).json().entries as { kind: string; actor: string | null; detail: Record<string, unknown> }[];
    expect(audit.map((entry) => [entry.kind, entry.actor]).filter(([kind]) => String(kind).startsWith("operator.")).reverse()).toEqual([
      ["operator.resume_asked", idOf(TEST_API_KEY)],
      ["operator.refused", idOf(secondKey)],
      ["operator.resume_signing", idOf(thirdKey)],
    ]);
    expect(audit.some((entry) => entry.kind === "wallet.unexpected_outflow" && entry.detail.hash === sentOutside.hash.toLowerCase())).toBe(true);
  });
});
