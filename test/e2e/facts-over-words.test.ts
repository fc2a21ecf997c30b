/**
 * The chain decides, not a node's words: a transfer whose nonce another sender used, refused in wording
 * no table knows, is signed again at a new nonce and paid exactly once; a node that slows down under load
 * is not flooded into time-outs. On both node implementations, through a proxy that words or slows the
 * node's answers as an implementation we do not know might.
 */
import { Transaction, toQuantity } from "ethers";
import { afterAll, beforeAll, expect } from "vitest";
import { AUTHORIZATION, type ProxiedService, type TestService, postJson, startServiceBehindProxy } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, mineBlocks, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";
import { describe, it } from "../helpers/suites-side-by-side.js";

async function waitUntil(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const status = (service: TestService, hash: string) => service.app.inject({ method: "GET", url: `/transactions/${hash}`, headers: AUTHORIZATION });

describe.each(NODE_KINDS)("facts over words on %s", (kind) => {
  let chain: TestChain;
  let proxied: ProxiedService;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    // A 1 s limit per node call, so that a flooded node's slowness shows as time-outs.
    proxied = await startServiceBehindProxy(chain.target, { REBROADCAST_AFTER_MS: "300", RPC_TIMEOUT_MS: "1000" });
    service = proxied.service;
  });
  afterAll(async () => {
    await proxied?.close();
    await chain?.stop();
  });

  it("transfers whose nonces another sender used, refused in unknown words: each 200, signed again at a new nonce, paid exactly once", async () => {
    const wallet = chain.demo.walletAddress;
    const next = await chain.provider.getTransactionCount(wallet, "pending");
    // Another holder of the wallet's key sends two transactions the service does not know of.
    for (let nonce = next; nonce < next + 2; nonce++) await waitForReceipt(chain, (await chain.hotWallet.sendTransaction({ to: wallet, value: 0n, nonce })).hash, 5_000);
    // The endpoint's backend has not seen them (the service reads the count before signing: a lagging backend
    // answers it as it was), and a node refuses a used nonce in words no table knows.
    proxied.proxy.fault = {
      kind: "script",
      answer: ({ method, params }) => {
        if (method === "eth_getTransactionCount" && (params[1] === "pending" || params[1] === "latest")) return { result: toQuantity(next) };
        if (method === "eth_sendRawTransaction" && Transaction.from(params[0] as string).nonce < next + 2) {
          return { error: { code: -32000, message: `the tx doesn't have the correct nonce. account has nonce of: ${next + 2} tx has nonce of: ${next}` } };
        }
        return undefined;
      },
    };
    const recipients = [freshAddress(), freshAddress(), freshAddress()];
    const replies = await Promise.all(recipients.map((toAddress) => postJson(service.app, "/transfer", { toAddress, amount: "3" })));
    expect(replies.map((reply) => reply.statusCode)).toEqual([200, 200, 200]);

    // A transfer is signed again only once the other transaction at its nonce is found on the chain and its
    // block is final: anvil's finalized block is 64 below its head, Hardhat Network's is its head.
    const resignedFirst = replies.filter((reply) => reply.body.result.nonce < next + 2).map((reply) => reply.body.result.hash as string);
    if (kind === "anvil") {
      await mineBlocks(chain, 8);
      const shownBy = Date.now() + 10_000;
      let documents: { displacedBy?: { blockNumber: number; final: boolean } }[] = [];
      while (Date.now() < shownBy) {
        documents = await Promise.all(resignedFirst.map(async (hash) => (await status(service, hash)).json()));
        if (documents.every((document) => document.displacedBy !== undefined)) break;
        await mineBlocks(chain, 1);
      }
      // Displaced, not final: each status document says by which transaction, nothing is signed for them.
      expect(documents.map((document) => document.displacedBy?.final)).toEqual([false, false]);
      expect(await Promise.all(recipients.map((recipient) => tokenBalanceOf(chain, recipient)))).toEqual(recipients.map((_, index) => (replies[index].body.result.nonce < next + 2 ? 0n : 3n * 10n ** 18n)));
      await mineBlocks(chain, 64);
    }
    const deadline = Date.now() + 30_000;
    let paid: bigint[] = [];
    while (Date.now() < deadline) {
      await mineBlocks(chain, 1);
      paid = await Promise.all(recipients.map((recipient) => tokenBalanceOf(chain, recipient)));
      if (paid.every((amount) => amount > 0n)) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    proxied.proxy.fault = undefined;
    expect(paid).toEqual(recipients.map(() => 3n * 10n ** 18n));
    await mineBlocks(chain, 3);
    expect(await Promise.all(recipients.map((recipient) => tokenBalanceOf(chain, recipient)))).toEqual(paid);

    const resigned = replies.filter((reply) => reply.body.result.nonce < next + 2);
    expect(resigned).toHaveLength(2);
    expect(resigned.map((reply) => reply.body.result.hash)).toEqual(resignedFirst);
    for (const reply of resigned) {
      const first = reply.body.result.hash as string;
      const document = (await status(service, first)).json();
      expect(document).toMatchObject({ hash: first, state: "confirmed" });
      expect(document.attempts).toEqual([
        expect.objectContaining({ hash: first, fate: "replaced", replacedBy: document.carriedBy }),
        expect.objectContaining({ hash: document.carriedBy, kind: "transfer", fate: "mined" }),
      ]);
      // Polling the first hash answers the transaction that carries the transfer.
      const lookup = await postJson(service.app, "/getTransaction", { Tx: first });
      expect(lookup.body.result).toMatchObject({ hash: document.carriedBy, confirmations: expect.any(Number) });
      expect(lookup.body.result.nonce).toBeGreaterThanOrEqual(next + 2);
    }
    // Nonces contiguous: every nonce the wallet used is mined, none twice, none left pending.
    expect(await chain.provider.getTransactionCount(wallet, "latest")).toBe(await chain.provider.getTransactionCount(wallet, "pending"));
    expect(await chain.provider.getTransactionCount(wallet, "latest")).toBe(next + 5);
    await waitUntil(() => service.services.journal.unsettled().length === 0, 5_000, "the re-signed transfers settled in the journal");
  });

  it("a gateway that took the transfer's bytes and then answered \"nonce too low\" (a retry on another backend after they were mined): 200, paid once, never signed again", async () => {
    const wallet = chain.demo.walletAddress;
    const next = await chain.provider.getTransactionCount(wallet, "pending");
    // The first broadcast reaches the node, which mines it; the client of the gateway hears the words.
    let lied = false;
    proxied.proxy.fault = {
      kind: "script",
      answer: ({ method }) => {
        if (method !== "eth_sendRawTransaction" || lied) return undefined;
        lied = true;
        return { errorAfterForward: { code: -32000, message: "nonce too low" } };
      },
    };
    const recipient = freshAddress();
    const reply = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "4" });
    expect(reply.statusCode, reply.raw).toBe(200);
    expect(reply.body.result.nonce).toBe(next);
    await waitForReceipt(chain, reply.body.result.hash, 5_000);
    // Past finality on both nodes, and background rounds enough to have signed it again, had words decided.
    await mineBlocks(chain, 70);
    await waitUntil(() => service.services.journal.findByHash(reply.body.result.hash)?.state === "nonce-used", 10_000, "the transfer settled as mined");
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    proxied.proxy.fault = undefined;
    expect(await tokenBalanceOf(chain, recipient)).toBe(4n * 10n ** 18n);
    expect(await chain.provider.getTransactionCount(wallet, "pending")).toBe(next + 1);
    expect((await status(service, reply.body.result.hash)).json()).toMatchObject({ state: "confirmed", carriedBy: reply.body.result.hash });
  });

  it("200 concurrent transfers against a node that slows down under load: every one 200, none timed out", async () => {
    const wallet = chain.demo.walletAddress;
    const before = await chain.provider.getTransactionCount(wallet, "pending");
    // 6 ms per call under way at the node: 200 calls at once would take 1.2 s each, past the 1 s limit.
    proxied.proxy.fault = { kind: "slow-under-load", msPerCallInFlight: 6 };
    const replies = await Promise.all(Array.from({ length: 200 }, () => postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" })));
    proxied.proxy.fault = undefined;
    expect(replies.filter((reply) => reply.statusCode !== 200).map((reply) => reply.body)).toEqual([]);
    const nonces = replies.map((reply) => reply.body.result.nonce as number).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: 200 }, (_, index) => before + index));
  }, 120_000);
});
