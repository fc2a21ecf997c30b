/** POST /getTransaction against anvil with automine off: pending, then confirmed, then counting blocks. */
import { ContractFactory, Wallet, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import demoToken from "../../contracts/artifacts/DemoToken.json" with { type: "json" };
import { type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, mineBlocks, setEthBalance, startTestChain, tokenBalanceOf } from "../helpers/test-chain.js";

describe("POST /getTransaction", () => {
  let chain: TestChain;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain(["--no-mining"]);
    service = await startService(chain.target);
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  const lookUp = (hash: string) => postJson(service.app, "/getTransaction", { Tx: hash });

  it("shows a transfer pending, then confirmed, with confirmations growing block by block", async () => {
    const recipient = freshAddress();
    const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "7" });
    expect(sent.statusCode).toBe(200);
    const hash: string = sent.body.result.hash;

    const pending = await lookUp(hash);
    expect(pending.statusCode).toBe(200);
    expect(pending.body.result).toMatchObject({ hash, blockHash: null, blockNumber: null, transactionIndex: null, confirmations: 0 });
    expect(await tokenBalanceOf(chain, recipient)).toBe(0n);

    await mineBlocks(chain, 1);
    const mined = await lookUp(hash);
    expect(mined.body.result.confirmations).toBe(1);
    expect(mined.body.result.blockNumber).toBe(await chain.provider.getBlockNumber());
    expect(mined.body.result.blockHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("7", 18));

    for (const expected of [2, 3, 4]) {
      await mineBlocks(chain, 1);
      expect((await lookUp(hash)).body.result.confirmations).toBe(expected);
    }
    await mineBlocks(chain, 10);
    expect((await lookUp(hash)).body.result.confirmations).toBe(14);
  });

  it("accepts the hash in upper case", async () => {
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    await mineBlocks(chain, 1);
    const hash: string = sent.body.result.hash;
    const reply = await lookUp(`0x${hash.slice(2).toUpperCase()}`);
    expect(reply.statusCode).toBe(200);
    expect(reply.body.result.hash).toBe(hash);
  });

  it("answers {result: null} for a well-formed hash the node does not know", async () => {
    const reply = await lookUp(`0x${"ab".repeat(32)}`);
    expect(reply.statusCode).toBe(200);
    expect(reply.raw).toBe('{"result":null}');
  });

  it("shows transactions it did not send: a legacy one and a contract creation, in v5's formats", async () => {
    const outsider = Wallet.createRandom().connect(chain.provider);
    await setEthBalance(chain, outsider.address, "10");
    const legacy = await outsider.sendTransaction({ type: 0, to: freshAddress(), value: 5n, gasPrice: parseUnits("3", "gwei"), gasLimit: 21000n });
    const factory = new ContractFactory(demoToken.abi, demoToken.bytecode, outsider);
    const creation = await factory.getDeployTransaction("X", "X", 6, 1n);
    const deployed = await outsider.sendTransaction({ ...creation, nonce: 1 });
    await mineBlocks(chain, 1);

    const legacyRecord = (await lookUp(legacy.hash)).body.result;
    expect(legacyRecord.type).toBe(0);
    expect(legacyRecord.v === 31337 * 2 + 35 || legacyRecord.v === 31337 * 2 + 36).toBe(true);
    expect(legacyRecord.gasPrice).toEqual({ type: "BigNumber", hex: "0xb2d05e00" });
    expect(legacyRecord).not.toHaveProperty("maxFeePerGas");
    expect(legacyRecord.creates).toBeNull();

    const creationRecord = (await lookUp(deployed.hash)).body.result;
    expect(creationRecord.to).toBeNull();
    expect(creationRecord.creates).toBe((await chain.provider.getTransactionReceipt(deployed.hash))?.contractAddress);
  });

  describe("refuses a malformed hash with 400", () => {
    const cases: [string, unknown][] = [
      ["too short", { Tx: "0x1234" }],
      ["without 0x", { Tx: "ab".repeat(32) }],
      ["too long", { Tx: `0x${"ab".repeat(33)}` }],
      ["not hex", { Tx: `0x${"zz".repeat(32)}` }],
      ["a number", { Tx: 12345 }],
      ["missing", {}],
      ["under another name", { tx: `0x${"ab".repeat(32)}` }],
      ["with an extra field", { Tx: `0x${"ab".repeat(32)}`, extra: 1 }],
      ["null", { Tx: null }],
    ];
    it.each(cases)("%s", async (_label, payload) => {
      const reply = await postJson(service.app, "/getTransaction", payload);
      expect(reply.statusCode).toBe(400);
      expect(reply.body).toEqual({ statusCode: 400, code: "FST_ERR_VALIDATION", error: "Bad Request", message: expect.any(String) });
    });
  });

  it("holds a transfer whose nonce an operator's pending transaction took with a higher fee; signs it again once that one is mined and final: paid once", async () => {
    const nonce = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
    // Let the service learn the nonce, then an operator takes it with a generous fee before the service uses it.
    expect((await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" })).statusCode).toBe(200);
    await chain.hotWallet.sendTransaction({
      to: freshAddress(),
      value: 1n,
      nonce: nonce + 1,
      maxFeePerGas: parseUnits("100", "gwei"),
      maxPriorityFeePerGas: parseUnits("50", "gwei"),
    });
    // The node refuses it as an underpriced replacement: words, no proof (through a gateway, its own bytes
    // may be in another pool), so it keeps its nonce until the chain shows what used it.
    const recipient = freshAddress();
    const reply = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "1" });
    expect(reply.statusCode).toBe(200);
    expect(reply.body.result.nonce).toBe(nonce + 1);
    await mineBlocks(chain, 1);
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(nonce + 2);
    expect(await tokenBalanceOf(chain, recipient)).toBe(0n);
    // anvil's finalized block is 64 below its head.
    await mineBlocks(chain, 70);
    for (let block = 0; block < 40 && (await tokenBalanceOf(chain, recipient)) === 0n; block++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await mineBlocks(chain, 1);
    }
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("1", 18));
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(nonce + 3);
  });
});
