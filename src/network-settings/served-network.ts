/**
 * The network and token a deployment sends on. NETWORKS_FILE may describe several; until one deployment
 * serves several, a file naming more than one network or token, or a native coin, is refused at startup
 * rather than half served (a setting ignored without a word is the most dangerous kind).
 */
import { type ChainConfig, type Config, ConfigError, chainConfigOf } from "../config.js";
import { NATIVE, NETWORK_SETTING_FIELDS, type NetworksSettings, TOKEN_SETTING_FIELDS } from "./networks-file.js";

/** The chain configuration of the one network and token the file names; ConfigError when it names more. */
export function chainConfigOfNetworksFile(config: Config, settings: NetworksSettings): ChainConfig {
  const { networks } = settings;
  const tokens = networks.flatMap((network) => network.tokens.map((token) => `${network.name} ${token.symbol}`));
  if (networks.length > 1 || tokens.length > 1) {
    throw new ConfigError(
      `NETWORKS_FILE: names ${networks.length} network(s) and ${tokens.length} token(s) (${tokens.join(", ")}); ` +
        "this version sends one ERC-20 token on one network per deployment: run one deployment per network and token (docs/networks.md)",
    );
  }
  const [network] = networks;
  const [token] = network.tokens;
  const path = `NETWORKS_FILE networks "${network.name}"`;
  if (token.address === NATIVE) {
    throw new ConfigError(`${path} tokens.${token.symbol}: native coins are not sent yet; this version sends ERC-20 tokens (docs/networks.md)`);
  }
  // The file's value for the network wins; a variable is the default of every network.
  const networkSettings = Object.fromEntries(NETWORK_SETTING_FIELDS.filter((field) => network[field] !== undefined).map((field) => [field, network[field]]));
  const tokenSettings = Object.fromEntries(TOKEN_SETTING_FIELDS.filter((field) => token[field] !== undefined).map((field) => [field, token[field]]));
  return {
    ...chainConfigOf({ ...config, ...networkSettings, ...tokenSettings, rpcUrl: network.rpcUrls.join(","), chainId: network.chainId, tokenAddress: token.address }),
    settingNames: { rpcUrl: `${path} rpcUrls`, chainId: `${path} chainId`, tokenAddress: `${path} tokens.${token.symbol}` },
    served: { network: network.name, token: token.symbol },
  };
}
