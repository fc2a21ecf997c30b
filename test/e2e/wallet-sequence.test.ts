/**
 * The wallet's nonces and balance as a payment service keeps them, on both node implementations:
 * - the ledger never lets more in flight than the balance covers: 15 concurrent transfers of one token from a
 *   wallet that holds 10, twenty times over (a race shows in some runs only): exactly 10 answered 200 and 5
 *   answered 417 INSUFFICIENT_TOKEN_BALANCE each time, and no transfer answered 200 reverts on chain;
 * - another sender uses the wallet's key between transfers (an operator's transaction, another system): the
 *   next transfer is signed past the nonce it took, read from the chain, so it is mined at once with the hash
 *   its 200 named, and the 200s' nonces run on contiguously past the outsider's; not held at the outsider's
 *   nonce until that transaction is final (minutes on a real chain).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type TestService, postJson, startService } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";
import { waitUntil } from "../helpers/wait-until.js";

const RUNS = 20;

let chain: TestChain | undefined;
let service: TestService | undefined;
afterEach(async () => {
  await service?.close();
  await chain?.stop();
  service = undefined;
  chain = undefined;
});

async function transfer(): Promise<{ hash: string; nonce: number }> {
  const reply = await postJson(service!.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
  expect(reply.statusCode, reply.raw).toBe(200);
  return { hash: reply.body.result.hash, nonce: reply.body.result.nonce };
}

describe.each(NODE_KINDS)("15 concurrent 1-token transfers from a wallet holding 10 (%s)", (kind) => {
  it(`exactly 10 answered 200 in each of ${RUNS} runs, and none of them reverts`, async () => {
    chain = await startTestChainOn(kind);
    const token = 10n ** BigInt(chain.decimals);
    // Another holder tops the wallet up to 10 tokens before each run: incoming, never an outflow.
    const bank = await chain.provider.getSigner(0);
    const walletTokens = await tokenBalanceOf(chain, chain.demo.walletAddress);
    await (await chain.token.getFunction("transfer")(await bank.getAddress(), walletTokens - 10n * token)).wait();
    service = await startService(chain.target);
    const bankToken = chain.token.connect(bank);
    const outcomes: string[] = [];
    const answered: string[] = [];
    for (let run = 0; run < RUNS; run++) {
      if (run > 0) {
        await waitUntil(() => service!.services.journal.unsettled().length === 0, 30_000, "the last run's transfers mined");
        await (await bankToken.getFunction("transfer")(chain.demo.walletAddress, 10n * token)).wait();
      }
      expect(await tokenBalanceOf(chain, chain.demo.walletAddress)).toBe(10n * token);
      const replies = await Promise.all(Array.from({ length: 15 }, () => postJson(service!.app, "/transfer", { toAddress: freshAddress(), amount: "1" })));
      const codes = replies.map((reply) => (reply.statusCode === 200 ? "200" : `${reply.statusCode} ${reply.body.code}`)).sort();
      outcomes.push(`run ${run}: ${codes.filter((code) => code === "200").length} x 200, ${codes.filter((code) => code !== "200").join(", ")}`);
      for (const reply of replies) if (reply.statusCode === 200) answered.push(reply.body.result.hash);
    }
    await waitUntil(() => service!.services.journal.unsettled().length === 0, 30_000, "every transfer mined");
    const receipts = await Promise.all(answered.map((hash) => chain!.provider.getTransactionReceipt(hash)));
    const bad = answered.flatMap((hash, index) => (receipts[index]?.status === 1 ? [] : [`${hash}: ${receipts[index] ? "reverted" : "not mined"}`]));
    expect(bad, `transfers answered 200 that reverted or were never mined; ${outcomes.join("; ")}`).toEqual([]);
    expect(outcomes).toEqual(Array.from({ length: RUNS }, (_, run) => `run ${run}: 10 x 200, ${Array(5).fill("417 INSUFFICIENT_TOKEN_BALANCE").join(", ")}`));
  }, 240_000);
});

describe.each(NODE_KINDS)("after another sender used the wallet's key (%s)", (kind) => {
  it("the next transfers are signed past its nonce, each mined with the hash its 200 named, their nonces contiguous", async () => {
    chain = await startTestChainOn(kind);
    service = await startService(chain.target);
    const first = await transfer();
    await waitUntil(() => service!.services.journal.unsettled().length === 0, 20_000, "the first transfer mined");
    const outside = await chain.hotWallet.sendTransaction({ to: chain.demo.walletAddress, value: 0n });
    await outside.wait();
    expect(outside.nonce).toBe(first.nonce + 1);
    const next = [await transfer(), await transfer(), await transfer()];
    expect(next.map((each) => each.nonce)).toEqual([first.nonce + 2, first.nonce + 3, first.nonce + 4]);
    for (const { hash } of next) expect((await waitForReceipt(chain, hash, 10_000)).status).toBe(1);
  }, 60_000);
});
