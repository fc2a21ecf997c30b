/** A real anvil node with a freshly deployed DemoToken, for tests that touch the chain. */
import { Contract, JsonRpcProvider, type TransactionReceipt, Wallet, parseUnits, toBeHex } from "ethers";
import demoToken from "../../contracts/artifacts/DemoToken.json" with { type: "json" };
import { type AnvilNode, startAnvil } from "../../src/dev/anvil.js";
import { type DemoChain, type DemoTokenOptions, devMethodPrefix, setUpDemoChain } from "../../src/dev/demo-chain.js";
import { startGanacheNode } from "./ganache-node.js";
import { startHardhatNode } from "./hardhat-node.js";

/**
 * The node implementations the money path is tested on: anvil and Hardhat Network everywhere, ganache (a
 * third pool and wording) in the tests of bursts and crashes.
 */
export type NodeKind = "anvil" | "hardhat" | "ganache";
export const NODE_KINDS: NodeKind[] = ["anvil", "hardhat"];
export const ALL_NODE_KINDS: NodeKind[] = [...NODE_KINDS, "ganache"];

export interface TestChain {
  kind: NodeKind;
  node: AnvilNode;
  rpcUrl: string;
  demo: DemoChain;
  decimals: number;
  /** What the service needs to use this chain's hot wallet and token. */
  target: { rpcUrl: string; privateKey: string; tokenAddress: string };
  /** A direct provider for assertions and outside actions; not the service's. */
  provider: JsonRpcProvider;
  /** The token, connected to the hot wallet (its owner), for balance checks and freezing. */
  token: Contract;
  /** The hot wallet, connected to the direct provider, for transactions "from outside" the service. */
  hotWallet: Wallet;
  stop(): Promise<void>;
}

/** Starts anvil (extra args pass through, e.g. ["--no-mining"]) and deploys a token held by a fresh wallet. */
export async function startTestChain(anvilArgs: string[] = [], tokenOptions: DemoTokenOptions = {}): Promise<TestChain> {
  return setUpTestChain("anvil", await startAnvil(anvilArgs), tokenOptions);
}

/** Starts a node of the given implementation (automining) and deploys a token held by a fresh wallet. */
export async function startTestChainOn(kind: NodeKind, tokenOptions: DemoTokenOptions = {}): Promise<TestChain> {
  return setUpTestChain(kind, await startNode(kind), tokenOptions);
}

function startNode(kind: NodeKind): Promise<AnvilNode> {
  if (kind === "anvil") return startAnvil();
  return kind === "hardhat" ? startHardhatNode() : startGanacheNode();
}

/** Deploys a token held by a fresh wallet on a node already started. */
export async function setUpTestChain(kind: NodeKind, node: AnvilNode, tokenOptions: DemoTokenOptions = {}): Promise<TestChain> {
  const demo = await setUpDemoChain(node.rpcUrl, tokenOptions);
  const provider = new JsonRpcProvider(node.rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  const hotWallet = new Wallet(demo.privateKey, provider);
  const token = new Contract(demo.tokenAddress, demoToken.abi, hotWallet);
  return {
    kind,
    node,
    rpcUrl: node.rpcUrl,
    demo,
    decimals: tokenOptions.decimals ?? 18,
    target: { rpcUrl: node.rpcUrl, privateKey: demo.privateKey, tokenAddress: demo.tokenAddress },
    provider,
    token,
    hotWallet,
    async stop() {
      provider.destroy();
      await node.stop();
    },
  };
}

/** The token balance of an address, in base units. */
export async function tokenBalanceOf(chain: TestChain, address: string): Promise<bigint> {
  return (await chain.token.getFunction("balanceOf")(address)) as bigint;
}

/** A fresh address with no history, so every test's recipient starts at zero. */
export function freshAddress(): string {
  return Wallet.createRandom().address;
}

/** Gives an address ETH directly on anvil. */
export async function setEthBalance(chain: TestChain, address: string, ether: string): Promise<void> {
  await chain.provider.send(`${await devMethodPrefix(chain.provider)}_setBalance`, [address, toBeHex(parseUnits(ether, "ether"))]);
}

/** A wallet of a pool: its key, and its address (a lane). */
export interface PoolWallet {
  privateKey: string;
  address: string;
}

/**
 * Makes `count` more wallets for a pool: each gets `ether` ETH and `tokens` whole tokens from the hot
 * wallet. The hot wallet itself is the pool's first lane.
 */
export async function addPoolWallets(chain: TestChain, count: number, funding: { tokens: bigint; ether: string }): Promise<PoolWallet[]> {
  const wallets: PoolWallet[] = [];
  for (let index = 0; index < count; index++) {
    const { privateKey, address } = Wallet.createRandom();
    await setEthBalance(chain, address, funding.ether);
    const sent = await chain.token.getFunction("transfer")(address, funding.tokens * 10n ** BigInt(chain.decimals));
    await waitForReceipt(chain, sent.hash, 10_000);
    wallets.push({ privateKey, address });
  }
  return wallets;
}

/** The head bound the test services use (HEAD_MAX_AGE_MS): a head they report is at most this old. */
export const TEST_HEAD_MAX_AGE_MS = 100;

/**
 * Mines `count` blocks, then waits out the services' head bound, so that what they report next is
 * counted from a head that includes the new blocks.
 */
export async function mineBlocks(chain: TestChain, count = 1): Promise<void> {
  await chain.provider.send(`${await devMethodPrefix(chain.provider)}_mine`, [toBeHex(count)]);
  await new Promise((resolve) => setTimeout(resolve, TEST_HEAD_MAX_AGE_MS + 20));
}

/**
 * The receipt of `hash` once it is mined, asked for every 100 ms. Needed even on an automining anvil:
 * it answers eth_sendRawTransaction once the transaction is in its pool and mines it a moment later.
 * Not ethers' waitForTransaction: that waits for a *new* block after its first look, so a transaction
 * mined just as it starts (a re-send of the service's) is missed for good on a node that mines nothing
 * else, as an automining one.
 */
export async function waitForReceipt(chain: Pick<TestChain, "provider">, hash: string, timeoutMs: number): Promise<TransactionReceipt> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const receipt = await chain.provider.getTransactionReceipt(hash);
    if (receipt) return receipt;
    if (Date.now() > deadline) throw new Error(`transaction ${hash} not mined within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits until the chain has mined `count` of the wallet's transactions: what a test of concurrent transfers
 * waits for, since anvil in automine mode can hold one of them unmined (foundry-rs/foundry#10122) and the
 * service then replaces it, under another hash, after REBROADCAST_AFTER_MS.
 */
export async function waitForMinedCount(chain: TestChain, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mined = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
    if (mined >= count) return;
    if (Date.now() > deadline) {
      const pending = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
      // What the node's pool holds tells a lost transaction from one held unmined (anvil: txpool_*).
      const pool = await chain.provider.send("txpool_status", []).catch((poolError: Error) => poolError.message);
      throw new Error(`transactions not mined within ${timeoutMs} ms: want nonce count ${count}, mined ${mined}, pending ${pending}, pool ${JSON.stringify(pool)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
