/**
 * The payout contract on real nodes: each item succeeds or fails on its own, nobody but the wallet can make
 * it move the wallet's tokens, it never holds any, and a gas limit too low reverts the whole batch rather
 * than failing items.
 */
import { Contract, ContractFactory, MaxUint256, Transaction, type TransactionReceipt, Wallet, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import payoutBatch from "../../contracts/artifacts/PayoutBatch.json" with { type: "json" };
import { MAX_ITEM_UNITS, PAYOUT_BATCH_INTERFACE, type PayoutItem, decodePay, encodePay, failedItems, reasonInWords } from "../../src/node/payout-batch.js";
import { deployTestToken } from "../helpers/test-tokens.js";
import { NODE_KINDS, type TestChain, freshAddress, setEthBalance, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";

describe("payout call data", () => {
  it("packs each item in one word and reads it back", () => {
    const items: PayoutItem[] = [
      { recipient: freshAddress(), units: 1n },
      { recipient: freshAddress(), units: MAX_ITEM_UNITS },
    ];
    const token = freshAddress();
    expect(decodePay(encodePay(token, items))).toEqual({ token, items });
    // Selector, token, offset, length, then one word per item.
    expect((encodePay(token, items).length - 2) / 2).toBe(4 + 32 * 3 + 32 * items.length);
  });

  it("refuses an amount that does not fit beside the address", () => {
    expect(() => encodePay(freshAddress(), [{ recipient: freshAddress(), units: MAX_ITEM_UNITS + 1n }])).toThrow(/below 2\^96/);
  });

  it("is no payout for any other call", () => {
    expect(decodePay("0xa9059cbb" + "00".repeat(64))).toBeUndefined();
  });

  it("says what a token's revert data means", () => {
    expect(reasonInWords("0x")).toMatch(/without a reason/);
    expect(reasonInWords(`0x${"00".repeat(32)}`)).toMatch(/returned false/);
    expect(reasonInWords("0x12345678")).toMatch(/revert data 0x12345678/);
  });
});

describe.each(NODE_KINDS)("PayoutBatch on %s", (kind) => {
  let chain: TestChain;
  let payouts: string;

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    const deployed = await new ContractFactory(payoutBatch.abi, payoutBatch.bytecode, chain.hotWallet).deploy();
    await deployed.waitForDeployment();
    payouts = await deployed.getAddress();
  }, 120_000);

  afterAll(async () => {
    await chain?.stop();
  });

  async function pay(token: string, items: PayoutItem[], gasLimit?: bigint, from: Wallet = chain.hotWallet): Promise<TransactionReceipt> {
    const transaction = await from.populateTransaction({ to: payouts, data: encodePay(token, items), gasLimit });
    const signed = Transaction.from(await from.signTransaction(transaction));
    // Hardhat Network answers the broadcast of a transaction that reverts with an error, having mined it:
    // only that error is taken; any other is the test's failure, not a wait that never ends.
    await chain.provider.send("eth_sendRawTransaction", [signed.serialized]).catch((error: Error) => {
      if (!/revert|ran out of gas/i.test(error.message)) throw error;
    });
    // The tests' own wait: ethers' waitForTransaction misses a transaction an automining node mined at once.
    return waitForReceipt(chain, signed.hash as string, 15_000);
  }

  it("pays 49 of 50 items when one recipient is on the token's blocklist, and reports that one with its reason", async () => {
    const token = await deployTestToken(chain, "RestrictedToken", parseUnits("1000000", 6));
    const tokenAddress = await token.getAddress();
    await (await token.getFunction("approve")(payouts, MaxUint256)).wait();
    const items = Array.from({ length: 50 }, (_, index) => ({ recipient: freshAddress(), units: BigInt(index + 1) * 1_000_000n }));
    await (await token.getFunction("setBlocked")(items[17].recipient, true)).wait();
    const before = (await token.getFunction("balanceOf")(chain.demo.walletAddress)) as bigint;

    const receipt = await pay(tokenAddress, items);

    expect(receipt.status).toBe(1);
    const failed = failedItems(receipt.logs, payouts, chain.demo.walletAddress);
    expect([...failed.keys()]).toEqual([17]);
    expect(failed.get(17)).toBe("the token reverted the transfer: Blocklistable: account is blocked");
    for (const [index, item] of items.entries()) {
      expect((await token.getFunction("balanceOf")(item.recipient)) as bigint).toBe(index === 17 ? 0n : item.units);
    }
    const paid = items.reduce((sum, item, index) => (index === 17 ? sum : sum + item.units), 0n);
    expect((await token.getFunction("balanceOf")(chain.demo.walletAddress)) as bigint).toBe(before - paid);
    expect((await token.getFunction("balanceOf")(payouts)) as bigint).toBe(0n);
  });

  it("moves nothing of the wallet's for any other caller, though the wallet allowed it to spend", async () => {
    await (await chain.token.getFunction("approve")(payouts, MaxUint256)).wait();
    const stranger = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, stranger.address, "1");
    const recipient = freshAddress();
    const walletBefore = await tokenBalanceOf(chain, chain.demo.walletAddress);

    const receipt = await pay(chain.demo.tokenAddress, [{ recipient, units: 5n }], undefined, stranger);

    // The item is the stranger's own transferFrom, which it has no allowance (nor balance) for.
    expect(receipt.status).toBe(1);
    expect([...failedItems(receipt.logs, payouts, stranger.address).keys()]).toEqual([0]);
    // The stranger's call is its own: nothing of it reads as the wallet's.
    expect(failedItems(receipt.logs, payouts, chain.demo.walletAddress).size).toBe(0);
    expect(await tokenBalanceOf(chain, recipient)).toBe(0n);
    expect(await tokenBalanceOf(chain, chain.demo.walletAddress)).toBe(walletBefore);
    // Nor can anyone reach the allowance except through the contract, whose only `from` is its caller.
    const direct = chain.token.connect(stranger) as Contract;
    await expect(direct.getFunction("transferFrom")(chain.demo.walletAddress, recipient, 5n)).rejects.toThrow();
  });

  it("counts a token's false as a failed item, and no return data as paid", async () => {
    const falseToken = await deployTestToken(chain, "FalseReturningToken", 1_000n);
    await (await falseToken.getFunction("approve")(payouts, MaxUint256)).wait();
    const refused = freshAddress();
    await (await falseToken.getFunction("setRefused")(refused, true)).wait();
    const usdt = await deployTestToken(chain, "UsdtStyleToken", 1_000n);
    await (await usdt.getFunction("approve")(payouts, MaxUint256)).wait();
    const accepted = freshAddress();

    const falseReceipt = await pay(await falseToken.getAddress(), [{ recipient: accepted, units: 3n }, { recipient: refused, units: 4n }]);
    const usdtReceipt = await pay(await usdt.getAddress(), [{ recipient: accepted, units: 7n }]);

    expect(Object.fromEntries(failedItems(falseReceipt.logs, payouts, chain.demo.walletAddress))).toEqual({ 1: "the token's transferFrom returned false: it moved nothing" });
    expect((await falseToken.getFunction("balanceOf")(accepted)) as bigint).toBe(3n);
    expect(failedItems(usdtReceipt.logs, payouts, chain.demo.walletAddress).size).toBe(0);
    expect((await usdt.getFunction("balanceOf")(accepted)) as bigint).toBe(7n);
  });

  it("reverts the whole batch when its gas runs out, rather than failing items", async () => {
    await (await chain.token.getFunction("approve")(payouts, MaxUint256)).wait();
    const items = Array.from({ length: 20 }, () => ({ recipient: freshAddress(), units: 1n }));
    const estimate = await chain.provider.estimateGas({ from: chain.demo.walletAddress, to: payouts, data: encodePay(chain.demo.tokenAddress, items) });

    const receipt = await pay(chain.demo.tokenAddress, items, (estimate * 6n) / 10n);

    expect(receipt.status).toBe(0);
    for (const item of items) expect(await tokenBalanceOf(chain, item.recipient)).toBe(0n);
  });

  it("refuses a token address without code", async () => {
    const noCode = freshAddress();
    const refused = await chain.provider.call({ from: chain.demo.walletAddress, to: payouts, data: encodePay(noCode, [{ recipient: freshAddress(), units: 1n }]) }).then(
      () => undefined,
      (error: { data?: string }) => error.data,
    );
    // The contract's own error, naming the address: not any revert.
    expect(refused && PAYOUT_BATCH_INTERFACE.parseError(refused)?.name).toBe("NotAContract");
    expect(refused && PAYOUT_BATCH_INTERFACE.parseError(refused)?.args[0]).toBe(noCode);
  });
});
