/**
 * NETWORKS_FILE: the networks and tokens a deployment pays in, read and checked once at startup. Values may
 * name environment variables (`"${BASE_RPC_URL}"`) so that provider keys stay out of the file; messages name
 * the place in the file, never a value (an endpoint's URL may hold a key).
 */
import { readFileSync } from "node:fs";
import { type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type Config, ConfigSchema } from "../config.js";
import { rpcUrlProblems } from "../node/settings.js";
import { ConfigError } from "../settings/settings-part.js";
import { InvalidAddressError, parseRecipientAddress } from "../domain/recipient-address.js";

/** Settings that are variables for a deployment without the file, and may differ per network in it. */
export const NETWORK_SETTING_FIELDS = [
  "rpcMaxLagBlocks",
  "finalityBlocks",
  "stuckAfterBlocks",
  "repriceUnminedAfterMs",
  "feeTipPercentile",
  "minPriorityFeePerGas",
  "maxFeePerGas",
  "maxPriorityFeePerGas",
  "gasLimitMultiplier",
  "maxInFlightPerLane",
  "payoutContract",
  "feeBudgetPerDay",
] as const satisfies readonly (keyof Config)[];

/** The policy limits that are in token units, so per token in the file. */
export const TOKEN_SETTING_FIELDS = ["maxTransferAmount", "transferCapPerDay", "approvalAbove", "approvalAbovePerDay"] as const satisfies readonly (keyof Config)[];

type NetworkSettingField = (typeof NETWORK_SETTING_FIELDS)[number];
type TokenSettingField = (typeof TOKEN_SETTING_FIELDS)[number];

/** A token of a network: an ERC-20 contract, or the network's native coin. */
export interface TokenSettings extends Partial<Pick<Config, TokenSettingField>> {
  symbol: string;
  /** The contract's checksummed address, or "native" for plain value transfers. */
  address: string;
}

export interface NetworkSettings extends Partial<Pick<Config, NetworkSettingField>> {
  name: string;
  chainId: number;
  rpcUrls: string[];
  tokens: TokenSettings[];
}

export interface NetworksSettings {
  networks: NetworkSettings[];
  /** What a transfer without `network` and `token` uses. */
  default: { network: string; token: string };
}

export const NATIVE = "native";
/** Bounds on what one file may hold: each network is a unit with its own connections and work. */
export const MAX_NETWORKS = 32;
export const MAX_TOKENS_PER_NETWORK = 32;
// A name that is all digits would be taken for a chain id in a request.
const NAME_PATTERN = "^[a-z][a-z0-9-]{0,31}$";
const SYMBOL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,15}$/;
const VARIABLE_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const settingsOf = <F extends keyof Config>(fields: readonly F[]) =>
  Object.fromEntries(fields.map((field) => [field, Type.Optional(ConfigSchema.properties[field] as TSchema)])) as Record<F, TSchema>;

const NetworkSchema = Type.Object(
  {
    name: Type.String({ pattern: NAME_PATTERN }),
    chainId: Type.Integer({ minimum: 1 }),
    rpcUrls: Type.Array(Type.String(), { minItems: 1, maxItems: 16 }),
    // Checked entry by entry below: a union's errors say nothing useful.
    tokens: Type.Record(Type.String(), Type.Unknown()),
    ...settingsOf(NETWORK_SETTING_FIELDS),
  },
  { additionalProperties: false },
);

const TokenObjectSchema = Type.Object({ address: Type.String(), ...settingsOf(TOKEN_SETTING_FIELDS) }, { additionalProperties: false });

const FileSchema = Type.Object(
  {
    networks: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_NETWORKS }),
    default: Type.Optional(Type.Object({ network: Type.String(), token: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

/** Reads and checks the file at `path`; `env` fills in the variables it names. ConfigError lists every problem. */
export function readNetworksFile(path: string, env: Record<string, string | undefined>): NetworksSettings {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`NETWORKS_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  return parseNetworksFile(text, env);
}

/** Where JSON.parse stopped, as a line and column, from its message (Node 20 gives a position, later ones a line and column). */
function whereJsonFailed(text: string, message: string): string {
  const lineAndColumn = /line (\d+) column (\d+)/.exec(message);
  if (lineAndColumn) return `at line ${lineAndColumn[1]}, column ${lineAndColumn[2]}`;
  const position = /position (\d+)/.exec(message);
  if (!position) return /end of JSON input/i.test(message) ? "it ends too early" : "a syntax error";
  const before = text.slice(0, Number(position[1])).split("\n");
  return `at line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

/** Checks the file's text; pure, so tests pass literal text and variables. */
export function parseNetworksFile(text: string, env: Record<string, string | undefined>): NetworksSettings {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // Where, never what: newer Node versions quote the text around the fault, which may hold an inline RPC key.
    throw problemsError([`is not JSON (${whereJsonFailed(text, (error as Error).message)})`]);
  }
  const problems: string[] = [];
  // Substituted after parsing, so a value can never change the file's structure.
  const document = substituteVariables(parsed, env, "", problems);
  problems.push(...schemaProblems(FileSchema, document, ""));
  if (problems.length > 0) throw problemsError(problems);
  const file = document as { networks: unknown[]; default?: { network: string; token: string } };
  const networks = file.networks.flatMap((network, index) => checkNetwork(network, `networks[${index}]`, problems));
  checkUnique(networks.map((network) => network.name), "name", problems);
  checkUnique(networks.map((network) => String(network.chainId)), "chainId", problems);
  // A network left out for its own problems would make the default look wrong too.
  const chosen = networks.length === file.networks.length ? checkDefault(file.default, networks, problems) : undefined;
  if (problems.length > 0 || !chosen) throw problemsError(problems);
  return { networks, default: chosen };
}

function problemsError(problems: string[]): ConfigError {
  return new ConfigError(`invalid NETWORKS_FILE:\n  ${[...new Set(problems)].join("\n  ")}`);
}

function substituteVariables(value: unknown, env: Record<string, string | undefined>, path: string, problems: string[]): unknown {
  if (typeof value === "string") {
    return value.replace(VARIABLE_REFERENCE, (_reference, name: string) => {
      const replacement = env[name];
      if (replacement === undefined || replacement === "") problems.push(`${path || "(top)"}: names \${${name}}, which is not set`);
      return replacement ?? "";
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => substituteVariables(item, env, `${path}[${index}]`, problems));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substituteVariables(item, env, path ? `${path}.${key}` : key, problems)]));
  }
  return value;
}

function schemaProblems(schema: TSchema, value: unknown, path: string): string[] {
  return [...Value.Errors(schema, value)].map((error) => {
    const place = path + error.path.split("/").slice(1).map((part) => (/^[0-9]+$/.test(part) ? `[${part}]` : `.${part}`)).join("");
    const where = place.replace(/^\./, "") || "(top)";
    return error.message === "Unexpected property" ? `${where}: unknown field` : `${where}: ${describe(error.path.split("/").pop() ?? "", error.message)}`;
  });
}

function describe(field: string, message: string): string {
  if (field === "name") return "must be 1 to 32 lower-case letters, digits and dashes, starting with a letter";
  if (field === "networks") return `must list 1 to ${MAX_NETWORKS} networks`;
  if (field === "rpcUrls") return "must list 1 to 16 endpoint URLs";
  return message.toLowerCase();
}

function checkNetwork(value: unknown, path: string, problems: string[]): NetworkSettings[] {
  const found = schemaProblems(NetworkSchema, value, path);
  if (found.length > 0) {
    problems.push(...found);
    return [];
  }
  const network = value as Record<string, unknown> & { name: string; chainId: number; rpcUrls: string[]; tokens: Record<string, unknown> };
  const named = `${path} (${network.name})`;
  problems.push(...rpcUrlProblems(network.rpcUrls).map((problem) => `${named}.rpcUrls: ${problem}`));
  const entries = Object.entries(network.tokens);
  if (entries.length === 0) problems.push(`${named}.tokens: names no token`);
  if (entries.length > MAX_TOKENS_PER_NETWORK) problems.push(`${named}.tokens: at most ${MAX_TOKENS_PER_NETWORK} tokens`);
  const tokens = entries.flatMap(([symbol, token]) => checkToken(symbol, token, `${named}.tokens.${symbol}`, problems));
  checkUnique(tokens.map((token) => token.address), "token address", problems, `${named}.tokens`);
  // A request may name a token in any case: USDC and usdc must not be two tokens.
  checkUnique(tokens.map((token) => token.symbol.toUpperCase()), "symbol (in any case)", problems, `${named}.tokens`);
  const settings = Object.fromEntries(NETWORK_SETTING_FIELDS.filter((field) => network[field] !== undefined).map((field) => [field, network[field]]));
  return [{ ...settings, name: network.name, chainId: network.chainId, rpcUrls: network.rpcUrls.map((url) => url.trim()), tokens }];
}

function checkToken(symbol: string, value: unknown, path: string, problems: string[]): TokenSettings[] {
  if (!SYMBOL_PATTERN.test(symbol)) {
    problems.push(`${path}: a symbol is 1 to 16 letters, digits, dots, dashes and underscores`);
    return [];
  }
  const token = typeof value === "string" ? { address: value } : value;
  const found = schemaProblems(TokenObjectSchema, token, path);
  if (found.length > 0) {
    problems.push(...(typeof value === "string" || (typeof value === "object" && value !== null) ? found : [`${path}: must be an address, "native", or { "address": ... }`]));
    return [];
  }
  const { address, ...limits } = token as { address: string } & Partial<Pick<Config, TokenSettingField>>;
  if (address === NATIVE) return [{ ...limits, symbol, address }];
  // A request's "native" names the native coin: a contract of that symbol could not be told from it.
  if (symbol.toLowerCase() === NATIVE) {
    problems.push(`${path}: the symbol "${symbol}" names the native coin in requests; give the contract another symbol`);
    return [];
  }
  try {
    return [{ ...limits, symbol, address: parseRecipientAddress(address) }];
  } catch (error) {
    if (!(error instanceof InvalidAddressError)) throw error;
    problems.push(`${path}: must be "native" or a token contract's address: ${error.message}`);
    return [];
  }
}

function checkUnique(values: string[], what: string, problems: string[], path = "networks"): void {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) problems.push(`${path}: two entries have the ${what} ${value}`);
    seen.add(value);
  }
}

/** The default names a network and one of its tokens; it may be left out where there is only one of each. */
function checkDefault(chosen: { network: string; token: string } | undefined, networks: NetworkSettings[], problems: string[]): NetworksSettings["default"] | undefined {
  if (!chosen) {
    const [only] = networks;
    if (networks.length === 1 && only.tokens.length === 1) return { network: only.name, token: only.tokens[0].symbol };
    problems.push(`default: required with several networks or tokens ({ "network": ..., "token": ... })`);
    return undefined;
  }
  const network = networks.find((candidate) => candidate.name === chosen.network);
  if (!network) {
    problems.push(`default.network: ${chosen.network} is not one of the networks' names`);
    return undefined;
  }
  if (!network.tokens.some((token) => token.symbol === chosen.token)) {
    problems.push(`default.token: ${chosen.token} is not one of ${network.name}'s tokens`);
    return undefined;
  }
  return chosen;
}
