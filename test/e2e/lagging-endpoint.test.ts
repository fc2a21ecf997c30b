/**
 * Pay twice never, through an endpoint that is a fleet: its receipts, mined lookups and Transfer logs
 * appear 8 s after the block that mined them, while heads, blocks and nonce counts are fresh, with a block
 * a second. The absence of a receipt is no proof that another transaction used a nonce: every transfer
 * answered 200 is paid exactly once, and the wallet spends exactly what was asked. On both node
 * implementations, each interval-mining.
 */
import { JsonRpcProvider } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { watchLaggingFleet, type LaggingFleet } from "../helpers/lagging-fleet.js";
import { type ProxiedService, postJson, startServiceBehindProxy } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, startTestChainOn, tokenBalanceOf } from "../helpers/test-chain.js";
import { waitUntil } from "../helpers/wait-until.js";

const LAG_MS = 8_000;
const TRANSFERS = 16;

describe.each(NODE_KINDS)("through an endpoint whose receipts, lookups and logs lag 8 s (%s, a block a second)", (kind) => {
  let chain: TestChain;
  let proxied: ProxiedService;
  let fleet: LaggingFleet;

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    await chain.provider.send("evm_setAutomine", [false]);
    // A block a second: anvil counts the interval in seconds, Hardhat Network in milliseconds.
    await chain.provider.send("evm_setIntervalMining", [kind === "anvil" ? 1 : 1_000]);
    fleet = watchLaggingFleet(chain.rpcUrl);
    proxied = await startServiceBehindProxy(chain.target, { REBROADCAST_AFTER_MS: "500", CHAIN_REFRESH_INTERVAL_MS: "200" });
    proxied.proxy.fault = { kind: "script", answer: (call) => fleet.answer(call, LAG_MS) };
  }, 60_000);
  afterAll(async () => {
    fleet?.stop();
    await proxied?.close();
    await chain?.stop();
  });

  it("16 concurrent transfers: every 200 paid exactly once, 16 transactions mined, the wallet spent exactly what was asked", async () => {
    const { service } = proxied;
    const wallet = chain.demo.walletAddress;
    const spentBefore = await tokenBalanceOf(chain, wallet);
    const nonceBefore = await chain.provider.getTransactionCount(wallet, "latest");
    const asked = Array.from({ length: TRANSFERS }, (_, index) => ({ toAddress: freshAddress(), units: BigInt(index + 1) * 10n ** 18n }));
    const replies = await Promise.all(asked.map(({ toAddress, units }) => postJson(service.app, "/transfer", { toAddress, amount: String(units / 10n ** 18n) })));
    for (const reply of replies) expect(reply.statusCode, reply.raw).toBe(200);

    // Every transfer verified mined by the service (it does not wait for the receipts: here within 2 s).
    await waitUntil(() => service.services.journal.unsettled().length === 0 && service.services.journal.usedUnverified().length === 0, 60_000, "every transfer verified mined").catch((error: Error) => {
      const journal = service.services.journal;
      const open = [...journal.unsettled(), ...journal.usedUnverified()].map((entry) => `${entry.nonce} ${entry.state}`);
      const notable = service.logs.filter((line) => !/request completed|transfer sent/.test(line)).slice(-20);
      throw new Error(`${error.message}; open: ${open.join(", ")}; the service's last notable log lines:\n${notable.join("")}`);
    });
    // Past the lag itself: until the endpoint shows every receipt, a service that takes a missing receipt
    // for proof may still sign a transfer again. A second payment would be a transaction of the wallet, mined
    // or waiting in the node's pool: the latest and pending counts below show either.
    const throughTheFleet = new JsonRpcProvider(proxied.proxy.url, undefined, { staticNetwork: true });
    try {
      const hashes = replies.map((reply) => reply.body.result.hash as string);
      await waitUntil(async () => (await Promise.all(hashes.map((hash) => throughTheFleet.getTransactionReceipt(hash)))).every((receipt) => receipt !== null), LAG_MS + 20_000, "every receipt shown by the lagging endpoint");
    } finally {
      throughTheFleet.destroy();
    }
    const paid = await Promise.all(asked.map(({ toAddress }) => tokenBalanceOf(chain, toAddress)));
    expect(paid).toEqual(asked.map(({ units }) => units));
    expect(spentBefore - (await tokenBalanceOf(chain, wallet))).toBe(asked.reduce((sum, { units }) => sum + units, 0n));
    expect(await chain.provider.getTransactionCount(wallet, "latest")).toBe(nonceBefore + TRANSFERS);
    expect(await chain.provider.getTransactionCount(wallet, "pending")).toBe(nonceBefore + TRANSFERS);
  }, 120_000);
});
