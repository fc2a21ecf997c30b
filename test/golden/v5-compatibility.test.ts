/**
 * Golden tests: ethers v5.7.2 itself and the service make the same transfer on the same anvil chain, and
 * their JSON documents must match byte for byte once the values that must differ are normalised.
 * Lookups of one and the same transaction through both must match without any normalisation.
 */
import { ethers as ethers5 } from "ethers5";
import { ContractFactory, Wallet, parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import demoToken from "../../contracts/artifacts/DemoToken.json" with { type: "json" };
import { type TestService, postJson, startService } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, mineBlocks, setEthBalance, startTestChain, startTestChainOn } from "../helpers/test-chain.js";

// Values that differ between two otherwise identical transactions: identity, nonce, signature, fees,
// and the position in the block.
const DIFFERING_VALUES: [RegExp, string][] = [
  [/"hash":"0x[0-9a-f]{64}"/g, '"hash":"<hash>"'],
  [/"nonce":\d+/g, '"nonce":"<nonce>"'],
  [/"v":\d+/g, '"v":"<v>"'],
  [/"r":"0x[0-9a-f]{64}"/g, '"r":"<r>"'],
  [/"s":"0x[0-9a-f]{64}"/g, '"s":"<s>"'],
  [/"(maxFeePerGas|maxPriorityFeePerGas|gasPrice)":\{"type":"BigNumber","hex":"0x[0-9a-f]+"\}/g, '"$1":"<fee>"'],
  [/"transactionIndex":\d+/g, '"transactionIndex":"<index>"'],
];

function normalise(json: string): string {
  return DIFFERING_VALUES.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), json);
}

// Both node implementations, and a chain without EIP-1559, where the service (like v5) sends legacy
// transactions: v5's transfer record for those has its own key order, `"type":null` and an EIP-155 v.
const CHAINS: [string, () => Promise<TestChain>][] = [
  ...NODE_KINDS.map((kind): [string, () => Promise<TestChain>] => [kind, () => startTestChainOn(kind)]),
  ["anvil --hardfork berlin (no EIP-1559)", () => startTestChain(["--hardfork", "berlin"])],
];

describe.each(CHAINS)("byte-for-byte compatibility with ethers v5.7.2 on %s", (_label, startChain) => {
  let chain: TestChain;
  let service: TestService;
  let provider5: InstanceType<typeof ethers5.providers.JsonRpcProvider>;

  // A fresh v5 provider per lookup: v5 reuses a cached head for up to 8 s and would under-count confirmations.
  const v5Lookup = async (hash: string) => JSON.stringify({ result: await new ethers5.providers.JsonRpcProvider(chain.rpcUrl).getTransaction(hash) });
  const serviceLookup = async (hash: string) => (await postJson(service.app, "/getTransaction", { Tx: hash })).raw;

  beforeAll(async () => {
    chain = await startChain();
    // Transactions stay pending until a test mines a block.
    await chain.provider.send("evm_setAutomine", [false]);
    service = await startService(chain.target);
    provider5 = new ethers5.providers.JsonRpcProvider(chain.rpcUrl);
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("transfer, lookup pending and lookup mined match v5", async () => {
    // The recipient already holds tokens, so both transfers cost exactly the same gas.
    const recipient = freshAddress();
    await chain.token.getFunction("transfer")(recipient, 1n);
    await mineBlocks(chain, 1);

    const contract5 = new ethers5.Contract(chain.demo.tokenAddress, demoToken.abi, new ethers5.Wallet(chain.demo.privateKey, provider5));
    const sent5 = await contract5.transfer(recipient, ethers5.utils.parseUnits("2.5", 18));
    const transfer5 = JSON.stringify({ result: sent5 });
    // v5 used the wallet's next nonce outside the service: the service starts now, counting it (a transfer
    // that met that nonce would be held until the chain shows what used it, final).
    await service.close();
    service = await startService(chain.target);
    const sentByService = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "2.5" });
    expect(sentByService.statusCode).toBe(200);
    expect(normalise(sentByService.raw)).toBe(normalise(transfer5));
    const serviceHash: string = sentByService.body.result.hash;

    const pending5 = await v5Lookup(sent5.hash);
    expect(pending5).toContain('"confirmations":0');
    expect(normalise(await serviceLookup(serviceHash))).toBe(normalise(pending5));
    expect(await serviceLookup(serviceHash)).toBe(await v5Lookup(serviceHash));

    await mineBlocks(chain, 3);
    const mined5 = await v5Lookup(sent5.hash);
    expect(mined5).toContain('"confirmations":3');
    expect(normalise(await serviceLookup(serviceHash))).toBe(normalise(mined5));
    expect(await serviceLookup(serviceHash)).toBe(await v5Lookup(serviceHash));
  });

  it("lookups of legacy transactions and contract creations match v5 exactly", async () => {
    const outsider = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, outsider.address, "10");
    const legacy = await outsider.sendTransaction({ type: 0, to: freshAddress(), value: 5n, gasPrice: parseUnits("3", "gwei"), gasLimit: 21000n });
    const factory = new ContractFactory(demoToken.abi, demoToken.bytecode, outsider);
    const deployed = await outsider.sendTransaction({ ...(await factory.getDeployTransaction("X", "X", 6, 1n)), nonce: 1 });
    const accessListTx = await outsider.sendTransaction({
      type: 1,
      nonce: 2,
      to: chain.demo.tokenAddress,
      gasPrice: parseUnits("3", "gwei"),
      gasLimit: 100_000n,
      accessList: [{ address: chain.demo.tokenAddress, storageKeys: [`0x${"00".repeat(31)}01`] }],
    });
    for (const hash of [legacy.hash, deployed.hash, accessListTx.hash]) {
      expect(await serviceLookup(hash)).toBe(await v5Lookup(hash));
    }
    await mineBlocks(chain, 2);
    for (const hash of [legacy.hash, deployed.hash, accessListTx.hash]) {
      expect(await serviceLookup(hash)).toBe(await v5Lookup(hash));
    }
  });

  it("an unknown hash is null in both", async () => {
    const hash = `0x${"cd".repeat(32)}`;
    expect(await serviceLookup(hash)).toBe(await v5Lookup(hash));
  });
});

