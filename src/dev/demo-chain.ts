/** Sets up a demo on an anvil node: a fresh funded wallet holding a freshly deployed OpenZeppelin ERC-20. */
import { Contract, ContractFactory, type ContractTransactionResponse, JsonRpcProvider, type Signer, Wallet, parseUnits, toBeHex } from "ethers";
import demoToken from "../../contracts/artifacts/DemoToken.json" with { type: "json" };
import payoutBatch from "../../contracts/artifacts/PayoutBatch.json" with { type: "json" };

/** The recipient DemoToken refuses (contracts/DemoToken.sol's REFUSED_RECIPIENT): a demo payout item that fails. */
export const DEMO_REFUSED_RECIPIENT = "0x000000000000000000000000000000000000bEEF";

/** A wallet and the token it holds. */
export interface DemoChain {
  /** The key of the wallet created for the demo (with `holders`, the deployer's, which then holds nothing). */
  privateKey: string;
  walletAddress: string;
  tokenAddress: string;
  /** The payout contract (contracts/PayoutBatch.sol) deployed for the demo's payouts, when asked for. */
  payoutContract?: string;
}

export interface DemoTokenOptions {
  decimals?: number;
  /** Whole tokens minted to the wallet. */
  supply?: bigint;
  /** Wei given to the wallet for gas. */
  ethBalance?: bigint;
  /**
   * Wallets that get the supply (in equal shares) and the ETH instead of the created one: the signers the
   * developer configured (a keystore, a pool of keys), funded on the dev chain.
   */
  holders?: readonly string[];
  /** Also places the payout contract on the chain (see placePayoutContract). */
  payoutContract?: boolean;
}

/**
 * The namespace of a development node's own methods: anvil_* on anvil, hardhat_* on Hardhat Network
 * (the tests' second node implementation).
 */
export async function devMethodPrefix(provider: JsonRpcProvider): Promise<"anvil" | "hardhat"> {
  const client = String(await provider.send("web3_clientVersion", []));
  return /hardhat/i.test(client) ? "hardhat" : "anvil";
}

/** The development methods the demo needs, as each node implementation names them. */
interface DevMethods {
  setBalance: string;
  setCode: string;
  /** Undefined where every transaction is mined without being asked (ganache: at once, or on its timer). */
  getAutomine?: string;
}

/** The demo's development methods on the node behind `provider`: anvil's, Hardhat Network's or ganache's (the tests' third). */
async function devMethodsOf(provider: JsonRpcProvider): Promise<DevMethods> {
  const client = String(await provider.send("web3_clientVersion", []));
  if (/ganache/i.test(client)) return { setBalance: "evm_setAccountBalance", setCode: "evm_setAccountCode" };
  const prefix = /hardhat/i.test(client) ? "hardhat" : "anvil";
  return { setBalance: `${prefix}_setBalance`, setCode: `${prefix}_setCode`, getAutomine: `${prefix}_getAutomine` };
}

/**
 * Creates a random wallet, gives it ETH with `anvil_setBalance` (`hardhat_setBalance`), and deploys
 * DemoToken from it, so the whole supply is the wallet's; with `holders`, the supply is shared among them
 * and they get the ETH. Works only against a development node; no private key is hard-coded anywhere.
 */
export async function setUpDemoChain(rpcUrl: string, options: DemoTokenOptions = {}): Promise<DemoChain> {
  const { decimals = 18, supply = 1_000_000n, ethBalance = parseUnits("1000", "ether"), holders = [] } = options;
  // No cache: the transfers to the holders each read the deployer's nonce anew.
  const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  try {
    const methods = await devMethodsOf(provider);
    const wallet = new Wallet(Wallet.createRandom().privateKey, provider);
    await provider.send(methods.setBalance, [wallet.address, toBeHex(ethBalance)]);
    const tokenAddress = await deployDemoToken(wallet, decimals, supply);
    const payoutContract = options.payoutContract ? await placePayoutContract(provider, methods) : undefined;
    const token = new Contract(tokenAddress, demoToken.abi, wallet);
    for (const holder of holders) {
      await provider.send(methods.setBalance, [holder, toBeHex(ethBalance)]);
      const sent = (await token.getFunction("transfer")(holder, (supply * 10n ** BigInt(decimals)) / BigInt(holders.length))) as ContractTransactionResponse;
      await mineIfNeeded(provider);
      await untilMined(provider, sent.hash);
    }
    return { privateKey: wallet.privateKey, walletAddress: holders[0] ?? wallet.address, tokenAddress, payoutContract };
  } finally {
    provider.destroy();
  }
}

/** Deploys a DemoToken whose whole supply goes to the deployer; resolves with its address once mined. */
export async function deployDemoToken(deployer: Signer, decimals: number, supply: bigint): Promise<string> {
  const factory = new ContractFactory(demoToken.abi, demoToken.bytecode, deployer);
  const contract = await factory.deploy("Demo Token", "DEMO", decimals, supply * 10n ** BigInt(decimals));
  await mineIfNeeded(deployer.provider as JsonRpcProvider);
  await untilMined(deployer.provider as JsonRpcProvider, contract.deploymentTransaction()?.hash as string);
  return contract.getAddress();
}

/**
 * Puts the payout contract's code at a fresh address (`anvil_setCode`): it has no constructor state, so this
 * is the contract a deployment makes, without a block of its own (the chain's heights and fees stay those
 * the documentation's examples show) and without touching any wallet's nonces.
 */
async function placePayoutContract(provider: JsonRpcProvider, methods: DevMethods): Promise<string> {
  const address = Wallet.createRandom().address;
  const code = String(await provider.send("eth_call", [{ data: payoutBatch.bytecode }, "latest"]));
  await provider.send(methods.setCode, [address, code]);
  return address;
}

/**
 * Deploys the payout contract; resolves with its address once mined. Who deploys it does not matter: it
 * has no owner, and moves only its caller's tokens.
 */
export async function deployPayoutContract(deployer: Signer): Promise<string> {
  const contract = await new ContractFactory(payoutBatch.abi, payoutBatch.bytecode, deployer).deploy();
  await mineIfNeeded(deployer.provider as JsonRpcProvider);
  await untilMined(deployer.provider as JsonRpcProvider, contract.deploymentTransaction()?.hash as string);
  return contract.getAddress();
}

// Asked for its receipt rather than waited on with ethers' block polling, which could still be asking when
// the provider is destroyed (on a node that mines on a timer, ganache's): an error nobody catches.
async function untilMined(provider: JsonRpcProvider, hash: string): Promise<void> {
  while (!(await provider.getTransactionReceipt(hash))) await new Promise((resolve) => setTimeout(resolve, 50));
}

// A node started with --no-mining would otherwise never include the deployment.
async function mineIfNeeded(provider: JsonRpcProvider): Promise<void> {
  const { getAutomine } = await devMethodsOf(provider);
  if (getAutomine && !(await provider.send(getAutomine, []))) await provider.send("evm_mine", []);
}
