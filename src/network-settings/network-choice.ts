/**
 * What a request may name: `network` (a name, or a chain id as a number or decimal string) and `token`
 * (a symbol, in any case, the contract's address, or "native" for the native coin). A name the deployment
 * does not serve is a 400 before anything else is read, so the request moves nothing and its
 * Idempotency-Key stays unused.
 */
import { ServiceError } from "../errors.js";

/** The journal's and the documents' name for a network's native coin where a token has its address. */
export const NATIVE_TOKEN = "native";

/** A token as requests, answers and events name it. */
export interface ServedToken {
  /** NETWORKS_FILE's symbol; without the file, the token's address. */
  symbol: string;
  /** The contract's checksummed address, or "native". */
  address: string;
}

/** A network a deployment serves and its tokens, as requests, answers and events name them. */
export interface ServedNetwork {
  /** NETWORKS_FILE's name; without the file, the chain id in decimal. */
  name: string;
  chainId: bigint;
  /** The token a request that names none gets. */
  token: ServedToken;
  /** Every token it pays in, `token` first. */
  tokens: readonly ServedToken[];
}

/** The network a ChainConfig describes, once its node told the chain id. */
export function servedNetworkOf(
  served: { network: string; token: string } | undefined,
  chain: { chainId: bigint; tokenAddress: string; tokens?: readonly ServedToken[] },
): ServedNetwork {
  const tokens = chain.tokens ?? [{ symbol: served?.token ?? chain.tokenAddress, address: chain.tokenAddress }];
  return { name: served?.network ?? chain.chainId.toString(), chainId: chain.chainId, token: tokens[0], tokens };
}

/**
 * The network a request names (the first of `networks`, the default, when it names none) and its token
 * (the network's first when it names none); ServiceError UNKNOWN_NETWORK or UNKNOWN_TOKEN when the
 * deployment does not serve what it names.
 */
export function chooseNetwork<T extends { network: ServedNetwork }>(networks: readonly T[], choice: { network?: string | number; token?: string }): { chosen: T; token: ServedToken } {
  const { network, token } = choice;
  const chosen = network === undefined ? networks[0] : networks.find((candidate) => namesNetwork(candidate.network, network));
  if (!chosen) {
    const served = networks.map((candidate) => `${candidate.network.name} (chain ${candidate.network.chainId})`).join(", ");
    throw new ServiceError("UNKNOWN_NETWORK", `network ${JSON.stringify(network)} is not served here; this service pays on ${served}`);
  }
  const served = chosen.network;
  if (token === undefined) return { chosen, token: served.token };
  const named = served.tokens.find((candidate) => namesToken(candidate, token));
  if (!named) {
    const list = served.tokens.map((candidate) => (candidate.symbol === candidate.address ? candidate.address : `${candidate.symbol} (${candidate.address})`)).join(", ");
    throw new ServiceError("UNKNOWN_TOKEN", `token ${JSON.stringify(token)} is not one of ${served.name}'s; it pays in ${list}`);
  }
  return { chosen, token: named };
}

/** The token of `tokens` at `address` (a contract's, in any case, or "native"), if it is one of them. */
export function tokenAt<T extends ServedToken>(tokens: readonly T[], address: string): T | undefined {
  const wanted = address.toLowerCase();
  return tokens.find((token) => token.address.toLowerCase() === wanted);
}

function namesToken(token: ServedToken, named: string): boolean {
  return named.toUpperCase() === token.symbol.toUpperCase() || named.toLowerCase() === token.address.toLowerCase();
}

/** Whether `network` (a name, or a chain id as a number or decimal string) names `served`. */
export function namesNetwork(served: ServedNetwork, network: string | number): boolean {
  if (typeof network === "number") return BigInt(network) === served.chainId;
  return network === served.name || (/^[0-9]{1,20}$/.test(network) && BigInt(network) === served.chainId);
}
