/**
 * Another sender uses the wallet's key between transfers (an operator's transaction, another system): the
 * next transfer is signed past the nonce it took, read from the chain, so it is mined at once with the hash
 * its 200 named, and the 200s' nonces run on contiguously past the outsider's; not held at the outsider's
 * nonce until that transaction is final (minutes on a real chain).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type TestService, postJson, startService } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, startTestChainOn, waitForReceipt } from "../helpers/test-chain.js";
import { waitUntil } from "../helpers/wait-until.js";

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
