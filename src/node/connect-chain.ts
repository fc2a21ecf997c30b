/** Connects to the node, checks it serves the expected chain and token, and holds what every transfer needs. */
import type { Logger } from "pino";
import { type JsonRpcProvider, MaxUint256, dataSlice, decodeBytes32String, getAddress, toBigInt } from "ethers";
import { openWalletSigner } from "../signers/create-signer.js";
import { SignerStartupError, type WalletSigner } from "../signers/wallet-signer.js";
import { ERC20_INTERFACE, encodeTransfer } from "./erc20.js";
import { readNodeAnswer } from "./node-answers.js";
import { useNativeKeccak } from "./native-keccak.js";
import { type ChainConfig, type ChainSettingNames } from "../config.js";
import { rpcEndpointUrls } from "./settings.js";
import type { EndpointSet } from "./endpoint-set.js";
import type { EndpointState } from "./endpoint-health.js";
import { type BatchOptions, type RpcObserver, askEndpoint, createEndpoints, createRpcProvider, endpointSetOf } from "./rpc-provider.js";
import { OP_GAS_PRICE_ORACLE } from "./op-stack.js";
import { payoutRuntimeCode } from "./payout-batch.js";
import { NATIVE_TOKEN, type ServedNetwork, type ServedToken, servedNetworkOf, tokenAt } from "../network-settings/network-choice.js";

/** The node, the hot wallet and the token, read once at startup. */
export interface ChainConnection {
  provider: JsonRpcProvider;
  /** The RPC endpoints behind the provider, with their health (RPC_URL, one or several). */
  endpoints: EndpointSet;
  /** The hot wallet: its address comes from the signer's key. */
  wallet: { readonly address: string };
  /** Signs with the wallet's key, wherever it lives (see signers/). */
  signer: WalletSigner;
  /** The signer of every lane of a wallet pool, `signer` first; one entry for one wallet. */
  laneSigners: readonly WalletSigner[];
  /** Which keccak-256 ethers uses in this process. */
  keccak: "native" | "ethers";
  chainId: bigint;
  /** The network's first ERC-20 token (of `tokens`): its balance is read with every snapshot, first. */
  tokenAddress: string;
  tokenDecimals: number;
  /** Every token the network pays in, the one a request that names none gets first (see ChainConfig.tokens). */
  tokens: readonly NetworkToken[];
  /** How requests, answers and events name the network and the token (NETWORKS_FILE's names, or the chain id and address). */
  network: ServedNetwork;
  /** An OP Stack chain (the GasPriceOracle predeploy has code): transactions also pay an L1 data fee. */
  opStack: boolean;
  /** Arbitrum: a transaction's gas includes its L1 costs, so the gas a call needs moves with L1 prices. */
  gasIncludesL1: boolean;
  /**
   * The token answered a transfer it cannot make with false rather than a revert (as early ERC-20s do),
   * so every transfer's simulated return value must be checked too (see probeTokenFailure).
   */
  tokenMayReturnFalse: boolean;
  /** The payout contract POST /payouts pays through (PAYOUT_CONTRACT), checked at startup; null without payouts. */
  payoutContract: string | null;
}

/** A token the network pays in, as its node described it at startup. */
export interface NetworkToken extends ServedToken {
  /** The native coin (plain value transfers, 18 decimals), not a contract. */
  native: boolean;
  decimals: number;
  /** See ChainConnection.tokenMayReturnFalse; false for the native coin. */
  mayReturnFalse: boolean;
  /**
   * For people only (the console): the contract's own symbol() where no NETWORKS_FILE names the token (its
   * `symbol` is then its address); absent when it names it, or the contract answers none readable.
   */
  displaySymbol?: string;
}

/** The tokens of a connection; one made without its list (a test's) has its first token alone. */
export function tokensOf(chain: Pick<ChainConnection, "tokens" | "tokenAddress" | "tokenDecimals" | "tokenMayReturnFalse" | "network">): readonly NetworkToken[] {
  if (chain.tokens) return chain.tokens;
  return [{ symbol: chain.network?.token.symbol ?? chain.tokenAddress, address: chain.tokenAddress, native: false, decimals: chain.tokenDecimals, mayReturnFalse: chain.tokenMayReturnFalse }];
}

/** The connection's token at `address` (a contract's, or "native"); without an address, its first token. */
export function tokenOfChain(chain: Parameters<typeof tokensOf>[0], address: string = chain.tokenAddress): NetworkToken | undefined {
  return tokenAt(tokensOf(chain), address);
}

/** Raised when the node, chain or token is not what the configuration says; the process must not start. */
export class ChainStartupError extends Error {
  override name = "ChainStartupError";
}

/** Raised when no endpoint of a network answered at all: nothing is known to be wrong with its settings. */
export class NodeUnreachableError extends ChainStartupError {
  override name = "NodeUnreachableError";
}

/**
 * How the token answers a transfer it cannot make, tried once with a simulated transfer of more than the
 * wallet holds: a revert (OpenZeppelin, USDC, USDT and most tokens) or false (early tokens such as ZRX and
 * BAT). Only a token of the second kind needs every transfer's return value checked, which costs a node
 * call per transfer. Anything unexpected counts as "may return false", the safe side.
 */
export async function probeTokenFailure(provider: JsonRpcProvider, tokenAddress: string, walletAddress: string): Promise<boolean> {
  const balance = toBigInt(await provider.send("eth_call", [{ to: tokenAddress, data: ERC20_INTERFACE.encodeFunctionData("balanceOf", [walletAddress]) }, "latest"]));
  if (balance === MaxUint256) return true;
  try {
    await provider.send("eth_call", [{ from: walletAddress, to: tokenAddress, data: encodeTransfer(PROBE_RECIPIENT, balance + 1n) }, "latest"]);
    return true;
  } catch (error) {
    return readNodeAnswer(error).meaning !== "reverted";
  }
}

function settingNamesOf(config: ChainConfig): ChainSettingNames {
  return config.settingNames ?? { rpcUrl: "RPC_URL", chainId: "CHAIN_ID", tokenAddress: "TOKEN_ADDRESS" };
}

/** Arbitrum One, Nova and Sepolia: their gas pays for L1 data too. */
const ARBITRUM_CHAIN_IDS = new Set([42161n, 42170n, 421614n]);

/**
 * RPC_MAX_LAG_BLOCKS by chain id: about 10 s of blocks where blocks are fast (Arbitrum's 0.25 s, BNB Smart
 * Chain's 0.75 s), so that providers a second apart are not taken for lagging; 5 elsewhere (Chainlink's
 * default; 1 minute on Ethereum, 10 s on OP Stack chains and Polygon).
 */
export function defaultMaxLagBlocks(chainId: bigint): number {
  if (ARBITRUM_CHAIN_IDS.has(chainId)) return 40;
  if (chainId === 56n || chainId === 97n) return 12;
  return 5;
}

// An address no one holds the key of, so the probe never looks like a real transfer.
const PROBE_RECIPIENT = "0x000000000000000000000000000000000000dEaD";

/** What the connection reports about its endpoints: every request, and every endpoint left out or back. */
export interface RpcWatchers {
  observe?: RpcObserver;
  onEndpointState?: (endpoint: string, state: EndpointState, reason: string | null) => void;
  /** The node's endpoints did not take batches of estimates, or one did not take batches of broadcasts: each is sent alone from then on. */
  onBatchesRefused?: BatchOptions["onRefused"];
}

/**
 * The readiness of the node: the head (read again only when older than HEAD_MAX_AGE_MS) can be read, and of
 * several endpoints at least one is in rotation.
 */
export async function checkNode(endpoints: EndpointSet, head: { current(): Promise<unknown> }): Promise<string | undefined> {
  try {
    await head.current();
  } catch {
    return "the Ethereum node did not answer";
  }
  if (endpoints.endpoints.length > 1 && endpoints.healthy.length === 0) return "no RPC endpoint is in rotation (see endpoints)";
  return undefined;
}

/**
 * What the service hears from its node connection: every request, for the metrics; a log line for every
 * endpoint left out (warn) or back in rotation (info), by host only; and a warning when batches are given up.
 */
export function rpcWatchers(logger: Logger, observe: RpcObserver): RpcWatchers {
  return {
    observe,
    onEndpointState: (endpoint, state, reason) => {
      if (state === "in") logger.info({ endpoint }, "RPC endpoint back in rotation");
      else logger.warn({ endpoint, state, reason }, "RPC endpoint left out of rotation");
    },
    onBatchesRefused: (reason, calls) =>
      calls.kind === "estimates"
        ? logger.warn({ reason }, "the node does not take batches of estimates: each is sent alone from now on (RPC_BATCH_MAX_CALLS)")
        : logger.warn({ reason, endpoint: calls.endpoint }, "the endpoint does not take batches of raw transactions: each is sent to it alone from now on (RPC_BATCH_MAX_CALLS)"),
  };
}

/** Opens every lane's signer (their keys decide the wallets' addresses); one set serves every network. */
export async function openSigners(settings: ChainConfig["signers"]): Promise<WalletSigner[]> {
  const signers: WalletSigner[] = [];
  try {
    for (const setting of settings) {
      const signer = await openWalletSigner(setting);
      signers.push(signer);
      if (signers.some((other) => other !== signer && other.address === signer.address)) {
        throw new SignerStartupError(`two of the configured keys are the same wallet, ${signer.address}; each lane of a pool needs a key of its own`);
      }
    }
    return signers;
  } catch (error) {
    await Promise.all(signers.map((signer) => signer.close()));
    throw error;
  }
}

/**
 * Connects to a network's node with the lanes' signers, checks it serves the expected chain and token, and
 * reads the token's decimals. The connection is the first lane's. Without `signers` it opens its own (see
 * openSigners), and closes them if the connection fails.
 */
export async function connectChain(config: ChainConfig, watchers: RpcWatchers = {}, signers?: WalletSigner[]): Promise<ChainConnection> {
  const lanes = signers ?? (await openSigners(config.signers));
  try {
    return await connectWithSigners(config, lanes, watchers);
  } catch (error) {
    if (!signers) await Promise.all(lanes.map((signer) => signer.close()));
    throw error;
  }
}

/** Lets go of the node connection and, unless other networks still use them, every lane's signer. */
export async function closeChain(chain: ChainConnection, { signers = true } = {}): Promise<void> {
  chain.provider.destroy();
  await chain.endpoints.stop();
  if (signers) await Promise.all(chain.laneSigners.map((signer) => signer.close()));
}

/** The connection as `signer`'s lane uses it: the same node and token, another wallet. */
export function laneConnection(chain: ChainConnection, signer: WalletSigner): ChainConnection {
  return { ...chain, wallet: { address: signer.address }, signer };
}

/**
 * Asks every endpoint its chain id and head. The chain is the one they agree on (CHAIN_ID, when set, must
 * match it); an endpoint that does not answer is left out and checked by its first probe; one on another
 * chain stops the start, as a configuration mistake.
 */
async function openEndpoints(config: ChainConfig, watchers: RpcWatchers): Promise<{ endpoints: EndpointSet; firstUrl: string }> {
  const names = settingNamesOf(config);
  const rpcUrls = rpcEndpointUrls(config.rpcUrl);
  const endpoints = createEndpoints({
    rpcUrls,
    timeoutMs: config.rpcTimeoutMs,
    maxInFlight: config.rpcMaxInFlight,
    observe: watchers.observe,
    onStateChange: watchers.onEndpointState,
  });
  const answers = await Promise.all(endpoints.map(async (endpoint) => ({ endpoint, chainId: await askEndpoint(endpoint, "eth_chainId") })));
  const answering = answers.filter((answer): answer is { endpoint: (typeof endpoints)[number]; chainId: bigint } => answer.chainId !== undefined);
  if (answering.length === 0) {
    const nodes = endpoints.map((endpoint) => endpoint.label).join(", ");
    throw new NodeUnreachableError(endpoints.length === 1 ? `${names.rpcUrl}: the node at ${nodes} did not answer eth_chainId` : `${names.rpcUrl}: no endpoint answered eth_chainId (${nodes})`);
  }
  const chainIds = new Set(answering.map((answer) => answer.chainId));
  if (chainIds.size > 1) {
    throw new ChainStartupError(`${names.rpcUrl}: the endpoints serve different chains: ${answering.map((answer) => `${answer.endpoint.label} serves ${answer.chainId}`).join(", ")}`);
  }
  const [chainId] = chainIds;
  if (config.chainId !== undefined && BigInt(config.chainId) !== chainId) {
    const nodes = answering.map((answer) => answer.endpoint.label).join(", ");
    throw new ChainStartupError(`${names.chainId}: expected ${config.chainId}, but the node at ${nodes} serves chain ${chainId}`);
  }
  const set = endpointSetOf(endpoints, chainId, config.rpcMaxLagBlocks ?? defaultMaxLagBlocks(chainId));
  for (const { endpoint } of answering) set.markOnTheChain(endpoint);
  for (const { endpoint, chainId: answered } of answers) if (answered === undefined) endpoint.health.leaveOut("did not answer eth_chainId at startup");
  if (endpoints.length > 1) {
    const heads = await Promise.all(answering.map(async ({ endpoint }) => ({ endpoint, head: await askEndpoint(endpoint, "eth_blockNumber") })));
    // Highest first, so that each endpoint's lag is measured against the highest head of them all.
    for (const { endpoint, head } of heads.sort((a, b) => Number((b.head ?? 0n) - (a.head ?? 0n)))) {
      if (head !== undefined) set.recordHead(endpoint, Number(head));
    }
  }
  return { endpoints: set, firstUrl: rpcUrls[0] };
}

async function connectWithSigners(config: ChainConfig, [signer, ...otherSigners]: WalletSigner[], watchers: RpcWatchers): Promise<ChainConnection> {
  const { endpoints, firstUrl } = await openEndpoints(config, watchers);
  const chainId = endpoints.chainId;
  const provider = createRpcProvider(endpoints, firstUrl, { maxCalls: config.rpcBatchMaxCalls, onRefused: (reason, calls) => watchers.onBatchesRefused?.(reason, calls) });
  const names = settingNamesOf(config);
  const wallet = { address: signer.address };
  try {
    const configured = config.tokens ?? [{ symbol: getAddress(config.tokenAddress.toLowerCase()), address: config.tokenAddress }];
    const tokens: NetworkToken[] = [];
    for (const { symbol, address } of configured) {
      // The primary token's setting name is the variable's (or the file's entry); the others are the file's.
      const setting = address.toLowerCase() === config.tokenAddress.toLowerCase() ? names.tokenAddress : `${names.tokens ?? "tokens"}.${symbol}`;
      tokens.push(address === NATIVE_TOKEN ? nativeToken(symbol) : await readToken(provider, { symbol, address, setting }, chainId, wallet.address));
    }
    const primary = tokens.find((token) => !token.native) as NetworkToken;
    const opStack = (await provider.send("eth_getCode", [OP_GAS_PRICE_ORACLE, "latest"])) !== "0x";
    const payoutContract = config.payoutContract ? await checkPayoutContract(provider, config.payoutContract, names.payoutContract ?? "PAYOUT_CONTRACT", chainId) : null;
    endpoints.start();
    return {
      provider,
      endpoints,
      wallet,
      signer,
      laneSigners: [signer, ...otherSigners],
      keccak: useNativeKeccak(),
      chainId,
      tokenAddress: primary.address,
      tokenDecimals: primary.decimals,
      tokens,
      network: servedNetworkOf(config.served, { chainId, tokenAddress: primary.address, tokens: tokens.map(({ symbol, address }) => ({ symbol, address })) }),
      opStack,
      gasIncludesL1: ARBITRUM_CHAIN_IDS.has(chainId),
      tokenMayReturnFalse: primary.mayReturnFalse,
      payoutContract,
    };
  } catch (error) {
    provider.destroy();
    if (error instanceof ChainStartupError) throw error;
    // Not the node's words (they may carry an endpoint's URL, and with it a key): which reads failed.
    throw new ChainStartupError(`${names.rpcUrl}: the node did not answer the startup reads (eth_getCode of the GasPriceOracle)`);
  }
}

/**
 * The payout contract at `address`, checked to be PayoutBatch itself: the wallet allows it to spend its
 * tokens, so any other code there (a mistyped address, another contract) must stop the start.
 */
async function checkPayoutContract(provider: JsonRpcProvider, address: string, setting: string, chainId: bigint): Promise<string> {
  const checksummed = getAddress(address.toLowerCase());
  const [code, expected] = await Promise.all([provider.send("eth_getCode", [checksummed, "latest"]) as Promise<string>, payoutRuntimeCode(provider)]);
  if (code === "0x") throw new ChainStartupError(`${setting}: no contract at ${checksummed} on chain ${chainId}; deploy contracts/PayoutBatch.sol (docs/payouts.md)`);
  if (code.toLowerCase() !== expected.toLowerCase()) {
    throw new ChainStartupError(`${setting}: the contract at ${checksummed} on chain ${chainId} is not this version's PayoutBatch (its code differs); the wallet would allow it to spend its tokens`);
  }
  return checksummed;
}

function nativeToken(symbol: string): NetworkToken {
  return { symbol, address: NATIVE_TOKEN, native: true, decimals: 18, mayReturnFalse: false };
}

/** An ERC-20 token checked on the node: a contract that answers decimals(), and how it answers a transfer it cannot make. */
async function readToken(provider: JsonRpcProvider, token: { symbol: string; address: string; setting: string }, chainId: bigint, walletAddress: string): Promise<NetworkToken> {
  const address = getAddress(token.address.toLowerCase());
  try {
    const code: string = await provider.send("eth_getCode", [address, "latest"]);
    if (code === "0x") throw new ChainStartupError(`${token.setting}: no contract at ${address} on chain ${chainId}`);
    const decimalsResult: string = await provider.send("eth_call", [{ to: address, data: ERC20_INTERFACE.encodeFunctionData("decimals") }, "latest"]);
    const [decimals] = ERC20_INTERFACE.decodeFunctionResult("decimals", decimalsResult);
    const mayReturnFalse = await probeTokenFailure(provider, address, walletAddress);
    const displaySymbol = token.symbol.toLowerCase() === address.toLowerCase() ? await readDisplaySymbol(provider, address) : undefined;
    return { symbol: token.symbol, address, native: false, decimals: Number(decimals), mayReturnFalse, ...(displaySymbol && { displaySymbol }) };
  } catch (error) {
    if (error instanceof ChainStartupError) throw error;
    throw new ChainStartupError(`${token.setting}: ${address} did not answer decimals() like an ERC-20 token`);
  }
}

/** A contract's symbol() as a string (or bytes32, as some old tokens answer), if short and printable; never a reason to refuse the token. */
async function readDisplaySymbol(provider: JsonRpcProvider, address: string): Promise<string | undefined> {
  try {
    const result: string = await provider.send("eth_call", [{ to: address, data: ERC20_INTERFACE.encodeFunctionData("symbol") }, "latest"]);
    let symbol: string;
    try {
      [symbol] = ERC20_INTERFACE.decodeFunctionResult("symbol", result);
    } catch {
      symbol = decodeBytes32String(dataSlice(result, 0, 32));
    }
    return /^[\x21-\x7e]{1,16}$/.test(symbol) ? symbol : undefined;
  } catch {
    return undefined;
  }
}
