/** Many transfers at once: one nonce each, no gaps, exact balances, and no overdraft reaching the chain. */
import { isError, parseUnits } from "ethers";
import { afterEach, describe, expect, it } from "vitest";
import { type TestService, postJson, startService, startServiceBehindProxy } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, mineBlocks, startTestChain, startTestChainOn, tokenBalanceOf, waitForMinedCount } from "../helpers/test-chain.js";

let chain: TestChain | undefined;
let service: TestService | undefined;
afterEach(async () => {
  await service?.close();
  await chain?.stop();
  service = chain = undefined;
});

// Hardhat Network automines and refuses a nonce above the next one, as L2 sequencers do: concurrent
// broadcasts reach it out of order. On automining nodes the 200 pass MAX_IN_FLIGHT_PER_LANE (16) as fast as
// the chain mines them. With a 1 s block time they would take 13 blocks at 16 a block, longer than a transfer
// waits for room: anvil keeps any number pending per sender, and this test is about 200 nonces handed out
// at once, so the limit is raised there (the limit itself: test/e2e/wallet-in-flight-limit.test.ts).
const CHAINS: [string, () => Promise<TestChain>, Record<string, string>][] = [
  ["anvil, automine", () => startTestChain(), {}],
  ["anvil, a 1 s block time", () => startTestChain(["--block-time", "1"]), { MAX_IN_FLIGHT_PER_LANE: "256" }],
  ["Hardhat Network, automine", () => startTestChainOn("hardhat"), {}],
];

describe.each(CHAINS)("200 concurrent transfers on %s", (_label, startChain, env) => {
  it("answers 200 to each, with contiguous nonces and exact balances", async () => {
    chain = await startChain();
    service = await startService(chain.target, env);
    const firstNonce = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
    const recipients = Array.from({ length: 200 }, () => freshAddress());
    const replies = await Promise.all(
      recipients.map((toAddress, index) => postJson((service as TestService).app, "/transfer", { toAddress, amount: `${index + 1}.25` })),
    );
    expect(replies.filter((reply) => reply.statusCode !== 200).map((reply) => reply.body)).toEqual([]);
    const nonces = replies.map((reply) => reply.body.result.nonce as number).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: 200 }, (_, index) => firstNonce + index));

    await waitForMinedCount(chain, firstNonce + 200, 40_000).catch((error: Error) => {
      const unsettled = (service as TestService).services.journal.unsettled().map((entry) => `${entry.nonce}:${entry.state}`);
      const notable = (service as TestService).logs.filter((line) => !/request completed|transfer sent/.test(line));
      throw new Error(`${error.message}\nunsettled: ${unsettled.join(" ")}\n${notable.join("").slice(0, 4000)}`);
    });
    for (const [index, recipient] of recipients.entries()) {
      expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits(`${index + 1}.25`, 18));
    }
  });
});

describe.each([
  ["anvil, a 1 s block time", () => startTestChain(["--block-time", "1"], { supply: 100n })],
  ["Hardhat Network", () => startTestChainOn("hardhat", { supply: 100n })],
] as const)("a burst that overdraws the wallet on %s", (_label, startChain) => {
  it("refuses the excess with 417 INSUFFICIENT_TOKEN_BALANCE at request time; nothing reverts on chain", async () => {
    chain = await startChain();
    service = await startService(chain.target);
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => postJson((service as TestService).app, "/transfer", { toAddress: freshAddress(), amount: "5" })),
    );
    const accepted = replies.filter((reply) => reply.statusCode === 200);
    const refused = replies.filter((reply) => reply.statusCode === 417);
    expect(accepted).toHaveLength(20);
    expect(refused).toHaveLength(10);
    for (const reply of refused) expect(reply.body.code).toBe("INSUFFICIENT_TOKEN_BALANCE");

    const firstNonce = Math.min(...accepted.map((reply) => reply.body.result.nonce as number));
    await waitForMinedCount(chain, firstNonce + 20, 40_000);
    for (const reply of accepted) {
      const receipt = await chain.provider.getTransactionReceipt(reply.body.result.hash);
      expect(receipt?.status).toBe(1);
    }
    expect(await tokenBalanceOf(chain, chain.demo.walletAddress)).toBe(0n);
  });
});

// The operator races the service for nonces too; like any wallet, it retries when its nonce was taken:
// already mined ("nonce too low"), or sent by the service between the operator's count and its send, which
// the node refuses as an underpriced replacement of the service's transaction. Either refusal sent nothing.
async function sendAsOperator(testChain: TestChain): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await (await testChain.hotWallet.sendTransaction({ to: freshAddress(), value: 1n })).wait();
      return;
    } catch (error) {
      const nonceTaken = isError(error, "NONCE_EXPIRED") || isError(error, "REPLACEMENT_UNDERPRICED");
      if (attempt >= 10 || !nonceTaken) throw error;
    }
  }
}

describe("an outside transaction whose nonce the node calls used in words ethers does not know (Nethermind's)", () => {
  it("is read as 'nonce too low': that transfer is held at its nonce (200), the next ones start past the chain's count, nothing jams, and it is paid once the other transaction is final", async () => {
    chain = await startTestChain();
    const proxied = await startServiceBehindProxy(chain.target);
    try {
      proxied.proxy.fault = { kind: "reword-errors", methods: ["eth_sendRawTransaction"], message: "OldNonce, Current nonce: 9, nonce of rejected tx: 8" };
      const first = await postJson(proxied.service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
      expect(first.statusCode).toBe(200);
      // The operator takes the nonce the service would use next, straight at the node.
      await sendAsOperator(chain);
      const recipients = Array.from({ length: 5 }, () => freshAddress());
      const replies = [];
      for (const toAddress of recipients) replies.push(await postJson(proxied.service.app, "/transfer", { toAddress, amount: "1" }));
      for (const reply of replies) expect(reply.statusCode, JSON.stringify(reply.body)).toBe(200);
      // The node's words are no proof that the first one's own bytes did not use the nonce: it keeps it.
      const nonces = replies.map((reply) => reply.body.result.nonce as number);
      expect(nonces).toEqual([1, 2, 3, 4, 5].map((step) => first.body.result.nonce + step));
      await waitForMinedCount(chain, nonces[4] + 1, 40_000);
      // Once the operator's transaction is final (anvil: 64 blocks below the head), the held transfer is
      // signed again at a new nonce; every recipient is paid exactly once.
      await mineBlocks(chain, 70);
      const paid = async () => Promise.all(recipients.map((recipient) => tokenBalanceOf(chain as TestChain, recipient)));
      const deadline = Date.now() + 30_000;
      while ((await paid()).some((units) => units === 0n) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await paid()).toEqual(recipients.map(() => parseUnits("1", chain?.decimals)));
    } finally {
      await proxied.close();
    }
  });
});

describe.each(NODE_KINDS)("an outside transaction from the same wallet in the middle of a run on %s", (kind) => {
  it("is noticed; the sequence resyncs and every later transfer succeeds", async () => {
    chain = await startTestChainOn(kind);
    service = await startService(chain.target);
    const app = service.app;
    const send = () => postJson(app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const before = await Promise.all(Array.from({ length: 20 }, send));
    // An operator uses the key directly, twice, while transfers keep arriving.
    const [, during] = await Promise.all([
      (async () => {
        await sendAsOperator(chain!);
        await sendAsOperator(chain!);
      })(),
      Promise.all(Array.from({ length: 20 }, send)),
    ]);
    const after = await Promise.all(Array.from({ length: 20 }, send));
    for (const reply of [...before, ...during, ...after]) expect(reply.statusCode).toBe(200);
    const nonces = [...before, ...during, ...after].map((reply) => reply.body.result.nonce as number);
    expect(new Set(nonces).size).toBe(60);
    // A 200 means owned until mined, not mined already: a broadcast whose answer was unclear under load is
    // sent again in the background. Every nonce gets mined, with no gap and nothing beyond.
    await waitForMinedCount(chain, Math.max(...nonces) + 1, 40_000);
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(Math.max(...nonces) + 1);
  });
});
