/** The fee policy on a real chain: the caps hold, and the gas limit follows GAS_LIMIT_MULTIPLIER. */
import { parseUnits, toBigInt } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeTransfer } from "../../src/node/erc20.js";
import { type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, startTestChain, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";

describe("the fee policy on anvil", () => {
  let chain: TestChain;
  let service: TestService;
  beforeAll(async () => {
    chain = await startTestChain();
    service = await startService(chain.target, { MAX_FEE_PER_GAS: "1.5", MAX_PRIORITY_FEE_PER_GAS: "0.2", MIN_PRIORITY_FEE_PER_GAS: "0.5", GAS_LIMIT_MULTIPLIER: "1.25" });
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("signs within the caps (here below twice the base fee) and with the estimate times the multiplier", async () => {
    const baseFee = toBigInt((await chain.provider.send("eth_getBlockByNumber", ["latest", false])).baseFeePerGas);
    expect(2n * baseFee).toBeGreaterThan(parseUnits("1.5", "gwei"));
    const recipient = freshAddress();
    const units = parseUnits("2", 18);
    const estimate = toBigInt(
      await chain.provider.send("eth_estimateGas", [{ from: chain.demo.walletAddress, to: chain.demo.tokenAddress, data: encodeTransfer(recipient, units) }]),
    );
    const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2" });
    expect(sent.statusCode).toBe(200);
    const { maxFeePerGas, maxPriorityFeePerGas, gasLimit } = sent.body.result;
    expect(BigInt(maxFeePerGas.hex)).toBe(parseUnits("1.5", "gwei"));
    // The floor (0.5 gwei) is above the tip cap (0.2 gwei): the cap wins.
    expect(BigInt(maxPriorityFeePerGas.hex)).toBe(parseUnits("0.2", "gwei"));
    expect(BigInt(gasLimit.hex)).toBe((estimate * 125n + 99n) / 100n);
    await waitForReceipt(chain, sent.body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(units);
  });
});
