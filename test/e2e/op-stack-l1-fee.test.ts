/**
 * On OP Stack chains a transaction pays an L1 data fee besides gas x price. On anvil, a fake of the
 * GasPriceOracle predeploy (contracts/FakeGasPriceOracle.sol) put at its address makes the chain look like
 * one: the ETH-for-gas pre-flight and the readiness check must count that fee.
 */
import { ContractFactory, Interface, Wallet, parseUnits, toBeHex } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fakeOracle from "../../contracts/artifacts/FakeGasPriceOracle.json" with { type: "json" };
import { OP_GAS_PRICE_ORACLE } from "../../src/node/op-stack.js";
import { READINESS_CACHE_MS } from "../../src/http/routes/health.js";
import { type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, setEthBalance, startTestChain, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";

const ORACLE = new Interface(fakeOracle.abi);

describe("an OP Stack chain's L1 data fee", () => {
  let chain: TestChain;
  let service: TestService | undefined;

  beforeAll(async () => {
    chain = await startTestChain();
    // The fake oracle's code at the predeploy address, priced at 0.0001 ETH per byte: about 0.02 ETH per transfer.
    const deployer = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, deployer.address, "1");
    const deployed = await new ContractFactory(fakeOracle.abi, fakeOracle.bytecode, deployer).deploy();
    await deployed.waitForDeployment();
    await chain.provider.send("anvil_setCode", [OP_GAS_PRICE_ORACLE, await chain.provider.getCode(await deployed.getAddress())]);
    await chain.provider.send("anvil_setStorageAt", [OP_GAS_PRICE_ORACLE, "0x0", toBeHex(parseUnits("0.0001", "ether"), 32)]);
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("refuses a transfer whose L1 fee the wallet cannot pay, says so in /ready, and sends once it can", async () => {
    const l1Fee = BigInt(
      ORACLE.decodeFunctionResult("getL1Fee", await chain.provider.call({ to: OP_GAS_PRICE_ORACLE, data: ORACLE.encodeFunctionData("getL1Fee", ["0x"]) }))[0],
    );
    expect(l1Fee).toBeGreaterThan(0n);
    // Enough ETH for the L2 gas of many transfers (about 0.0002 ETH each here), not for one L1 data fee.
    await setEthBalance(chain, chain.demo.walletAddress, "0.01");
    service = await startService(chain.target);
    expect(service.chain.opStack).toBe(true);
    expect(service.services.networks[0].ledger.snapshot.l1DataFee).toBeGreaterThan(parseUnits("0.01", "ether"));

    const refused = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(refused.statusCode).toBe(417);
    expect(refused.body.code).toBe("INSUFFICIENT_FUNDS");
    const ready = await service.app.inject({ method: "GET", url: "/ready" });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.gas).toMatch(/cannot pay/);

    // Topped up while the service is idle: the shortfall is checked again against balances read now.
    await setEthBalance(chain, chain.demo.walletAddress, "1");
    const recipient = freshAddress();
    const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "1" });
    expect(sent.statusCode).toBe(200);
    await waitForReceipt(chain, sent.body.result.hash, 5000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("1", 18));
    await new Promise((resolve) => setTimeout(resolve, READINESS_CACHE_MS + 50));
    expect((await service.app.inject({ method: "GET", url: "/ready" })).statusCode).toBe(200);
  });

  it("is not looked for on a chain without the predeploy", async () => {
    const plain = await startTestChain();
    const plainService = await startService(plain.target);
    try {
      expect(plainService.chain.opStack).toBe(false);
      expect(plainService.services.networks[0].ledger.snapshot.l1DataFee).toBe(0n);
    } finally {
      await plainService.close();
      await plain.stop();
    }
  });
});
