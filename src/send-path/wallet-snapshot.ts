/** Reads, at one block, everything the hot path would otherwise ask the node for on every transfer. */
import { Interface, Transaction, toBigInt, toQuantity } from "ethers";
import { monotonicNow } from "../clock.js";
import type { ChainConnection, NetworkToken } from "../node/connect-chain.js";
import { ERC20_INTERFACE, encodeTransfer } from "../node/erc20.js";
import type { RpcCall } from "../node/json-rpc-batch.js";
import { OP_GAS_PRICE_ORACLE } from "../node/op-stack.js";
import { FEE_HISTORY_BLOCKS, type FeePolicy, offeredFees, offeredLegacyFees, tipFromFeeHistory } from "./fee-policy.js";

/** The wallet as of one block, plus the fees to offer from then on. */
export interface WalletSnapshot {
  blockNumber: number;
  blockHash: string;
  /** The balance of the network's first ERC-20 token (ChainConnection.tokenAddress). */
  tokenBalance: bigint;
  /** The balances of the network's other ERC-20 tokens, by lowercase address (none when it has one). */
  otherTokenBalances?: ReadonlyMap<string, bigint>;
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

/** What the node answered for one wallet at one block; see snapshotFrom. */
export interface WalletAnswers {
  tokenBalance: unknown;
  /** The answers for the network's other ERC-20 tokens, by lowercase address. */
  otherTokenBalances?: ReadonlyMap<string, unknown>;
  ethBalance: unknown;
  minedNonceCount: unknown;
}

/** What the node answered for the block's fees, which every wallet at that block shares. */
export interface FeeAnswers {
  /** eth_gasPrice on a chain without a base fee, eth_feeHistory with one. */
  fees: unknown;
  /** The GasPriceOracle's answer on OP Stack chains; undefined elsewhere. */
  l1DataFee: unknown;
}

/**
 * The reads of one wallet at `at` (a block number as a quantity): its first token's and ETH balances, its
 * mined nonce count, then the balance of each of otherErc20Tokens(chain).
 */
export function walletReads(chain: Pick<ChainConnection, "tokenAddress" | "tokens">, wallet: string, at: string): RpcCall[] {
  return [
    balanceOfRead(chain.tokenAddress, wallet, at),
    { method: "eth_getBalance", params: [wallet, at] },
    minedNonceCountRead(wallet, at),
    ...otherErc20Tokens(chain).map((token) => balanceOfRead(token, wallet, at)),
  ];
}

/** The wallet's balance of `token` in `snapshot`: its ETH balance for the native coin. */
export function tokenBalanceOf(snapshot: WalletSnapshot, chain: Pick<ChainConnection, "tokenAddress">, token: Pick<NetworkToken, "address" | "native">): bigint {
  if (token.native) return snapshot.ethBalance;
  const address = token.address.toLowerCase();
  return address === chain.tokenAddress.toLowerCase() ? snapshot.tokenBalance : (snapshot.otherTokenBalances?.get(address) ?? 0n);
}

/** The lowercase addresses of the network's ERC-20 tokens beside its first (whose balance is tokenBalance). */
export function otherErc20Tokens({ tokenAddress, tokens }: Pick<ChainConnection, "tokenAddress" | "tokens">): string[] {
  const first = tokenAddress.toLowerCase();
  // A connection made without its token list (tests' fakes) has only the first.
  return (tokens ?? []).filter((token) => !token.native && token.address.toLowerCase() !== first).map((token) => token.address.toLowerCase());
}

function balanceOfRead(token: string, wallet: string, at: string): RpcCall {
  return { method: "eth_call", params: [{ to: token, data: ERC20_INTERFACE.encodeFunctionData("balanceOf", [wallet]) }, at] };
}

/** The read of a wallet's mined nonce count at `at`. */
export function minedNonceCountRead(wallet: string, at: string): RpcCall {
  return { method: "eth_getTransactionCount", params: [wallet, at] };
}

/**
 * The reads of the block's fees at `at`: the tip recent blocks call for (eth_feeHistory; a chain without a
 * base fee prices by eth_gasPrice), and on OP Stack chains the L1 data fee of a transfer.
 */
export function feeReads(chain: Pick<ChainConnection, "opStack" | "chainId" | "tokenAddress">, policy: FeePolicy, block: FeeBlock, at: string): RpcCall[] {
  const fees = block.baseFeePerGas === null ? { method: "eth_gasPrice", params: [] } : { method: "eth_feeHistory", params: [toQuantity(FEE_HISTORY_BLOCKS), at, [policy.tipPercentile]] };
  return chain.opStack ? [fees, l1DataFeeRead(chain, at)] : [fees];
}

/** The snapshot the answers of walletReads and feeReads at `block` make, with the fees the policy offers from them. */
export function snapshotFrom(block: FeeBlock, policy: FeePolicy, wallet: WalletAnswers, fees: FeeAnswers): WalletSnapshot {
  const { baseFeePerGas } = block;
  const tip = baseFeePerGas === null ? toBigInt(fees.fees as string) : tipFromFeeHistory((fees.fees as { reward?: string[][] }).reward ?? [], policy);
  return {
    blockNumber: block.number,
    blockHash: block.hash,
    tokenBalance: toBigInt(wallet.tokenBalance as string),
    ...(wallet.otherTokenBalances && { otherTokenBalances: new Map([...wallet.otherTokenBalances].map(([token, balance]) => [token, toBigInt(balance as string)])) }),
    ethBalance: toBigInt(wallet.ethBalance as string),
    minedNonceCount: Number(wallet.minedNonceCount),
    baseFeePerGas,
    tip,
    ...(baseFeePerGas === null ? offeredLegacyFees(tip, policy) : offeredFees(baseFeePerGas, tip, policy)),
    l1DataFee: fees.l1DataFee === undefined ? 0n : toBigInt(GAS_PRICE_ORACLE.decodeFunctionResult("getL1Fee", fees.l1DataFee as string)[0]),
    readAt: monotonicNow(),
  };
}

/**
 * The balances and nonce count at exactly `block` (so they agree with each other), the tip recent blocks
 * call for and the fees the policy offers from it, and on OP Stack chains the L1 data fee of a transfer:
 * call by call (see PoolWalletReads for every lane's in one request).
 */
export async function readWalletSnapshot(chain: ChainConnection, policy: FeePolicy, block?: FeeBlock): Promise<WalletSnapshot> {
  const { provider, wallet } = chain;
  const read = block ?? (await readFeeBlock(chain));
  const at = toQuantity(BigInt(read.number));
  const calls = [...walletReads(chain, wallet.address, at), ...feeReads(chain, policy, read, at)];
  const others = otherErc20Tokens(chain);
  // The count before and after the balances, the lower kept: a node may answer a read at its newest block
  // from the state of the moment (anvil does, while it mines the next block: a third of such reads in a
  // burst), and the ledger forgets the transfers below the count as paid out of the balances. A count newer
  // than the balances would let more in flight than the balance covers (seen: 11 and 14 answered 200 of 15
  // one-token transfers from a wallet holding 10); one older than the balances only holds a transfer back
  // until the next snapshot.
  const countAt = calls.findIndex((call) => call.method === "eth_getTransactionCount");
  const [count] = calls.splice(countAt, 1);
  const before = await provider.send(count.method, count.params);
  const answers = await Promise.all(calls.map((call) => provider.send(call.method, call.params)));
  answers.splice(countAt, 0, lowerCount(before, await provider.send(count.method, count.params)));
  const [tokenBalance, ethBalance, minedNonceCount] = answers;
  const otherTokenBalances = others.length === 0 ? undefined : new Map(others.map((token, index) => [token, answers[3 + index]]));
  const [fees, l1DataFee] = answers.slice(3 + others.length);
  return snapshotFrom(read, policy, { tokenBalance, otherTokenBalances, ethBalance, minedNonceCount }, { fees, l1DataFee });
}

/** Gas one token transfer may take, for "can the wallet pay one more transfer": generous for any ERC-20. */
const TRANSFER_GAS_ALLOWANCE = 100_000n;

/** What one more transfer may cost in ETH at the snapshot's fees: the gas allowance at the fee cap, plus any L1 data fee. */
export function transferGasCost({ maxFeePerGas, l1DataFee }: WalletSnapshot): bigint {
  return TRANSFER_GAS_ALLOWANCE * maxFeePerGas + l1DataFee;
}

// The L1 fee grows with the transaction's bytes; every field of this sample is as large as the service's
// transfers can make it, so the fee it gets is an upper bound for each of them.
function l1DataFeeRead({ chainId, tokenAddress }: Pick<ChainConnection, "chainId" | "tokenAddress">, at: string): RpcCall {
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
  return { method: "eth_call", params: [{ to: OP_GAS_PRICE_ORACLE, data: GAS_PRICE_ORACLE.encodeFunctionData("getL1Fee", [largest.unsignedSerialized]) }, at] };
}

/** The lower of two counts read (quantities); a count that is no quantity is kept as it was read, for the snapshot to refuse. */
export function lowerCount(first: unknown, second: unknown): unknown {
  if (typeof first !== "string" || typeof second !== "string") return first;
  return BigInt(second) < BigInt(first) ? second : first;
}
