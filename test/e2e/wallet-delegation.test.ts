/**
 * A thief with the wallet's key delegates the wallet (EIP-7702) through another account's transaction: no
 * transaction of the wallet, no token log, yet a nonce of the wallet is used and the account has code. The
 * watch names the delegating transaction, and the code the wallet now has, as unexpected outflows within seconds, and with
 * PAUSE_ON_UNEXPECTED_OUTFLOW nothing more is signed.
 */
import { Wallet, parseEther } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTHORIZATION, type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, setEthBalance, startTestChain, waitForReceipt } from "../helpers/test-chain.js";
import { waitUntil } from "../helpers/wait-until.js";

describe("an EIP-7702 delegation of the wallet (anvil)", () => {
  let chain: TestChain;
  let service: TestService;
  const wallet = async () => (await service.app.inject({ method: "GET", url: "/wallet", headers: AUTHORIZATION })).json();

  beforeAll(async () => {
    chain = await startTestChain();
    service = await startService(chain.target, { OUTFLOW_CHECK_INTERVAL_MS: "1000", PAUSE_ON_UNEXPECTED_OUTFLOW: "true" });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("is named, with the transaction that carried it, within 15 s, and signing stops", async () => {
    const own = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(own.statusCode, own.raw).toBe(200);
    await waitForReceipt(chain, own.body.result.hash, 10_000);

    // The thief signs the authorization with the wallet's key; a funded account of its own carries it.
    const walletAddress = chain.demo.walletAddress;
    const delegate = freshAddress();
    const authorization = await chain.hotWallet.authorize({ address: delegate, nonce: await chain.provider.getTransactionCount(walletAddress, "latest"), chainId: 31337n });
    const carrier = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, carrier.address, "1");
    const carried = await carrier.sendTransaction({ type: 4, to: carrier.address, value: 0n, authorizationList: [authorization], gasLimit: 100_000n, maxFeePerGas: parseEther("0.00000005"), maxPriorityFeePerGas: 1n });
    await waitForReceipt(chain, carried.hash, 10_000);
    expect(await chain.provider.getCode(walletAddress)).toBe(`0xef0100${delegate.slice(2).toLowerCase()}`);
    const delegatedAt = Date.now();

    await waitUntil(async () => (await wallet()).signingPaused !== null, 15_000, "the pause");
    // Named twice: by the code the wallet now has, and by the transaction that carried the authorization.
    const reported = async () => (await service.app.inject({ method: "GET", url: "/wallet?snapshot=true", headers: AUTHORIZATION })).json().unexpectedOutflows as { wallet: string; hash: string; code: string | null }[];
    await waitUntil(async () => (await reported()).some((outflow) => outflow.hash === carried.hash), 15_000 - (Date.now() - delegatedAt), "the carrying transaction named");
    expect(Date.now() - delegatedAt).toBeLessThan(15_000);
    expect(await reported()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ wallet: walletAddress, hash: carried.hash }),
        expect.objectContaining({ wallet: walletAddress, code: `0xef0100${delegate.slice(2).toLowerCase()}` }),
      ]),
    );
    const refused = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect([refused.statusCode, refused.body.code]).toEqual([503, "SIGNING_PAUSED"]);
  });
});
