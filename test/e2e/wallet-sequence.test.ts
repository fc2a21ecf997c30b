/**
 * The wallet's nonces and balance as a payment service keeps them, on both node implementations:
 * - the ledger never lets more in flight than the balance covers: 15 concurrent transfers of one token from a
 *   wallet that holds 10, twenty times over (a race shows in some runs only): exactly 10 answered 200 and 5
 *   answered 417 INSUFFICIENT_TOKEN_BALANCE each time, and every transfer answered 200 is paid exactly once:
 *   its recipient holds one token, and what was mined at its nonce is one of its own attempts (the hash its 200
 *   named, or a replacement at that nonce: anvil's pool can hold a transaction without mining it under
 *   concurrent sends, foundry-rs/foundry#10122, and the service then replaces it), which did not revert;
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

/**
 * Whether the transfer a 200 named was paid exactly once, from the chain: the recipient holds exactly `amount`,
 * and the transaction mined at its nonce is one of its journaled attempts and succeeded.
 */
async function paidOnce(testChain: TestChain, hash: string, recipient: string, amount: bigint): Promise<string> {
  const entry = service!.services.journal.findByHash(hash);
  if (!entry) return "not in the journal";
  const receipts = await Promise.all(entry.attempts.map((attempt) => testChain.provider.getTransactionReceipt(attempt.hash)));
  const mined = receipts.filter((receipt) => receipt !== null);
  const held = await tokenBalanceOf(testChain, recipient);
  if (mined.length === 1 && mined[0]?.status === 1 && held === amount) return "paid once";
  const attempts = entry.attempts.map((attempt, index) => `${attempt.kind} ${attempt.hash} ${receipts[index] ? `status ${receipts[index]?.status}` : "unmined"}`);
  return `recipient holds ${held}, journal ${entry.state}, attempts ${attempts.join(", ")}`;
}

describe.each(NODE_KINDS)("15 concurrent 1-token transfers from a wallet holding 10 (%s)", (kind) => {
  it(`exactly 10 answered 200 in each of ${RUNS} runs, each paid exactly once`, async () => {
    chain = await startTestChainOn(kind);
    const token = 10n ** BigInt(chain.decimals);
    // Another holder tops the wallet up to 10 tokens before each run: incoming, never an outflow.
    const bank = await chain.provider.getSigner(0);
    const walletTokens = await tokenBalanceOf(chain, chain.demo.walletAddress);
    await (await chain.token.getFunction("transfer")(await bank.getAddress(), walletTokens - 10n * token)).wait();
    service = await startService(chain.target);
    const bankToken = chain.token.connect(bank);
    const outcomes: string[] = [];
    const answered: { hash: string; recipient: string }[] = [];
    for (let run = 0; run < RUNS; run++) {
      if (run > 0) {
        await waitUntil(() => service!.services.journal.unsettled().length === 0, 30_000, "the last run's transfers mined");
        await (await bankToken.getFunction("transfer")(chain.demo.walletAddress, 10n * token)).wait();
      }
      expect(await tokenBalanceOf(chain, chain.demo.walletAddress)).toBe(10n * token);
      const recipients = Array.from({ length: 15 }, () => freshAddress());
      const replies = await Promise.all(recipients.map((toAddress) => postJson(service!.app, "/transfer", { toAddress, amount: "1" })));
      const codes = replies.map((reply) => (reply.statusCode === 200 ? "200" : `${reply.statusCode} ${reply.body.code}`)).sort();
      outcomes.push(`run ${run}: ${codes.filter((code) => code === "200").length} x 200, ${codes.filter((code) => code !== "200").join(", ")}`);
      replies.forEach((reply, index) => {
        if (reply.statusCode === 200) answered.push({ hash: reply.body.result.hash, recipient: recipients[index] as string });
      });
    }
    await waitUntil(() => service!.services.journal.unsettled().length === 0, 30_000, "every transfer mined");
    const unpaid: string[] = [];
    for (const { hash, recipient } of answered) {
      const verdict = await paidOnce(chain, hash, recipient, token);
      if (verdict !== "paid once") unpaid.push(`${hash}: ${verdict}`);
    }
    expect(unpaid, `transfers answered 200 not paid exactly once; ${outcomes.join("; ")}`).toEqual([]);
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
