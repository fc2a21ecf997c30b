/** Deploys the test tokens of contracts/ (compiled by `npm run compile:contracts`) from a chain's hot wallet. */
import { Contract, ContractFactory, type Signer } from "ethers";
import falseReturningToken from "../../contracts/artifacts/FalseReturningToken.json" with { type: "json" };
import feeOnTransferToken from "../../contracts/artifacts/FeeOnTransferToken.json" with { type: "json" };
import restrictedToken from "../../contracts/artifacts/RestrictedToken.json" with { type: "json" };
import usdtStyleToken from "../../contracts/artifacts/UsdtStyleToken.json" with { type: "json" };
import type { TestChain } from "./test-chain.js";

const ARTIFACTS = { UsdtStyleToken: usdtStyleToken, RestrictedToken: restrictedToken, FeeOnTransferToken: feeOnTransferToken, FalseReturningToken: falseReturningToken };

export type TestTokenName = keyof typeof ARTIFACTS;

/**
 * Deploys `name` with the whole `supply` (base units) held by the hot wallet; resolves once mined. With
 * `owner`, that account deploys it (and so owns it) and hands the supply to the hot wallet.
 */
export async function deployTestToken(chain: TestChain, name: TestTokenName, supply: bigint, owner: Signer = chain.hotWallet): Promise<Contract> {
  const { abi, bytecode } = ARTIFACTS[name];
  const deployed = await new ContractFactory(abi, bytecode, owner).deploy(supply);
  await deployed.waitForDeployment();
  const token = new Contract(await deployed.getAddress(), abi, owner);
  if (owner !== chain.hotWallet) await (await token.getFunction("transfer")(chain.demo.walletAddress, supply)).wait();
  return token;
}
