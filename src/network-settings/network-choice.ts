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

/** Checks what a request names against the served network; ServiceError UNKNOWN_NETWORK or UNKNOWN_TOKEN. */
export function checkNetworkChoice(served: ServedNetwork, choice: { network?: string | number; token?: string }): ServedNetwork {
  const { network, token } = choice;
  if (network !== undefined && !namesNetwork(served, network)) {
    throw new ServiceError("UNKNOWN_NETWORK", `network ${JSON.stringify(network)} is not served here; this service pays on ${served.name} (chain ${served.chainId})`);
  }
  if (token !== undefined && token.toUpperCase() !== served.token.symbol.toUpperCase() && token.toLowerCase() !== served.token.address.toLowerCase()) {
    throw new ServiceError("UNKNOWN_TOKEN", `token ${JSON.stringify(token)} is not one of ${served.name}'s; this service pays in ${served.token.symbol === served.token.address ? served.token.address : `${served.token.symbol} (${served.token.address})`}`);
  }
  return served;
}

function namesNetwork(served: ServedNetwork, network: string | number): boolean {
  if (typeof network === "number") return BigInt(network) === served.chainId;
  return network === served.name || (/^[0-9]{1,20}$/.test(network) && BigInt(network) === served.chainId);
}
