/** Reads, at one block, everything the hot path would otherwise ask the node for on every transfer. */
import { Interface, Transaction, toBigInt, toQuantity } from "ethers";
import { monotonicNow } from "../clock.js";
import type { ChainConnection } from "../node/connect-chain.js";
import { ERC20_INTERFACE, encodeTransfer } from "../node/erc20.js";
import { OP_GAS_PRICE_ORACLE } from "../node/op-stack.js";
import { FEE_HISTORY_BLOCKS, type FeePolicy, offeredFees, offeredLegacyFees, tipFromFeeHistory } from "./fee-policy.js";

/** The wallet as of one block, plus the fees to offer from then on. */
export interface WalletSnapshot {
  blockNumber: number;
  blockHash: string;
  tokenBalance: bigint;
  ethBalance: bigint;
  /** How many of the wallet's transactions are mined: nonces below this are used on chain. */
  minedNonceCount: number;
  /** The latest base fee (null on a chain without EIP-1559), and the tip recent blocks call for (before the caps). */
  baseFeePerGas: bigint | null;
  tip: bigint;
  /**
   * The fees to sign with: from the two above by the fee policy, within its caps. On a chain without a
   * base fee, transactions are legacy (type 0) and both carry the gas price.
   */
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /**
   * On OP Stack chains, the L1 data fee one transfer pays on top of gas x price (the GasPriceOracle's
   * getL1Fee for the largest transfer the service sends); 0 elsewhere.
   */
  l1DataFee: bigint;
  /** When it was read (monotonic ms). */
  readAt: number;
}

/** The latest block's number, hash and base fee (null on a chain without EIP-1559). */
export interface FeeBlock {
  number: number;
  hash: string;
  parentHash: string;
  baseFeePerGas: bigint | null;
}

/**
 * Whether `next` is on the chain `previous` was on, as far as the two reads tell: another block at the
 * same height, or a child of another parent, is not; blocks further apart (a lower one is a lagging
 * backend more often than not) cannot be compared without more reads: undefined.
 */
export function sameChain(previous: FeeBlock, next: FeeBlock): boolean | undefined {
  if (next.number === previous.number) return next.hash === previous.hash;
  if (next.number === previous.number + 1) return next.parentHash === previous.hash;
  return undefined;
}

const GAS_PRICE_ORACLE = new Interface(["function getL1Fee(bytes unsignedTransaction) view returns (uint256)"]);

/** Reads the latest block. */
export async function readFeeBlock({ provider }: Pick<ChainConnection, "provider">): Promise<FeeBlock> {
  const block = (await provider.send("eth_getBlockByNumber", ["latest", false])) as { number: string; hash: string; parentHash: string; baseFeePerGas?: string | null };
  return { number: Number(block.number), hash: block.hash, parentHash: block.parentHash, baseFeePerGas: block.baseFeePerGas == null ? null : toBigInt(block.baseFeePerGas) };
}

/**
 * The balances and nonce count at exactly `block` (so they agree with each other), the tip recent blocks
 * call for (eth_feeHistory) and the fees the policy offers from it, and on OP Stack chains the L1 data
 * fee of a transfer.
 */
export async function readWalletSnapshot(chain: ChainConnection, policy: FeePolicy, block?: FeeBlock): Promise<WalletSnapshot> {
  const { provider, wallet, tokenAddress } = chain;
  const { number, hash, baseFeePerGas } = block ?? (await readFeeBlock(chain));
  const at = toQuantity(BigInt(number));
  const [tokenBalance, ethBalance, minedNonceCount, history, l1DataFee] = await Promise.all([
    provider.send("eth_call", [{ to: tokenAddress, data: ERC20_INTERFACE.encodeFunctionData("balanceOf", [wallet.address]) }, at]),
    provider.send("eth_getBalance", [wallet.address, at]),
    provider.send("eth_getTransactionCount", [wallet.address, at]),
    // A chain without a base fee prices by eth_gasPrice; with one, tips come from the fee history.
    baseFeePerGas === null ? provider.send("eth_gasPrice", []) : (provider.send("eth_feeHistory", [toQuantity(FEE_HISTORY_BLOCKS), at, [policy.tipPercentile]]) as Promise<{ reward?: string[][] }>),
    chain.opStack ? readL1DataFee(chain, at) : Promise.resolve(0n),
  ]);
  const tip = baseFeePerGas === null ? toBigInt(history as string) : tipFromFeeHistory((history as { reward?: string[][] }).reward ?? [], policy);
  return {
    blockNumber: number,
    blockHash: hash,
    tokenBalance: toBigInt(tokenBalance),
    ethBalance: toBigInt(ethBalance),
    minedNonceCount: Number(minedNonceCount),
    baseFeePerGas,
    tip,
    ...(baseFeePerGas === null ? offeredLegacyFees(tip, policy) : offeredFees(baseFeePerGas, tip, policy)),
    l1DataFee,
    readAt: monotonicNow(),
  };
}

/** Gas one token transfer may take, for "can the wallet pay one more transfer": generous for any ERC-20. */
const TRANSFER_GAS_ALLOWANCE = 100_000n;

/** What one more transfer may cost in ETH at the snapshot's fees: the gas allowance at the fee cap, plus any L1 data fee. */
export function transferGasCost({ maxFeePerGas, l1DataFee }: WalletSnapshot): bigint {
  return TRANSFER_GAS_ALLOWANCE * maxFeePerGas + l1DataFee;
}

// The L1 fee grows with the transaction's bytes; every field of this sample is as large as the service's
// transfers can make it, so the fee it gets is an upper bound for each of them.
async function readL1DataFee({ provider, chainId, tokenAddress }: ChainConnection, at: string): Promise<bigint> {
  const largest = Transaction.from({
    type: 2,
    chainId,
    nonce: 2 ** 32,
    to: tokenAddress,
    data: encodeTransfer(`0x${"ff".repeat(20)}`, (1n << 256n) - 1n),
    gasLimit: 2n ** 32n,
    maxFeePerGas: 2n ** 64n - 1n,
    maxPriorityFeePerGas: 2n ** 64n - 1n,
    accessList: [],
  });
  const fee = await provider.send("eth_call", [{ to: OP_GAS_PRICE_ORACLE, data: GAS_PRICE_ORACLE.encodeFunctionData("getL1Fee", [largest.unsignedSerialized]) }, at]);
  return toBigInt(GAS_PRICE_ORACLE.decodeFunctionResult("getL1Fee", fee)[0]);
}
