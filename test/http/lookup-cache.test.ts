/** Lookups with the head tracker and the mined-transaction cache: fast, and still exact and truthful. */
import { Contract, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import demoToken from "../../contracts/artifacts/DemoToken.json" with { type: "json" };
import { toV5LookupRecord } from "../../src/wire/v5-record.js";
import { countRpcCalls } from "../../bench/measure.js";
import { AUTHORIZATION, type TestService, postJson, startService } from "../helpers/service.js";
import { TEST_HEAD_MAX_AGE_MS, type TestChain, freshAddress, mineBlocks, startTestChain } from "../helpers/test-chain.js";

describe("cached lookups", () => {
  let chain: TestChain;
  let service: TestService;
  let rpc: Awaited<ReturnType<typeof countRpcCalls>>;

  beforeAll(async () => {
    chain = await startTestChain(["--no-mining"]);
    service = await startService(chain.target);
    rpc = await countRpcCalls(service.chain.provider);
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  const lookUp = (hash: string) => postJson(service.app, "/getTransaction", { Tx: hash });
  const status = (hash: string) => service.app.inject({ method: "GET", url: `/transactions/${hash}`, headers: AUTHORIZATION });
  const sendOutside = async (gasLimit?: bigint) => {
    const token = new Contract(chain.demo.tokenAddress, demoToken.abi, chain.hotWallet);
    const nonce = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
    return (await token.getFunction("transfer")(freshAddress(), parseUnits("1", 18), { nonce, gasLimit })).hash as string;
  };

  it("counts confirmations exactly across many blocks, asking the node for the transaction once", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const hash: string = sent.body.result.hash;
    await mineBlocks(chain, 1);
    const before = rpc.byMethod().eth_getTransactionByHash ?? 0;
    for (let expected = 1; expected <= 12; expected++) {
      for (let repeat = 0; repeat < 5; repeat++) expect((await lookUp(hash)).body.result.confirmations).toBe(expected);
      await mineBlocks(chain, 1);
    }
    expect((rpc.byMethod().eth_getTransactionByHash ?? 0) - before).toBe(1);
  });

  it("asks the node about a pending transaction every time, and answers it truthfully", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const hash: string = sent.body.result.hash;
    const before = rpc.byMethod().eth_getTransactionByHash ?? 0;
    expect((await lookUp(hash)).body.result.confirmations).toBe(0);
    expect((await lookUp(hash)).body.result.confirmations).toBe(0);
    expect((rpc.byMethod().eth_getTransactionByHash ?? 0) - before).toBe(2);
    await mineBlocks(chain, 1);
    expect((await lookUp(hash)).body.result.confirmations).toBe(1);
  });

  it("shares one node request among concurrent lookups of the same hash", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    await mineBlocks(chain, 1);
    const before = rpc.byMethod().eth_getTransactionByHash ?? 0;
    const replies = await Promise.all(Array.from({ length: 20 }, () => lookUp(sent.body.result.hash)));
    expect(new Set(replies.map((reply) => reply.raw)).size).toBe(1);
    expect((rpc.byMethod().eth_getTransactionByHash ?? 0) - before).toBe(1);
  });

  it("notices a reorg that removes a cached transaction, and shows what the node says now", async () => {
    const snapshot: string = await chain.provider.send("evm_snapshot", []);
    const hash = await sendOutside();
    await mineBlocks(chain, 1);
    const cached = await lookUp(hash);
    expect(cached.body.result.confirmations).toBe(1);

    await chain.provider.send("evm_revert", [snapshot]);
    await mineBlocks(chain, 3);
    const raw = await chain.provider.send("eth_getTransactionByHash", [hash]);
    const head = await chain.provider.getBlockNumber();
    const truth = JSON.stringify({ result: raw && toV5LookupRecord(raw, head) });
    const after = await lookUp(hash);
    expect(after.raw).toBe(truth);
    expect(after.raw).not.toBe(cached.raw);
  });

  it("notices anvil_reorg replacing the block of a cached transaction", async () => {
    const hash = await sendOutside();
    await mineBlocks(chain, 1);
    const cached = await lookUp(hash);
    expect(cached.body.result.blockHash).toMatch(/^0x/);

    await chain.provider.send("anvil_reorg", [2, []]);
    await new Promise((resolve) => setTimeout(resolve, TEST_HEAD_MAX_AGE_MS + 20));
    const raw = await chain.provider.send("eth_getTransactionByHash", [hash]);
    const head = await chain.provider.getBlockNumber();
    const after = await lookUp(hash);
    expect(after.raw).toBe(JSON.stringify({ result: raw && toV5LookupRecord(raw, head) }));
    if (raw?.blockHash) expect(after.body.result.blockHash).not.toBe(cached.body.result.blockHash);
  });

  describe("GET /transactions/:hash", () => {
    it("describes a confirmed transfer, with receipt figures and the decoded transfer", async () => {
      const recipient = freshAddress();
      const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2.5" });
      await mineBlocks(chain, 2);
      const reply = await status(sent.body.result.hash);
      expect(reply.statusCode).toBe(200);
      const receipt = await chain.provider.getTransactionReceipt(sent.body.result.hash);
      expect(reply.json()).toEqual({
        hash: sent.body.result.hash,
        // Without NETWORKS_FILE the chain id names the network, and the address the token.
        network: "31337",
        chainId: 31337,
        state: "confirmed",
        confirmations: 2,
        blockNumber: receipt?.blockNumber,
        blockHash: receipt?.blockHash,
        gasUsed: receipt?.gasUsed.toString(),
        effectiveGasPrice: receipt?.gasPrice.toString(),
        transfer: {
          token: chain.demo.tokenAddress,
          tokenSymbol: chain.demo.tokenAddress,
          from: chain.demo.walletAddress,
          to: recipient,
          amount: "2500000000000000000",
          amountInTokens: "2.5",
          requestedAmount: "2500000000000000000",
        },
        // The service's own transfer: the attempt that carries it, and its one attempt.
        carriedBy: sent.body.result.hash,
        attempts: [
          {
            hash: sent.body.result.hash,
            kind: "transfer",
            signedAtBlock: expect.any(Number),
            maxFeePerGas: BigInt(sent.body.result.maxFeePerGas.hex).toString(),
            maxPriorityFeePerGas: BigInt(sent.body.result.maxPriorityFeePerGas.hex).toString(),
            gasPrice: null,
            fate: "mined",
            replacedBy: null,
          },
        ],
        // Two blocks deep on anvil, whose finalized block is 64 below its head.
        finalized: false,
        finalizedBlock: null,
      });
    });

    it("says failed for a transfer that reverted on chain", async () => {
      const freeze = await chain.token.getFunction("setFrozen")(true, { nonce: await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending") });
      await mineBlocks(chain, 1);
      await freeze.wait();
      const hash = await sendOutside(100_000n);
      await mineBlocks(chain, 1);
      const unfreeze = await chain.token.getFunction("setFrozen")(false, { nonce: await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending") });
      await mineBlocks(chain, 1);
      await unfreeze.wait();
      const reply = await status(hash);
      // Reverted: the recipient received nothing of what was requested.
      expect(reply.json()).toMatchObject({ state: "failed", confirmations: 2, transfer: { amount: "0", amountInTokens: "0", requestedAmount: "1000000000000000000" } });
      expect(Number(reply.json().gasUsed)).toBeGreaterThan(21_000);
      // The wallet's key was used outside the service just now: a transfer meeting those nonces would be
      // held until they are final (64 blocks on anvil), so the service starts again, counting them.
      await service.close();
      service = await startService(chain.target);
      rpc = await countRpcCalls(service.chain.provider);
    });

    it("says pending for a transaction not yet mined", async () => {
      const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
      const reply = await status(sent.body.result.hash);
      expect(reply.json()).toMatchObject({ state: "pending", confirmations: 0, blockNumber: null, gasUsed: null });
      await mineBlocks(chain, 1);
    });

    it("answers 404 TRANSACTION_NOT_FOUND for an unknown hash, and 400 for a malformed one", async () => {
      const unknown = await status(`0x${"12".repeat(32)}`);
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toMatchObject({ statusCode: 404, code: "TRANSACTION_NOT_FOUND", error: "Not Found" });
      const malformed = await status("0x1234");
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json().code).toBe("FST_ERR_VALIDATION");
    });
  });

  describe("POST /transfer?waitConfirmations=N", () => {
    it("answers once the transfer has N confirmations, in the v5 transfer shape", async () => {
      const reply = postJson(service.app, "/transfer?waitConfirmations=2&waitTimeoutMs=10000", { toAddress: freshAddress(), amount: "1" });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await mineBlocks(chain, 1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await mineBlocks(chain, 1);
      const { statusCode, body } = await reply;
      expect(statusCode).toBe(200);
      expect(body.result.confirmations).toBe(2);
      expect(body.result.gasPrice).toBeNull();
      expect(Object.keys(body.result).at(-1)).toBe("confirmations");
    });

    it("answers the record as it stands when the time runs out", async () => {
      const started = Date.now();
      const { statusCode, body } = await postJson(service.app, "/transfer?waitConfirmations=3&waitTimeoutMs=600", { toAddress: freshAddress(), amount: "1" });
      expect(statusCode).toBe(200);
      expect(body.result.confirmations).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      await mineBlocks(chain, 1);
    });

    it.each(["13", "-1", "two", "1.5"])("refuses waitConfirmations=%s with 400", async (value) => {
      const reply = await postJson(service.app, `/transfer?waitConfirmations=${value}`, { toAddress: freshAddress(), amount: "1" });
      expect(reply.statusCode).toBe(400);
    });
  });
});
