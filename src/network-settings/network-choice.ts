/**
 * What a request may name: `network` (a name, or a chain id as a number or decimal string) and `token`
 * (a symbol, in any case, or the contract's address). A name the deployment does not serve is a 400 before
 * anything else is read, so the request moves nothing and its Idempotency-Key stays unused.
 */
import { ServiceError } from "../errors.js";

/** The network a deployment serves and its token, as requests, answers and events name them. */
export interface ServedNetwork {
  /** NETWORKS_FILE's name; without the file, the chain id in decimal. */
  name: string;
  chainId: bigint;
  token: {
    /** NETWORKS_FILE's symbol; without the file, the token's address. */
    symbol: string;
    address: string;
  };
}

/** The network a ChainConfig describes, once its node told the chain id. */
export function servedNetworkOf(served: { network: string; token: string } | undefined, chain: { chainId: bigint; tokenAddress: string }): ServedNetwork {
  return {
    name: served?.network ?? chain.chainId.toString(),
    chainId: chain.chainId,
    token: { symbol: served?.token ?? chain.tokenAddress, address: chain.tokenAddress },
  };
}

/**
 * The network a request names (the first of `networks`, the default, when it names none), checked against
 * `token` too; ServiceError UNKNOWN_NETWORK or UNKNOWN_TOKEN when the deployment does not serve what it names.
 */
export function chooseNetwork<T extends { network: ServedNetwork }>(networks: readonly T[], choice: { network?: string | number; token?: string }): T {
  const { network, token } = choice;
  const chosen = network === undefined ? networks[0] : networks.find((candidate) => namesNetwork(candidate.network, network));
  if (!chosen) {
    const served = networks.map((candidate) => `${candidate.network.name} (chain ${candidate.network.chainId})`).join(", ");
    throw new ServiceError("UNKNOWN_NETWORK", `network ${JSON.stringify(network)} is not served here; this service pays on ${served}`);
  }
  const served = chosen.network;
  if (token !== undefined && token.toUpperCase() !== served.token.symbol.toUpperCase() && token.toLowerCase() !== served.token.address.toLowerCase()) {
    const named = served.token.symbol === served.token.address ? served.token.address : `${served.token.symbol} (${served.token.address})`;
    throw new ServiceError("UNKNOWN_TOKEN", `token ${JSON.stringify(token)} is not one of ${served.name}'s; it pays in ${named}`);
  }
  return chosen;
}

/** Whether `network` (a name, or a chain id as a number or decimal string) names `served`. */
export function namesNetwork(served: ServedNetwork, network: string | number): boolean {
  if (typeof network === "number") return BigInt(network) === served.chainId;
  return network === served.name || (/^[0-9]{1,20}$/.test(network) && BigInt(network) === served.chainId);
}
