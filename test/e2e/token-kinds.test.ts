/**
 * Tokens people actually send, end to end on anvil: USDT's transfer() that returns nothing, a USDC-style
 * blocklist and pause switch, a fee-on-transfer token, and an early-style token that returns false
 * instead of reverting. Refusals cost no gas and send nothing; the status document reports what the
 * recipient actually received.
 */
import { type Contract, Wallet, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTHORIZATION, type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, setEthBalance, startTestChain, waitForReceipt } from "../helpers/test-chain.js";
import { type TestTokenName, deployTestToken } from "../helpers/test-tokens.js";

describe("tokens people actually send", () => {
  let chain: TestChain;
  beforeAll(async () => {
    chain = await startTestChain();
  });
  afterAll(async () => {
    await chain?.stop();
  });

  async function serviceFor(name: TestTokenName, supply: bigint, owner?: Wallet): Promise<{ token: Contract; service: TestService }> {
    const token = await deployTestToken(chain, name, supply, owner);
    const service = await startService({ ...chain.target, tokenAddress: await token.getAddress() });
    return { token, service };
  }
  const balanceOf = async (token: Contract, address: string) => (await token.getFunction("balanceOf")(address)) as bigint;
  const statusOf = async (service: TestService, hash: string) => (await service.app.inject({ method: "GET", url: `/transactions/${hash}`, headers: AUTHORIZATION })).json();
  const walletState = async () => ({
    nonce: await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending"),
    eth: await chain.provider.getBalance(chain.demo.walletAddress),
  });

  it("a USDT-style token whose transfer() returns nothing is sent, mined and reported", async () => {
    const { token, service } = await serviceFor("UsdtStyleToken", parseUnits("1000", 6));
    try {
      // It reverts a transfer it cannot make: no per-transfer return check is needed.
      expect(service.chain.tokenMayReturnFalse).toBe(false);
      const recipient = freshAddress();
      const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "1.5" });
      expect(sent.statusCode).toBe(200);
      await waitForReceipt(chain, sent.body.result.hash, 5000);
      expect(await balanceOf(token, recipient)).toBe(1_500_000n);
      expect(await statusOf(service, sent.body.result.hash)).toMatchObject({ state: "confirmed", transfer: { to: recipient, amount: "1500000", amountInTokens: "1.5" } });
    } finally {
      await service.close();
    }
  });

  it("a blocked recipient or a paused USDC-style token: 417 CALL_EXCEPTION with the contract's reason, no gas spent", async () => {
    const { token, service } = await serviceFor("RestrictedToken", parseUnits("1000", 6));
    try {
      const blocked = freshAddress();
      await (await token.getFunction("setBlocked")(blocked, true)).wait();
      const before = await walletState();
      const toBlocked = await postJson(service.app, "/transfer", { toAddress: blocked, amount: "1" });
      expect(toBlocked.statusCode).toBe(417);
      expect(toBlocked.body).toMatchObject({ code: "CALL_EXCEPTION", message: expect.stringContaining("Blocklistable: account is blocked") });

      await (await token.getFunction("setPaused")(true)).wait();
      const paused = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
      expect(paused.statusCode).toBe(417);
      expect(paused.body).toMatchObject({ code: "CALL_EXCEPTION", message: expect.stringContaining("Pausable: paused") });
      const pausing = await walletState();
      // Only the owner's own pause transaction moved the wallet's nonce; the refusals sent nothing.
      expect(pausing.nonce).toBe(before.nonce + 1);
      await (await token.getFunction("setPaused")(false)).wait();
      const afterUnpause = await walletState();
      // The owner's transactions used the wallet's nonces outside the service: a service started now counts
      // them (one that met those nonces would hold its transfer until the chain shows them final).
      const again = await startService({ ...chain.target, tokenAddress: await token.getAddress() });
      try {
        const ok = await postJson(again.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
        expect(ok.statusCode).toBe(200);
        expect(ok.body.result.nonce).toBe(afterUnpause.nonce);
      } finally {
        await again.close();
      }
      expect(await balanceOf(token, blocked)).toBe(0n);
    } finally {
      await service.close();
    }
  });

  it("a fee-on-transfer token: the status document reports what the recipient received, from the Transfer event", async () => {
    const { token, service } = await serviceFor("FeeOnTransferToken", parseUnits("1000000", 18));
    try {
      const recipient = freshAddress();
      const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "100" });
      expect(sent.statusCode).toBe(200);
      await waitForReceipt(chain, sent.body.result.hash, 5000);
      expect(await balanceOf(token, recipient)).toBe(parseUnits("99", 18));
      expect(await statusOf(service, sent.body.result.hash)).toMatchObject({
        state: "confirmed",
        transfer: { to: recipient, amount: parseUnits("99", 18).toString(), amountInTokens: "99", requestedAmount: parseUnits("100", 18).toString() },
      });
    } finally {
      await service.close();
    }
  });

  it("a token that returns false instead of reverting: 417 CALL_EXCEPTION, nothing sent", async () => {
    const { token, service } = await serviceFor("FalseReturningToken", parseUnits("1000", 18));
    try {
      expect(service.chain.tokenMayReturnFalse).toBe(true);
      const refused = freshAddress();
      await (await token.getFunction("setRefused")(refused, true)).wait();
      const before = await walletState();
      const reply = await postJson(service.app, "/transfer", { toAddress: refused, amount: "1" });
      expect(reply.statusCode).toBe(417);
      expect(reply.body).toMatchObject({ code: "CALL_EXCEPTION", message: expect.stringContaining("returned false") });
      expect(await walletState()).toEqual(before);
      const accepted = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
      expect(accepted.statusCode).toBe(200);
    } finally {
      await service.close();
    }
  });

  it("a mined transfer whose token returned false (the recipient was refused after the simulation) is reported failed", async () => {
    const owner = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, owner.address, "10");
    const { token, service } = await serviceFor("FalseReturningToken", parseUnits("1000", 18), owner);
    try {
      const recipient = freshAddress();
      await chain.provider.send("evm_setAutomine", [false]);
      const sent = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "1" });
      expect(sent.statusCode).toBe(200);
      // The token's owner refuses the recipient in the same block, ahead of the transfer (a higher tip).
      await token.getFunction("setRefused")(recipient, true, { maxPriorityFeePerGas: parseUnits("50", "gwei"), maxFeePerGas: parseUnits("100", "gwei") });
      await chain.provider.send("evm_mine", []);
      await chain.provider.send("evm_setAutomine", [true]);
      const receipt = await waitForReceipt(chain, sent.body.result.hash, 5000);
      expect(receipt?.status).toBe(1);
      expect(await balanceOf(token, recipient)).toBe(0n);
      expect(await statusOf(service, sent.body.result.hash)).toMatchObject({ state: "failed", transfer: { amount: "0", requestedAmount: parseUnits("1", 18).toString() } });
    } finally {
      await service.close();
    }
  });
});
