/** Reads, at one block, everything the hot path would otherwise ask the node for on every transfer. */
import { toBigInt, toQuantity } from "ethers";
import type { ChainConnection } from "./connect-chain.js";
import { ERC20_INTERFACE } from "./erc20.js";

/** The wallet as of one block, plus the fees to offer from then on. */
export interface WalletSnapshot {
  blockNumber: number;
  blockHash: string;
  tokenBalance: bigint;
  ethBalance: bigint;
  /** How many of the wallet's transactions are mined: nonces below this are used on chain. */
  minedNonceCount: number;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * One head read, then the balances and nonce count at exactly that block (so they agree with each other)
 * and the node's suggested tip. Fees as wallets compute them: tip plus twice the base fee, which stays
 * valid through several blocks of rising base fee.
 */
export async function readWalletSnapshot({ provider, wallet, tokenAddress }: ChainConnection): Promise<WalletSnapshot> {
  const block = (await provider.send("eth_getBlockByNumber", ["latest", false])) as { number: string; hash: string; baseFeePerGas?: string };
  if (block.baseFeePerGas === undefined) {
    throw new Error("the node's chain has no EIP-1559 base fee; only type-2 transactions are supported");
  }
  const at = toQuantity(BigInt(block.number));
  const [tokenBalance, ethBalance, minedNonceCount, tip] = await Promise.all([
    provider.send("eth_call", [{ to: tokenAddress, data: ERC20_INTERFACE.encodeFunctionData("balanceOf", [wallet.address]) }, at]),
    provider.send("eth_getBalance", [wallet.address, at]),
    provider.send("eth_getTransactionCount", [wallet.address, at]),
    provider.send("eth_maxPriorityFeePerGas", []),
  ]);
  const baseFee = toBigInt(block.baseFeePerGas);
  return {
    blockNumber: Number(block.number),
    blockHash: block.hash,
    tokenBalance: toBigInt(tokenBalance),
    ethBalance: toBigInt(ethBalance),
    minedNonceCount: Number(minedNonceCount),
    maxFeePerGas: 2n * baseFee + toBigInt(tip),
    maxPriorityFeePerGas: toBigInt(tip),
  };
}
