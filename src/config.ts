/**
 * Service configuration: each part declares its own settings (its folder's settings.ts); this gathers them
 * into one schema and one loader, and gives the summary a process started with.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { APPROVAL_SETTINGS } from "./approvals/settings.js";
import { ApiKeyRing } from "./auth/api-keys.js";
import { DEV_SETTINGS } from "./dev/settings.js";
import { HTTP_SETTINGS } from "./http/settings.js";
import { JOURNAL_SETTINGS } from "./journal/settings.js";
import { LANE_SETTINGS } from "./lanes/settings.js";
import { NETWORK_SETTINGS } from "./network-settings/settings.js";
import { NODE_SETTINGS } from "./node/settings.js";
import { OUTFLOW_SETTINGS } from "./outflows/settings.js";
import { REPLICA_SETTINGS } from "./replicas/settings.js";
import { ConfigError, type SettingsPart } from "./settings/settings-part.js";
import type { SignerSettings } from "./signers/create-signer.js";
import { SIGNER_SETTINGS, signerSettingsOf } from "./signers/settings.js";
import { WEBHOOK_SETTINGS } from "./webhooks/settings.js";

/** Every part's settings; their rules are checked in this order, so one run lists the problems part by part. */
const PARTS: readonly SettingsPart<Record<string, TSchema>>[] = [
  SIGNER_SETTINGS,
  NETWORK_SETTINGS,
  HTTP_SETTINGS,
  WEBHOOK_SETTINGS,
  APPROVAL_SETTINGS,
  OUTFLOW_SETTINGS,
  LANE_SETTINGS,
  JOURNAL_SETTINGS,
  NODE_SETTINGS,
  DEV_SETTINGS,
  REPLICA_SETTINGS,
];

// The same parts spelled out, so that Config's type knows every field.
export const ConfigSchema = Type.Object({
  ...SIGNER_SETTINGS.schema,
  ...NETWORK_SETTINGS.schema,
  ...HTTP_SETTINGS.schema,
  ...WEBHOOK_SETTINGS.schema,
  ...APPROVAL_SETTINGS.schema,
  ...OUTFLOW_SETTINGS.schema,
  ...LANE_SETTINGS.schema,
  ...JOURNAL_SETTINGS.schema,
  ...NODE_SETTINGS.schema,
  ...DEV_SETTINGS.schema,
  ...REPLICA_SETTINGS.schema,
});

/** The validated configuration; derived from the schema, never written by hand. */
export type Config = Static<typeof ConfigSchema>;

/** Configuration once the node, wallet and token are known (after a dev chain was started, if any). */
export type ChainConfig = Config &
  Required<Pick<Config, "rpcUrl" | "tokenAddress">> & {
    signers: SignerSettings[];
    /** Where the node's and token's settings came from, for startup messages: the variables unless said here. */
    settingNames?: ChainSettingNames;
    /** The network's name and the token's symbol in NETWORKS_FILE; without it the chain id and the token's address name them. */
    served?: { network: string; token: string };
    /**
     * Every token the network pays in (NETWORKS_FILE), the one a request that names none gets first; without
     * it, TOKEN_ADDRESS's token alone. `tokenAddress` is the first ERC-20 of them (the one balances and
     * checks read first), and each token's limits are its own.
     */
    tokens?: readonly TokenConfig[];
  };

/** A token of a network: its symbol, its contract's address or "native" (plain value transfers), and its policy limits. */
export interface TokenConfig {
  symbol: string;
  address: string;
  maxTransferAmount?: string;
  transferCapPerDay?: string;
  approvalAbove?: string;
  approvalAbovePerDay?: string;
}

/** A deployment's networks: the default one, and the others NETWORKS_FILE names, each a chain configuration of its own. */
export type DeploymentConfig = ChainConfig & { otherNetworks?: readonly ChainConfig[] };

/** How startup messages name the settings of the chain: RPC_URL, CHAIN_ID, TOKEN_ADDRESS, or a file's entries. */
export interface ChainSettingNames {
  rpcUrl: string;
  chainId: string;
  tokenAddress: string;
  /** Where the network's other tokens are named (NETWORKS_FILE's `tokens` of the network). */
  tokens?: string;
  /** PAYOUT_CONTRACT, or the file's `payoutContract` of the network. */
  payoutContract?: string;
}

/** Which environment variable feeds which config field. */
export const ENVIRONMENT_VARIABLES = Object.assign({}, ...PARTS.map((part) => part.variables)) as Record<keyof Config, string>;

const EXPECTATIONS: Partial<Record<keyof Config, string>> = Object.assign({}, ...PARTS.map((part) => part.expectations ?? {}));
// Settings that hold a secret: the summary says only that they are set (API_KEYS: how many keys of each role).
const SECRET_SETTINGS = new Set<string>(PARTS.flatMap((part) => part.secrets ?? []));
// Settings that are URLs, whose path, query or user part can carry a key: the summary keeps their hosts.
const URL_SETTINGS = new Map(PARTS.flatMap((part) => Object.entries(part.urls ?? {})));
// TypeBox would turn "1.5" into 1; whole-number variables must be written as whole numbers.
const INTEGER_FIELDS = Object.entries(ConfigSchema.properties).filter(([, schema]) => (schema as TSchema).type === "integer").map(([field]) => field as keyof Config);

/**
 * The settings a process started with, for the audit log, by variable name: secrets only as "set", URLs as
 * their hosts, API keys as their ids and roles (an id is a hash's first digits: safe to show).
 */
export function settingsForAudit(config: Config): Record<string, string | number | boolean> {
  const settings: Record<string, string | number | boolean> = {};
  for (const [field, variable] of Object.entries(ENVIRONMENT_VARIABLES) as [keyof Config, string][]) {
    const value = config[field];
    if (value === undefined) continue;
    if (SECRET_SETTINGS.has(field)) settings[variable] = "(set)";
    else if (URL_SETTINGS.has(field)) settings[variable] = hostsOf(String(value), URL_SETTINGS.get(field) === "several");
    else if (field === "apiKeys") settings[variable] = ApiKeyRing.parse(String(value)).described.join(", ");
    else settings[variable] = value as string | number | boolean;
  }
  return settings;
}

// A single URL is parsed whole: a password may hold a comma.
function hostsOf(urls: string, several: boolean): string {
  return (several ? urls.split(",") : [urls])
    .map((url) => {
      try {
        return new URL(url.trim()).host;
      } catch {
        return "(not a URL)";
      }
    })
    .join(", ");
}

/**
 * Reads and validates the configuration from an environment object. Pure: tests pass literal objects.
 * Messages name the variable but never echo its value, since some values are secrets.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const raw: Record<string, unknown> = {};
  for (const [field, variable] of Object.entries(ENVIRONMENT_VARIABLES)) {
    const value = env[variable]?.trim();
    if (value) raw[field] = value;
  }
  const problems: string[] = [];
  for (const field of INTEGER_FIELDS) {
    if (field in raw && !/^[0-9]+$/.test(String(raw[field]))) {
      problems.push(`${ENVIRONMENT_VARIABLES[field]}: must be a whole number`);
      delete raw[field];
    }
  }
  for (const part of PARTS) part.check?.(raw, problems);
  const candidate = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw));
  problems.push(...[...Value.Errors(ConfigSchema, candidate)].map((error) => {
    const field = error.path.split("/")[1] as keyof Config;
    return `${ENVIRONMENT_VARIABLES[field]}: ${expectationOf(field, error.message)}`;
  }));
  if (problems.length > 0) {
    throw new ConfigError(`invalid configuration:\n  ${[...new Set(problems)].join("\n  ")}`);
  }
  return candidate as Config;
}

function expectationOf(field: keyof Config, schemaMessage: string): string {
  if (EXPECTATIONS[field]) return EXPECTATIONS[field];
  return (ConfigSchema.properties[field] as TSchema).type === "boolean" ? "must be true or false" : schemaMessage.toLowerCase();
}

/** The configuration of a service on a known node, token and signer; ConfigError when one is missing. */
export function chainConfigOf(config: Config): ChainConfig {
  const signers = signerSettingsOf(config);
  if (!config.rpcUrl || !signers || !config.tokenAddress) {
    throw new ConfigError("RPC_URL, a signer (PRIVATE_KEY, KEYSTORE_PATH, AWS_KMS_KEY_ID or PKCS11_MODULE) and TOKEN_ADDRESS: required");
  }
  return { ...config, rpcUrl: config.rpcUrl, tokenAddress: config.tokenAddress, signers };
}
