/**
 * The networks a deployment sends on, from NETWORKS_FILE: each a chain configuration of its own (the
 * deployment's variables, with the network's and its token's settings over them). This version sends one
 * ERC-20 token per network: a network naming several tokens, or a native coin, is refused at startup rather
 * than half served (a setting ignored without a word is the most dangerous kind).
 */
import { type ChainConfig, type Config, ConfigError, type DeploymentConfig, chainConfigOf } from "../config.js";
import { NATIVE, type NetworkSettings, type NetworksSettings } from "./networks-file.js";

/** Every network of the file, the default first; ConfigError for what this version does not send. */
export function deploymentConfigOfNetworksFile(config: Config, settings: NetworksSettings): DeploymentConfig {
  const problems = settings.networks.flatMap(unsentTokens);
  if (problems.length > 0) throw new ConfigError(`NETWORKS_FILE:\n  ${problems.join("\n  ")}`);
  const byDefault = settings.networks.find((network) => network.name === settings.default.network) as NetworkSettings;
  const [home, ...others] = [byDefault, ...settings.networks.filter((network) => network !== byDefault)].map((network) => chainConfigOfNetwork(config, network));
  return { ...home, otherNetworks: others };
}

function unsentTokens(network: NetworkSettings): string[] {
  const path = `networks "${network.name}"`;
  const native = network.tokens.filter((token) => token.address === NATIVE);
  if (native.length > 0) return native.map((token) => `${path} tokens.${token.symbol}: native coins are not sent yet; this version sends one ERC-20 token per network (docs/networks.md)`);
  if (network.tokens.length > 1) {
    return [`${path} tokens: names ${network.tokens.map((token) => token.symbol).join(", ")}; this version sends one ERC-20 token per network: run one deployment per token meanwhile (docs/networks.md)`];
  }
  return [];
}

function chainConfigOfNetwork(config: Config, network: NetworkSettings): ChainConfig {
  // The parsed file holds only the settings it gives: what is left of a network and its token beside their
  // names and addresses wins over the variables, which stay the default of every network.
  const { name, chainId, rpcUrls, tokens, ...networkSettings } = network;
  const [{ symbol, address, ...tokenSettings }] = tokens;
  const path = `NETWORKS_FILE networks "${name}"`;
  return {
    ...chainConfigOf({ ...config, ...networkSettings, ...tokenSettings, rpcUrl: rpcUrls.join(","), chainId, tokenAddress: address }),
    settingNames: { rpcUrl: `${path} rpcUrls`, chainId: `${path} chainId`, tokenAddress: `${path} tokens.${symbol}` },
    served: { network: name, token: symbol },
  };
}
