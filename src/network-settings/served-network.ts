/**
 * The networks a deployment sends on, from NETWORKS_FILE: each a chain configuration of its own (the
 * deployment's variables, with the network's settings over them) holding every token it pays in. A network
 * needs one ERC-20 token at least: its native coin alone is refused at startup (docs/networks.md).
 */
import { type ChainConfig, type Config, type DeploymentConfig, type TokenConfig, chainConfigOf } from "../config.js";
import { ConfigError } from "../settings/settings-part.js";
import { NATIVE, type NetworkSettings, type NetworksSettings } from "./networks-file.js";

/** Every network of the file, the default first; ConfigError for what this version does not send. */
export function deploymentConfigOfNetworksFile(config: Config, settings: NetworksSettings): DeploymentConfig {
  const problems = settings.networks.flatMap(withoutErc20);
  if (problems.length > 0) throw new ConfigError(`NETWORKS_FILE:\n  ${problems.join("\n  ")}`);
  const byDefault = settings.networks.find((network) => network.name === settings.default.network) as NetworkSettings;
  const ordered = [byDefault, ...settings.networks.filter((network) => network !== byDefault)];
  const [home, ...others] = ordered.map((network) => chainConfigOfNetwork(config, network, settings.default.token));
  return { ...home, otherNetworks: others };
}

function withoutErc20(network: NetworkSettings): string[] {
  if (network.tokens.some((token) => token.address !== NATIVE)) return [];
  return [`networks "${network.name}" tokens: names only the native coin; a network needs one ERC-20 token at least (its balances and logs are read through it)`];
}

function chainConfigOfNetwork(config: Config, network: NetworkSettings, defaultSymbol: string): ChainConfig {
  // The parsed file holds only the settings it gives: what is left of a network beside its names and
  // addresses wins over the variables, which stay the default of every network.
  const { name, chainId, rpcUrls, tokens, ...networkSettings } = network;
  // A request naming this network but no token gets the default's symbol where the network has it, else its first token.
  const first = tokens.find((token) => token.symbol === defaultSymbol) ?? tokens[0];
  const ordered: TokenConfig[] = [first, ...tokens.filter((token) => token !== first)];
  const primary = ordered.find((token) => token.address !== NATIVE) as TokenConfig;
  const { symbol, address } = primary;
  const path = `NETWORKS_FILE networks "${name}"`;
  // Each token's limits stay with it (tokens): the variables' are every token's default.
  return {
    ...chainConfigOf({ ...config, ...networkSettings, rpcUrl: rpcUrls.join(","), chainId, tokenAddress: address }),
    settingNames: { rpcUrl: `${path} rpcUrls`, chainId: `${path} chainId`, tokenAddress: `${path} tokens.${symbol}`, tokens: `${path} tokens`, payoutContract: `${path} payoutContract` },
    served: { network: name, token: first.symbol },
    tokens: ordered,
  };
}
