/**
 * Estimates made at the same moment go to the node as one JSON-RPC batch (turn-batch.ts), and so do raw
 * transactions broadcast at the same moment, on both node implementations, through the service's own
 * provider and a proxy that counts requests and can refuse batches as some hosted plans do: each call gets
 * what it would have got alone, and transfers made side by side are all sent and paid, once, whether or not
 * the endpoint takes batches.
 */
import { Interface, Wallet, keccak256, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { estimateGasAtLatest } from "../../src/node/gas-estimate.js";
import { type ProxiedService, postJson, startServiceBehindProxy } from "../helpers/service.js";
import { readNodeAnswer } from "../../src/node/node-answers.js";
import type { RpcEndpoint } from "../../src/node/rpc-endpoint.js";
import { NODE_KINDS, type TestChain, freshAddress, setEthBalance, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";
import { waitUntil } from "../helpers/wait-until.js";

const ERC20 = new Interface(["function transfer(address to, uint256 amount) returns (bool)"]);

describe.each(NODE_KINDS)("estimates made at the same moment on %s", (kind) => {
  let chain: TestChain;
  let proxied: ProxiedService;

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    proxied = await startServiceBehindProxy(chain.target);
  });
  afterAll(async () => {
    await proxied?.close();
    await chain?.stop();
  });

  // Twelve transfers sent side by side, each answered 200 and paid 1 token: their answers.
  async function twelvePaidSideBySide(service: ProxiedService["service"]) {
    const recipients = Array.from({ length: 12 }, () => freshAddress());
    const answers = await Promise.all(recipients.map((toAddress) => postJson(service.app, "/transfer", { toAddress, amount: "1" })));
    expect(answers.map((answer) => answer.statusCode)).toEqual(recipients.map(() => 200));
    await waitUntil(
      async () => (await Promise.all(recipients.map((recipient) => tokenBalanceOf(chain, recipient)))).every((units) => units === parseUnits("1", chain.decimals)),
      20_000,
      "every transfer paid",
    );
    return answers;
  }

  const transferCall = (units: bigint) => ({ from: chain.demo.walletAddress, to: chain.demo.tokenAddress, data: ERC20.encodeFunctionData("transfer", [freshAddress(), units]) });

  it("go in one request (but the first, made while nothing was under way), and each gets the node's own answer to it: an estimate, or the revert of the one that cannot be made", async () => {
    const { proxy, service } = proxied;
    const balance = await tokenBalanceOf(chain, chain.demo.walletAddress);
    const calls = [...Array.from({ length: 7 }, (_, index) => transferCall(BigInt(index + 1))), transferCall(balance + 1n)];
    const alone = await Promise.allSettled(calls.map((call) => estimateGasAtLatest(chain.provider, call)));
    expect(alone.map((each) => each.status)).toEqual([...Array(7).fill("fulfilled"), "rejected"]);

    const seen = proxy.requestMethods.length;
    const batched = await Promise.allSettled(calls.map((call) => estimateGasAtLatest(service.chain.provider, call)));
    const requests = proxy.requestMethods.slice(seen).filter((methods) => methods.includes("eth_estimateGas"));
    expect(requests.flat()).toEqual(Array(8).fill("eth_estimateGas"));
    // All in one when a background read of the service happened to be under way.
    expect([[1, 7], [8]]).toContainEqual(requests.map((methods) => methods.length));
    expect(batched.slice(0, 7)).toEqual(alone.slice(0, 7));
    const revert = batched[7] as PromiseRejectedResult;
    expect(revert.reason).toMatchObject({ code: "CALL_EXCEPTION" });
    expect(String(revert.reason.message)).toMatch(/exceeds balance|reverted/i);
  });

  it("are counted in the metrics one call each, by method, not as one batch", async () => {
    const { service } = proxied;
    const count = async () => Number((await service.metrics.registry.metrics()).match(/rpc_requests_total\{method="eth_estimateGas",outcome="ok"\} (\d+)/)?.[1] ?? 0);
    const before = await count();
    await Promise.all(Array.from({ length: 5 }, (_, index) => estimateGasAtLatest(service.chain.provider, transferCall(BigInt(index + 1)))));
    expect((await count()) - before).toBe(5);
    expect(await service.metrics.registry.metrics()).not.toMatch(/rpc_requests_total\{method="batch"/);
  });

  it("broadcast at the same moment, raw transactions go in one request, and each gets the node's own answer: taken, or refused for its used nonce", async () => {
    const { proxy, service } = proxied;
    const sender = Wallet.createRandom();
    await setEthBalance(chain, sender.address, "1");
    const sign = (nonce: number, value: bigint) =>
      sender.signTransaction({ type: 2, chainId: 31337n, nonce, to: freshAddress(), value, gasLimit: 21_000n, maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n });
    await waitForReceipt(chain, (await chain.provider.broadcastTransaction(await sign(0, 1n))).hash, 10_000);
    // The next nonce, and the used one signed again (consecutive nonces in one batch are not both taken on
    // Hardhat, which may run a batch's calls side by side and refuses a nonce above its pending count).
    const [next, reused] = await Promise.all([sign(1, 1n), sign(0, 2n)]);

    // A slow call under way at the endpoint, so that both wait for the turn's end and go together.
    proxy.fault = { kind: "script", answer: async ({ method }) => (method === "eth_chainId" ? (await new Promise((resolve) => setTimeout(resolve, 200)), undefined) : undefined) };
    const [endpoint] = (service.chain.provider as unknown as { endpoints: { endpoints: RpcEndpoint[] } }).endpoints.endpoints;
    const seen = proxy.requestMethods.length;
    const underWay = endpoint.call({ jsonrpc: "2.0", id: 0, method: "eth_chainId", params: [] });
    const [taken, refused] = await Promise.allSettled([next, reused].map((raw) => service.chain.provider.send("eth_sendRawTransaction", [raw])));
    await underWay;
    proxy.fault = undefined;

    expect(proxy.requestMethods.slice(seen).filter((methods) => methods.includes("eth_sendRawTransaction"))).toEqual([["eth_sendRawTransaction", "eth_sendRawTransaction"]]);
    expect(refused.status).toBe("rejected");
    expect(readNodeAnswer((refused as PromiseRejectedResult).reason).meaning).toBe("nonce-too-low");
    expect(taken.status).toBe("fulfilled");
    expect((await waitForReceipt(chain, (taken as PromiseFulfilledResult<string>).value, 10_000)).status).toBe(1);
    expect(await chain.provider.getTransactionCount(sender.address, "latest")).toBe(2);
  });

  it("sent side by side, transfers have their broadcasts go in batches, and each is paid once", async () => {
    const { proxy, service } = proxied;
    const seen = proxy.requestMethods.length;
    // The hash of every raw transaction that reaches the node, each call of a batch too (passed on as it is).
    const broadcastHashes = new Set<string>();
    proxy.fault = {
      kind: "script",
      answer: ({ method, params }) => {
        if (method === "eth_sendRawTransaction") broadcastHashes.add(keccak256(params[0] as string));
        return undefined;
      },
    };
    const answers = await twelvePaidSideBySide(service).finally(() => (proxy.fault = undefined));
    const broadcasts = proxy.requestMethods.slice(seen).filter((methods) => methods.includes("eth_sendRawTransaction"));
    // The first may go alone (nothing was under way); the rest leave together.
    expect(broadcasts.some((methods) => methods.length >= 10)).toBe(true);
    const hashes = answers.map((answer) => (answer.body as { result: { hash: string } }).result.hash);
    expect(new Set(hashes).size).toBe(12);
    // Nothing signed but the twelve answered. A broadcast may be the same bytes again: Hardhat refuses a
    // nonce above its pending count until the one before arrives (the first, sent alone, may still be on its
    // way), and the submitter sends such a one again after it; anvil queues it, but once, on Node 22 in CI,
    // left two of them unmined until the service sent them again (REBROADCAST_AFTER_MS).
    expect([...broadcastHashes].sort()).toEqual([...hashes].sort());
    for (const hash of hashes) expect((await waitForReceipt(chain, hash, 10_000)).status).toBe(1);
  });

  for (const refusal of ["one-error", "http-400"] as const) {
    it(`let transfers side by side all be sent and paid when the endpoint refuses batches (${refusal}), and each goes alone from then on`, async () => {
      const fresh = await startServiceBehindProxy(chain.target);
      try {
        const { proxy, service } = fresh;
        proxy.refuseBatches = refusal;
        await twelvePaidSideBySide(service);
        // Whatever the transfers' estimates met: three turns more of two estimates each, every one answered.
        for (let turn = 0; turn < 3; turn++) {
          const estimates = await Promise.all([1n, 2n].map((units) => estimateGasAtLatest(service.chain.provider, transferCall(units))));
          expect(estimates.every((estimate) => BigInt(estimate) > 21_000n)).toBe(true);
        }
        // A plain refusal ends batching at once; HTTP 400s where the calls alone are answered, after three in a row.
        expect(service.logs.filter((line) => line.includes("does not take batches of estimates"))).toHaveLength(1);
        const seen = proxy.requestMethods.length;
        await Promise.all([1n, 2n, 3n, 4n].map((units) => estimateGasAtLatest(service.chain.provider, transferCall(units))));
        expect(proxy.requestMethods.slice(seen).filter((methods) => methods.includes("eth_estimateGas"))).toEqual(Array(4).fill(["eth_estimateGas"]));
      } finally {
        await fresh.close();
      }
    });
  }
});
