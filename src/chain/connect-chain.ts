/** Connects to the node, checks it serves the expected chain and token, and holds what every transfer needs. */
import { type JsonRpcProvider, Wallet, getAddress } from "ethers";
import type { ChainConfig } from "../config.js";
import { type DigestSigner, createDigestSigner } from "./digest-signer.js";
import { ERC20_INTERFACE } from "./erc20.js";
import { useNativeKeccak } from "./native-keccak.js";
import { type RpcObserver, createRpcProvider, describeRpcUrl, fetchChainId } from "./rpc-provider.js";

/** The node, the hot wallet and the token, read once at startup. */
export interface ChainConnection {
  provider: JsonRpcProvider;
  wallet: Wallet;
  /** Signs with the wallet's key, natively where the platform allows. */
  signer: DigestSigner;
  /** Which keccak-256 ethers uses in this process. */
  keccak: "native" | "ethers";
  chainId: bigint;
  tokenAddress: string;
  tokenDecimals: number;
}

/** Raised when the node, chain or token is not what the configuration says; the process must not start. */
export class ChainStartupError extends Error {
  override name = "ChainStartupError";
}

/** Opens the provider, checks CHAIN_ID and TOKEN_ADDRESS against the node, and reads the token's decimals. */
export async function connectChain(config: ChainConfig, observeRpc?: RpcObserver): Promise<ChainConnection> {
  const rpc = { rpcUrl: config.rpcUrl, timeoutMs: config.rpcTimeoutMs };
  const node = describeRpcUrl(config.rpcUrl);
  let chainId: bigint;
  try {
    chainId = await fetchChainId(rpc);
  } catch {
    throw new ChainStartupError(`RPC_URL: the node at ${node} did not answer eth_chainId`);
  }
  if (config.chainId !== undefined && BigInt(config.chainId) !== chainId) {
    throw new ChainStartupError(`CHAIN_ID: expected ${config.chainId}, but the node at ${node} serves chain ${chainId}`);
  }
  const provider = createRpcProvider(rpc, chainId, observeRpc);
  const tokenAddress = getAddress(config.tokenAddress.toLowerCase());
  try {
    const code: string = await provider.send("eth_getCode", [tokenAddress, "latest"]);
    if (code === "0x") throw new ChainStartupError(`TOKEN_ADDRESS: no contract at ${tokenAddress} on chain ${chainId}`);
    const decimalsResult: string = await provider.send("eth_call", [
      { to: tokenAddress, data: ERC20_INTERFACE.encodeFunctionData("decimals") },
      "latest",
    ]);
    const [decimals] = ERC20_INTERFACE.decodeFunctionResult("decimals", decimalsResult);
    const wallet = new Wallet(config.privateKey);
    return { provider, wallet, signer: createDigestSigner(wallet.signingKey), keccak: useNativeKeccak(), chainId, tokenAddress, tokenDecimals: Number(decimals) };
  } catch (error) {
    provider.destroy();
    if (error instanceof ChainStartupError) throw error;
    throw new ChainStartupError(`TOKEN_ADDRESS: ${tokenAddress} did not answer decimals() like an ERC-20 token`);
  }
}
