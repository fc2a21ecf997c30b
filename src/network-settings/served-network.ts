/**
 * The networks a deployment sends on, from NETWORKS_FILE: each a chain configuration of its own (the
 * deployment's variables, with the network's and its token's settings over them). This version sends one
 * ERC-20 token per network: a network naming several tokens, or a native coin, is refused at startup rather
 * than half served (a setting ignored without a word is the most dangerous kind).
 */
import { type ChainConfig, type Config, ConfigError, type DeploymentConfig, chainConfigOf } from "../config.js";
import { NATIVE, NETWORK_SETTING_FIELDS, type NetworkSettings, type NetworksSettings, TOKEN_SETTING_FIELDS } from "./networks-file.js";

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
  const [token] = network.tokens;
  const path = `NETWORKS_FILE networks "${network.name}"`;
  // The file's value for the network wins; a variable is the default of every network.
  const networkSettings = Object.fromEntries(NETWORK_SETTING_FIELDS.filter((field) => network[field] !== undefined).map((field) => [field, network[field]]));
  const tokenSettings = Object.fromEntries(TOKEN_SETTING_FIELDS.filter((field) => token[field] !== undefined).map((field) => [field, token[field]]));
  return {
    ...chainConfigOf({ ...config, ...networkSettings, ...tokenSettings, rpcUrl: network.rpcUrls.join(","), chainId: network.chainId, tokenAddress: token.address }),
    settingNames: { rpcUrl: `${path} rpcUrls`, chainId: `${path} chainId`, tokenAddress: `${path} tokens.${token.symbol}` },
    served: { network: network.name, token: token.symbol },
  };
}
