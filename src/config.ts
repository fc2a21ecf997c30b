/** Service configuration: one TypeBox schema, loaded once from the environment and validated. */
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { parseEther } from "ethers";
import { ApiKeyRing, InvalidApiKeysError } from "./auth/api-keys.js";
import { InvalidKeyHoldersError, KeyHolders } from "./auth/key-holders.js";
import { InvalidWebhookSettingError, parseWebhookSecrets, parseWebhookUrls } from "./domain/webhook-settings.js";
import type { SignerSettings } from "./signers/create-signer.js";

// A signer variable may name several keys, comma-separated: each is a lane of a wallet pool.
const HEX_PRIVATE_KEYS = "^0x[0-9a-fA-F]{64}(\\s*,\\s*0x[0-9a-fA-F]{64})*$";
const HEX_ADDRESS = "^0x[0-9a-fA-F]{40}$";
const GWEI = "^[0-9]+(\\.[0-9]{1,9})?$";
const ETHER = "^[0-9]+(\\.[0-9]{1,18})?$";
// One JSON-RPC endpoint, or several comma-separated (providers of the same chain).
const RPC_URLS = "^https?://[^,\\s]+(\\s*,\\s*https?://[^,\\s]+)*$";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export const ConfigSchema = Type.Object({
  rpcUrl: Type.Optional(Type.String({ pattern: RPC_URLS, description: "JSON-RPC endpoint of the Ethereum node; several endpoints of one chain: comma-separated" })),
  rpcMaxLagBlocks: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 10_000,
      description: "with several RPC endpoints: one whose head is more than this many blocks behind the highest head is left out until it catches up; default by chain id",
    }),
  ),
  privateKey: Type.Optional(Type.String({ pattern: HEX_PRIVATE_KEYS, description: "hot wallet key, 0x and 64 hex digits; comma-separated keys make a wallet pool" })),
  keystorePath: Type.Optional(Type.String({ minLength: 1, description: "encrypted JSON keystore (v3) of the hot wallet; comma-separated paths make a pool" })),
  keystorePasswordFile: Type.Optional(Type.String({ minLength: 1, description: "file holding the keystore's password (one for all, or one per keystore)" })),
  awsKmsKeyId: Type.Optional(
    Type.String({ minLength: 1, description: "AWS KMS key (id, ARN or alias) of spec ECC_SECG_P256K1 that holds the hot wallet's key; comma-separated keys make a pool" }),
  ),
  pkcs11Module: Type.Optional(Type.String({ minLength: 1, description: "path of the HSM's PKCS#11 library" })),
  pkcs11TokenLabel: Type.Optional(Type.String({ minLength: 1, description: "label of the HSM token holding the key" })),
  pkcs11KeyLabel: Type.Optional(Type.String({ minLength: 1, description: "label of the key pair on that token; comma-separated labels make a pool" })),
  pkcs11PinFile: Type.Optional(Type.String({ minLength: 1, description: "file holding the token's user PIN" })),
  networksFile: Type.Optional(
    Type.String({ minLength: 1, description: "JSON file of the networks and tokens the service pays in (docs/networks.md); instead of RPC_URL, TOKEN_ADDRESS and CHAIN_ID" }),
  ),
  tokenAddress: Type.Optional(Type.String({ pattern: HEX_ADDRESS, description: "ERC-20 contract address" })),
  payoutContract: Type.Optional(
    Type.String({ pattern: HEX_ADDRESS, description: "the payout contract (contracts/PayoutBatch.sol) POST /payouts pays through, checked at startup; unset: no payouts" }),
  ),
  chainId: Type.Optional(Type.Integer({ minimum: 1, description: "expected chain id, checked against the node" })),
  port: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  host: Type.String({ minLength: 1, default: "127.0.0.1" }),
  logLevel: Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)), { default: "info" }),
  rpcTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  rpcMaxInFlight: Type.Integer({ minimum: 1, maximum: 10_000, default: 32, description: "most requests to the node at once; the rest wait their turn" }),
  rpcBatchMaxCalls: Type.Integer({ minimum: 1, maximum: 1000, default: 20, description: "most gas estimates, or raw transactions to one endpoint, made at the same moment sent in one JSON-RPC batch; 1: each alone" }),
  demoSetup: Type.Boolean({ default: false, description: "create a funded wallet and a demo token on an anvil node" }),
  devBlockTime: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: "local dev chain only: seconds between blocks (unset: a block per transaction)" })),
  journalPath: Type.String({ minLength: 1, default: "./data/transfers.sqlite", description: "SQLite journal of every transfer" }),
  journalSynchronous: Type.Union([Type.Literal("FULL"), Type.Literal("NORMAL")], { default: "FULL" }),
  journalRetentionDays: Type.Integer({
    minimum: 0,
    maximum: 36_500,
    default: 0,
    description: "settled, final transfers older than this many days move from the journal to the archive files; 0 keeps them forever",
  }),
  journalArchiveDir: Type.Optional(Type.String({ minLength: 1, description: "where retention writes its archive files; default: archive/ next to JOURNAL_PATH" })),
  auditKey: Type.Optional(
    Type.String({ minLength: 32, description: "a secret of at least 32 characters kept outside the database (AUDIT_KEY_FILE): every audit entry's hash is then an HMAC with it" }),
  ),
  auditHeadIntervalMs: Type.Integer({
    minimum: 0,
    maximum: 86_400_000,
    default: 600_000,
    description: "how often the leader publishes the audit log's head (its last entry and hash) outside the database: a log line, a metric and the webhook audit.head; 0: never",
  }),
  databaseUrl: Type.Optional(Type.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL journal shared by several replicas; JOURNAL_PATH is then unused" })),
  replicaId: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9._-]{1,64}$", description: "this replica's name in /wallet, /metrics and the logs; default: host name and process id" })),
  replicaUrl: Type.Optional(Type.String({ pattern: "^https?://", description: "how the other replicas reach this one; default: http://<host name>:<port>" })),
  idempotencyKeyTtlHours: Type.Number({ exclusiveMinimum: 0, maximum: 8760, default: 24 }),
  chainRefreshIntervalMs: Type.Integer({ minimum: 50, maximum: 60_000, default: 1000 }),
  outflowCheckIntervalMs: Type.Integer({
    minimum: 0,
    maximum: 3_600_000,
    default: 5000,
    description: "how often each network's wallets are checked for transactions and token transfers the service never made (4 x this while the service sends nothing); 0: never",
  }),
  pauseOnUnexpectedOutflow: Type.Boolean({
    default: false,
    description: "stop signing (new transfers answered 503 SIGNING_PAUSED) when an unexpected outflow is seen, until an admin resumes with POST /wallet/resume",
  }),
  resumeNeedsSecondAdmin: Type.Boolean({
    default: false,
    description: "a pause of signing ends only when a second admin, another person (API_KEY_HOLDERS), confirms the first's POST /wallet/resume within an hour",
  }),
  rebroadcastAfterMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 15_000, description: "unmined this long, a sent transaction is checked and sent again if the node lost it" }),
  feeTipPercentile: Type.Integer({ minimum: 0, maximum: 100, default: 50, description: "which percentile of recent blocks' tips to offer" }),
  minPriorityFeePerGas: Type.String({ pattern: GWEI, default: "0.001", description: "the least tip offered, gwei" }),
  maxFeePerGas: Type.Optional(Type.String({ pattern: GWEI, description: "cap on maxFeePerGas, gwei" })),
  maxPriorityFeePerGas: Type.Optional(Type.String({ pattern: GWEI, description: "cap on maxPriorityFeePerGas, gwei" })),
  finalityBlocks: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100_000, description: "blocks below the head at which a transfer is final, where the node has no finalized tag (only on chains finalized-block.ts does not name, and only once the node said so repeatedly); default 64" }),
  ),
  maxInFlightPerLane: Type.Integer({
    minimum: 1,
    maximum: 4096,
    default: 16,
    description: "at most this many of a wallet's (a pool lane's) transactions pending at the node; twice as many transfers taken at once (geth keeps 16 executable per sender for sure)",
  }),
  transferSlotWaitMs: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 10_000,
    description: "how long a new transfer waits for room in a full wallet (every lane of a pool) before it is answered 503 NO_LANE_AVAILABLE; a signed transfer waits as long for room at the node",
  }),
  gasTopUpFrom: Type.Optional(Type.String({ pattern: HEX_ADDRESS, description: "the pool's wallet that sends ETH for gas to the lanes that run low (GAS_TOPUP_BELOW, GAS_TOPUP_TO)" })),
  gasTopUpBelow: Type.Optional(Type.String({ pattern: ETHER, description: "a lane whose ETH balance falls below this (ether) is topped up" })),
  gasTopUpTo: Type.Optional(Type.String({ pattern: ETHER, description: "to this ETH balance (ether); more than GAS_TOPUP_BELOW" })),
  feeBudgetPerDay: Type.Optional(
    Type.String({ pattern: ETHER, description: "the network's wallets' fees in 24 hours (ether of its coin) above which the metric wallet_fee_budget_spent_ratio reaches 1 and FeeBudgetSpent pages" }),
  ),
  stuckAfterBlocks: Type.Integer({ minimum: 1, maximum: 10_000, default: 3, description: "blocks a transfer waits unmined before an underpriced one is re-priced" }),
  repriceUnminedAfterMs: Type.Integer({
    minimum: 100,
    maximum: 86_400_000,
    default: 60_000,
    description: "the wallet's next transaction, unmined at a fair price while the chain makes blocks without it, is re-priced after this long (and STUCK_AFTER_BLOCKS blocks) whatever any node says of it, at most 3 times",
  }),
  gasLimitMultiplier: Type.String({ pattern: "^[0-9]+(\\.[0-9]{1,4})?$", default: "1.0", description: "gas limit = eth_estimateGas x this (at least 1)" }),
  headMaxAgeMs: Type.Integer({ minimum: 0, maximum: 60_000, default: 500, description: "oldest chain head a lookup may use" }),
  transactionCacheSize: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 10_000 }),
  apiKeys: Type.Optional(Type.String({ description: "comma-separated API keys, plain or sha256:<hex>" })),
  apiKeyHolders: Type.Optional(
    Type.String({ description: "who holds each API key, comma-separated <key id>=<holder>: the keys of one holder count as one person for two-person approval and a second admin's resume" }),
  ),
  authDisabled: Type.Boolean({ default: false }),
  rateLimitMax: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 600, description: "requests per key per window" }),
  rateLimitWindowMs: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 60_000 }),
  trustProxy: Type.Optional(
    Type.String({
      pattern: "^(true|false|[0-9]+|[0-9a-fA-F.:/]+(,[0-9a-fA-F.:/]+)*)$",
      description: "which proxies' X-Forwarded-For to believe: true, a hop count, or comma-separated addresses/CIDRs",
    }),
  ),
  maxTransferAmount: Type.Optional(Type.String({ pattern: "^[0-9]+(\\.[0-9]+)?$", description: "largest amount of one transfer, in token units" })),
  transferCapPerDay: Type.Optional(Type.String({ pattern: "^[0-9]+(\\.[0-9]+)?$", description: "most one API key may send in 24 h, in token units" })),
  approvalAbove: Type.Optional(
    Type.String({ pattern: "^[0-9]+(\\.[0-9]+)?$", description: "a transfer or payout above this many token units waits (202) until another admin key approves it" }),
  ),
  approvalAbovePerDay: Type.Optional(
    Type.String({ pattern: "^[0-9]+(\\.[0-9]+)?$", description: "a transfer or payout that takes its API key's holder's last 24 hours (API_KEY_HOLDERS: all their keys) past this many token units waits (202) for an admin's approval too" }),
  ),
  addressBook: Type.Boolean({
    default: false,
    description: "transfers and payouts to a recipient not in the address book (POST /address-book) wait (202) for an admin's approval",
  }),
  addressBookCoolingOffHours: Type.Number({
    minimum: 0,
    maximum: 720,
    default: 24,
    description: "hours after it was added before an address book entry pays without approval",
  }),
  approvalTtlHours: Type.Number({ exclusiveMinimum: 0, maximum: 720, default: 24, description: "how long a transfer waits for its approval before it expires (never sent)" }),
  allowedRecipients: Type.Optional(Type.String({ description: "comma-separated addresses; when set, the only recipients allowed" })),
  webhookUrl: Type.Optional(Type.String({ description: "comma-separated http(s) URLs that receive transfer events" })),
  webhookSecret: Type.Optional(Type.String({ description: "Standard Webhooks secrets (whsec_...), comma-separated; every event is signed with each" })),
  webhookConfirmations: Type.Integer({ minimum: 1, maximum: 1000, default: 1, description: "confirmations at which transfer.confirmed is sent" }),
  webhookRetryInitialMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 5_000, description: "first retry delay of a failed delivery; doubles each time" }),
  testFaultPoint: Type.Optional(Type.Union([Type.Literal("after-sign"), Type.Literal("after-broadcast"), Type.Literal("after-replacement-sign")])),
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
export const ENVIRONMENT_VARIABLES: Record<keyof Config, string> = {
  rpcUrl: "RPC_URL",
  privateKey: "PRIVATE_KEY",
  keystorePath: "KEYSTORE_PATH",
  keystorePasswordFile: "KEYSTORE_PASSWORD_FILE",
  awsKmsKeyId: "AWS_KMS_KEY_ID",
  pkcs11Module: "PKCS11_MODULE",
  pkcs11TokenLabel: "PKCS11_TOKEN_LABEL",
  pkcs11KeyLabel: "PKCS11_KEY_LABEL",
  pkcs11PinFile: "PKCS11_PIN_FILE",
  networksFile: "NETWORKS_FILE",
  tokenAddress: "TOKEN_ADDRESS",
  payoutContract: "PAYOUT_CONTRACT",
  chainId: "CHAIN_ID",
  port: "PORT",
  host: "HOST",
  logLevel: "LOG_LEVEL",
  rpcTimeoutMs: "RPC_TIMEOUT_MS",
  rpcMaxInFlight: "RPC_MAX_IN_FLIGHT",
  rpcBatchMaxCalls: "RPC_BATCH_MAX_CALLS",
  rpcMaxLagBlocks: "RPC_MAX_LAG_BLOCKS",
  demoSetup: "DEMO_SETUP",
  devBlockTime: "DEV_BLOCK_TIME",
  journalPath: "JOURNAL_PATH",
  journalSynchronous: "JOURNAL_SYNCHRONOUS",
  journalRetentionDays: "JOURNAL_RETENTION_DAYS",
  journalArchiveDir: "JOURNAL_ARCHIVE_DIR",
  auditKey: "AUDIT_KEY",
  auditHeadIntervalMs: "AUDIT_HEAD_INTERVAL_MS",
  databaseUrl: "DATABASE_URL",
  replicaId: "REPLICA_ID",
  replicaUrl: "REPLICA_URL",
  idempotencyKeyTtlHours: "IDEMPOTENCY_KEY_TTL_HOURS",
  chainRefreshIntervalMs: "CHAIN_REFRESH_INTERVAL_MS",
  outflowCheckIntervalMs: "OUTFLOW_CHECK_INTERVAL_MS",
  pauseOnUnexpectedOutflow: "PAUSE_ON_UNEXPECTED_OUTFLOW",
  resumeNeedsSecondAdmin: "RESUME_NEEDS_SECOND_ADMIN",
  rebroadcastAfterMs: "REBROADCAST_AFTER_MS",
  feeTipPercentile: "FEE_TIP_PERCENTILE",
  minPriorityFeePerGas: "MIN_PRIORITY_FEE_PER_GAS",
  maxFeePerGas: "MAX_FEE_PER_GAS",
  maxPriorityFeePerGas: "MAX_PRIORITY_FEE_PER_GAS",
  gasLimitMultiplier: "GAS_LIMIT_MULTIPLIER",
  stuckAfterBlocks: "STUCK_AFTER_BLOCKS",
  repriceUnminedAfterMs: "REPRICE_UNMINED_AFTER_MS",
  maxInFlightPerLane: "MAX_IN_FLIGHT_PER_LANE",
  transferSlotWaitMs: "TRANSFER_SLOT_WAIT_MS",
  gasTopUpFrom: "GAS_TOPUP_FROM",
  gasTopUpBelow: "GAS_TOPUP_BELOW",
  gasTopUpTo: "GAS_TOPUP_TO",
  feeBudgetPerDay: "FEE_BUDGET_PER_DAY",
  finalityBlocks: "FINALITY_BLOCKS",
  webhookUrl: "WEBHOOK_URL",
  webhookSecret: "WEBHOOK_SECRET",
  webhookConfirmations: "WEBHOOK_CONFIRMATIONS",
  webhookRetryInitialMs: "WEBHOOK_RETRY_INITIAL_MS",
  headMaxAgeMs: "HEAD_MAX_AGE_MS",
  transactionCacheSize: "TRANSACTION_CACHE_SIZE",
  apiKeys: "API_KEYS",
  apiKeyHolders: "API_KEY_HOLDERS",
  authDisabled: "AUTH_DISABLED",
  rateLimitMax: "RATE_LIMIT_MAX",
  rateLimitWindowMs: "RATE_LIMIT_WINDOW_MS",
  trustProxy: "TRUST_PROXY",
  maxTransferAmount: "MAX_TRANSFER_AMOUNT",
  transferCapPerDay: "TRANSFER_CAP_PER_DAY",
  approvalAbove: "APPROVAL_ABOVE",
  approvalAbovePerDay: "APPROVAL_ABOVE_PER_DAY",
  addressBook: "ADDRESS_BOOK",
  addressBookCoolingOffHours: "ADDRESS_BOOK_COOLING_OFF_HOURS",
  approvalTtlHours: "APPROVAL_TTL_HOURS",
  allowedRecipients: "ALLOWED_RECIPIENTS",
  testFaultPoint: "TEST_FAULT_POINT",
};

const INTEGER_FIELDS: (keyof Config)[] = [
  "chainId",
  "journalRetentionDays",
  "auditHeadIntervalMs",
  "devBlockTime",
  "stuckAfterBlocks",
  "repriceUnminedAfterMs",
  "maxInFlightPerLane",
  "transferSlotWaitMs",
  "finalityBlocks",
  "webhookConfirmations",
  "webhookRetryInitialMs",
  "port",
  "rpcTimeoutMs",
  "rpcMaxInFlight",
  "rpcBatchMaxCalls",
  "rpcMaxLagBlocks",
  "chainRefreshIntervalMs",
  "outflowCheckIntervalMs",
  "rebroadcastAfterMs",
  "headMaxAgeMs",
  "feeTipPercentile",
  "transactionCacheSize",
  "rateLimitMax",
  "rateLimitWindowMs",
];

// Settings that hold a secret: the audit log says only that they are set (API_KEYS: how many keys of each role).
const SECRET_SETTINGS: ReadonlySet<keyof Config> = new Set(["privateKey", "webhookSecret", "auditKey"]);
// Settings that are URLs, whose path, query or user part can carry a key: the audit log keeps their hosts.
const URL_SETTINGS: ReadonlySet<keyof Config> = new Set(["rpcUrl", "webhookUrl", "databaseUrl", "replicaUrl"]);

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
    else if (URL_SETTINGS.has(field)) settings[variable] = hostsOf(String(value), LISTS_OF_URLS.has(field));
    else if (field === "apiKeys") settings[variable] = ApiKeyRing.parse(String(value)).described.join(", ");
    else settings[variable] = value as string | number | boolean;
  }
  return settings;
}

// The URL settings that may name several, comma-separated (their patterns keep a comma out of one URL).
const LISTS_OF_URLS: ReadonlySet<keyof Config> = new Set(["rpcUrl", "webhookUrl"]);

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

/** Raised when the environment does not describe a usable configuration; the message names every bad variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
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
  // TypeBox would turn "1.5" into 1; whole-number variables must be written as whole numbers.
  const problems: string[] = [];
  for (const field of INTEGER_FIELDS) {
    if (field in raw && !/^[0-9]+$/.test(String(raw[field]))) {
      problems.push(`${ENVIRONMENT_VARIABLES[field]}: must be a whole number`);
      delete raw[field];
    }
  }
  // A variable that is missing is reported even when others are malformed, so one run lists every fix.
  checkSignerLists(raw, problems);
  // On the dev chain a signer is optional (one is created), but one that is set must be complete: it is used.
  const signerChosen = SIGNER_VARIABLES.some(({ fields }) => fields.some((field) => raw[field] !== undefined));
  // A real chain: RPC_URL (not an anvil to set up) or the networks of NETWORKS_FILE.
  const realChain = (raw.rpcUrl && raw.demoSetup !== "true") || raw.networksFile;
  if (signerChosen || realChain) checkSignerSelection(raw, problems);
  if (raw.rpcUrl && raw.demoSetup !== "true" && !raw.tokenAddress) problems.push("TOKEN_ADDRESS: required when RPC_URL is set");
  checkNetworksFileAlone(raw, problems);
  if (realChain && !raw.apiKeys && raw.authDisabled !== "true") {
    problems.push("API_KEYS: required (comma-separated keys, or sha256:<hex> of keys); or set AUTH_DISABLED=true to run without");
  }
  if (typeof raw.apiKeys === "string") {
    try {
      const ring = ApiKeyRing.parse(raw.apiKeys);
      if (typeof raw.apiKeyHolders === "string") KeyHolders.parse(raw.apiKeyHolders, ring.ids);
    } catch (error) {
      if (error instanceof InvalidKeyHoldersError) problems.push(`API_KEY_HOLDERS: ${error.message}`);
      else if (error instanceof InvalidApiKeysError) problems.push(`API_KEYS: ${error.message}`);
      else throw error;
    }
  } else if (raw.apiKeyHolders !== undefined) {
    problems.push("API_KEY_HOLDERS: names the holders of API_KEYS's keys, which is not set");
  }
  checkWebhookSettings(raw, problems);
  checkApprovalSettings(raw, problems);
  if (raw.resumeNeedsSecondAdmin === "true") {
    const problem = secondAdminProblem(raw);
    if (problem) problems.push(`RESUME_NEEDS_SECOND_ADMIN: ${problem}`);
  }
  if (raw.pauseOnUnexpectedOutflow === "true" && raw.outflowCheckIntervalMs === "0") {
    problems.push("PAUSE_ON_UNEXPECTED_OUTFLOW: needs the outflow watch, which OUTFLOW_CHECK_INTERVAL_MS=0 turns off");
  }
  checkGasTopUpSettings(raw, problems);
  checkRetention(raw, problems);
  if (typeof raw.gasLimitMultiplier === "string" && Number(raw.gasLimitMultiplier) < 1) {
    problems.push("GAS_LIMIT_MULTIPLIER: must be at least 1 (below the estimate a transfer runs out of gas)");
  }
  if (typeof raw.rpcUrl === "string" && new RegExp(RPC_URLS).test(raw.rpcUrl)) {
    problems.push(...rpcUrlProblems(rpcEndpointUrls(raw.rpcUrl)).map((problem) => `RPC_URL: ${problem}`));
  }
  if (raw.devBlockTime !== undefined && raw.rpcUrl) {
    problems.push("DEV_BLOCK_TIME: only for the local dev chain started when RPC_URL is unset");
  }
  if (raw.demoSetup === "true" && !raw.rpcUrl) {
    problems.push("DEMO_SETUP: needs RPC_URL of an anvil node (without RPC_URL a local one is started anyway)");
  }
  const candidate = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, raw));
  problems.push(...[...Value.Errors(ConfigSchema, candidate)].map((error) => {
    const field = error.path.split("/")[1] as keyof Config;
    return `${ENVIRONMENT_VARIABLES[field]}: ${describeExpectation(field, error.message)}`;
  }));
  if (problems.length > 0) {
    throw new ConfigError(`invalid configuration:\n  ${[...new Set(problems)].join("\n  ")}`);
  }
  return candidate as Config;
}

/** RPC_URL's endpoints, in the order given (the first is preferred for reads while it is healthy). */
export function rpcEndpointUrls(rpcUrl: string): string[] {
  return rpcUrl.split(",").map((url) => url.trim()).filter(Boolean);
}

/** What is wrong with a list of endpoint URLs, each named by its position: its URL may hold a provider's key. */
export function rpcUrlProblems(urls: readonly string[]): string[] {
  return urls.flatMap((url, index) => {
    if (!/^https?:\/\/[^,\s]+$/.test(url.trim()) || !URL.canParse(url.trim())) return [`endpoint ${index + 1} is not a valid http:// or https:// URL`];
    if (urls.indexOf(url) !== index) return [`endpoint ${index + 1} repeats endpoint ${urls.indexOf(url) + 1}`];
    return [];
  });
}

/** NETWORKS_FILE describes every network: variables that describe one would leave in doubt which is meant. */
function checkNetworksFileAlone(raw: Record<string, unknown>, problems: string[]): void {
  if (!raw.networksFile) return;
  const oneNetwork = (["rpcUrl", "tokenAddress", "chainId", "demoSetup", "devBlockTime"] as const).filter((field) => raw[field] !== undefined);
  if (oneNetwork.length > 0) {
    problems.push(`NETWORKS_FILE: give the networks in the file only; unset ${oneNetwork.map((field) => ENVIRONMENT_VARIABLES[field]).join(", ")}`);
  }
}

/** The variables that select each signer; exactly one signer may be selected. */
const SIGNER_VARIABLES = [
  { kind: "PRIVATE_KEY", fields: ["privateKey"] },
  { kind: "KEYSTORE_PATH", fields: ["keystorePath", "keystorePasswordFile"] },
  { kind: "AWS_KMS_KEY_ID", fields: ["awsKmsKeyId"] },
  { kind: "PKCS11_MODULE", fields: ["pkcs11Module", "pkcs11TokenLabel", "pkcs11KeyLabel", "pkcs11PinFile"] },
] as const satisfies { kind: string; fields: (keyof Config)[] }[];

function checkSignerSelection(raw: Record<string, unknown>, problems: string[]): void {
  const selected = SIGNER_VARIABLES.filter(({ fields }) => fields.some((field) => raw[field] !== undefined));
  if (selected.length === 0) {
    problems.push("PRIVATE_KEY: required when RPC_URL or NETWORKS_FILE is set, unless the key is elsewhere: KEYSTORE_PATH, AWS_KMS_KEY_ID or PKCS11_MODULE (see docs/signers.md)");
    return;
  }
  if (selected.length > 1) {
    problems.push(`${selected.map(({ kind }) => kind).join(", ")}: each selects the wallet's signer; set exactly one`);
    return;
  }
  for (const field of selected[0].fields) {
    if (raw[field] === undefined) problems.push(`${ENVIRONMENT_VARIABLES[field]}: required with ${selected[0].kind}`);
  }
}

/** The configuration of a service on a known node, token and signer; ConfigError when one is missing. */
export function chainConfigOf(config: Config): ChainConfig {
  const signers = signerSettingsOf(config);
  if (!config.rpcUrl || !signers || !config.tokenAddress) {
    throw new ConfigError("RPC_URL, a signer (PRIVATE_KEY, KEYSTORE_PATH, AWS_KMS_KEY_ID or PKCS11_MODULE) and TOKEN_ADDRESS: required");
  }
  return { ...config, rpcUrl: config.rpcUrl, tokenAddress: config.tokenAddress, signers };
}

/**
 * The signers the configuration selects, one per lane (a list variable names several keys of one kind);
 * undefined when none is (a dev chain brings its own key).
 */
export function signerSettingsOf(config: Config): SignerSettings[] | undefined {
  if (config.privateKey) return listOf(config.privateKey).map((privateKey) => ({ kind: "private-key", privateKey }));
  if (config.keystorePath && config.keystorePasswordFile) {
    const passwordFiles = listOf(config.keystorePasswordFile);
    return listOf(config.keystorePath).map((keystorePath, index) => ({ kind: "keystore", keystorePath, passwordFile: passwordFiles[passwordFiles.length === 1 ? 0 : index] }));
  }
  if (config.awsKmsKeyId) return listOf(config.awsKmsKeyId).map((keyId) => ({ kind: "aws-kms", keyId }));
  const { pkcs11Module, pkcs11TokenLabel, pkcs11KeyLabel, pkcs11PinFile } = config;
  if (pkcs11Module && pkcs11TokenLabel && pkcs11KeyLabel && pkcs11PinFile) {
    return listOf(pkcs11KeyLabel).map((keyLabel) => ({ kind: "pkcs11", modulePath: pkcs11Module, tokenLabel: pkcs11TokenLabel, keyLabel, pinFile: pkcs11PinFile }));
  }
  return undefined;
}

function listOf(value: string): string[] {
  return value.split(",").map((entry) => entry.trim());
}

/** Each lane needs a key of its own, and a keystore list its passwords: one for all, or one each. */
function checkSignerLists(raw: Record<string, unknown>, problems: string[]): void {
  for (const field of ["privateKey", "keystorePath", "awsKmsKeyId", "pkcs11KeyLabel"] as const) {
    if (typeof raw[field] !== "string") continue;
    const entries = listOf(raw[field]);
    if (entries.some((entry) => entry === "")) problems.push(`${ENVIRONMENT_VARIABLES[field]}: an empty entry in the comma-separated list`);
    // Compared without case: the same private key in upper and lower case is one wallet.
    if (new Set(entries.map((entry) => entry.toLowerCase())).size < entries.length) {
      problems.push(`${ENVIRONMENT_VARIABLES[field]}: the same key is listed twice; each lane of a pool needs a key of its own`);
    }
  }
  if (typeof raw.keystorePath === "string" && typeof raw.keystorePasswordFile === "string") {
    const keystores = listOf(raw.keystorePath).length;
    const passwords = listOf(raw.keystorePasswordFile).length;
    if (passwords !== 1 && passwords !== keystores) {
      problems.push(`KEYSTORE_PASSWORD_FILE: ${passwords} files for ${keystores} keystores; give one for all, or one per keystore in the same order`);
    }
  }
}

/**
 * APPROVAL_ABOVE needs an admin key to approve with, one that is not the key that asked: without API keys
 * (AUTH_DISABLED) every request is the same caller, who could never approve its own transfer.
 */
function checkApprovalSettings(raw: Record<string, unknown>, problems: string[]): void {
  for (const [variable, value] of [["APPROVAL_ABOVE", raw.approvalAbove], ["APPROVAL_ABOVE_PER_DAY", raw.approvalAbovePerDay], ["ADDRESS_BOOK", raw.addressBook === "true" ? "true" : undefined]] as const) {
    if (value === undefined) continue;
    const problem = approvalKeysProblem({ apiKeys: typeof raw.apiKeys === "string" ? raw.apiKeys : undefined, authDisabled: raw.authDisabled === "true" });
    if (problem) problems.push(`${variable}: ${problem}`);
  }
}

/** Why no transfer that waits for approval could ever be approved with these keys; undefined when one can (keys generated for a dev run are an admin's). */
// Two admins of two people, or a pause could never end.
function secondAdminProblem(raw: Record<string, unknown>): string | undefined {
  if (raw.authDisabled === "true") return "needs API keys (with AUTH_DISABLED=true every request is the same caller)";
  if (typeof raw.apiKeys !== "string") return "needs API_KEYS with admin keys of two people";
  try {
    const ring = ApiKeyRing.parse(raw.apiKeys);
    const holders = KeyHolders.parse(typeof raw.apiKeyHolders === "string" ? raw.apiKeyHolders : undefined, ring.ids);
    const people = new Set(ring.keys.filter((key) => key.role === "admin").map((key) => holders.personOf(key.id)));
    return people.size >= 2 ? undefined : "needs admin keys of two people in API_KEYS (and API_KEY_HOLDERS): a pause could never end";
  } catch {
    // API_KEYS or API_KEY_HOLDERS is malformed: said for that variable.
    return undefined;
  }
}

export function approvalKeysProblem(keys: { apiKeys: string | undefined; authDisabled: boolean }): string | undefined {
  if (keys.authDisabled) return "needs API keys (with AUTH_DISABLED=true every request is the same caller, who may not approve its own transfer)";
  if (keys.apiKeys === undefined) return undefined;
  const admins = keys.apiKeys.split(",").filter((entry) => entry.trim().startsWith("admin:"));
  return admins.length === 0 ? "API_KEYS needs an admin key to approve transfers with (admin:<key>; two, for transfers an admin key asks for)" : undefined;
}

function checkWebhookSettings(raw: Record<string, unknown>, problems: string[]): void {
  const check = (variable: string, value: unknown, parse: (value: string) => unknown) => {
    if (typeof value !== "string") return;
    try {
      parse(value);
    } catch (error) {
      if (!(error instanceof InvalidWebhookSettingError)) throw error;
      problems.push(`${variable}: ${error.message}`);
    }
  };
  check("WEBHOOK_URL", raw.webhookUrl, parseWebhookUrls);
  check("WEBHOOK_SECRET", raw.webhookSecret, parseWebhookSecrets);
  if (raw.webhookUrl && !raw.webhookSecret) problems.push("WEBHOOK_SECRET: required when WEBHOOK_URL is set (whsec_ + base64 of random bytes)");
}

/**
 * Retention keeps a transfer at least as long as its Idempotency-Key (a repeat must find its first answer)
 * and a day (the per-key daily cap counts the last 24 h).
 */
function checkRetention(raw: Record<string, unknown>, problems: string[]): void {
  if (typeof raw.journalRetentionDays !== "string" || !/^[0-9]+$/.test(raw.journalRetentionDays)) return;
  const days = Number(raw.journalRetentionDays);
  if (days === 0) return;
  const keyTtlHours = typeof raw.idempotencyKeyTtlHours === "string" ? Number(raw.idempotencyKeyTtlHours) : 24;
  if (days * 24 < keyTtlHours) {
    problems.push(`JOURNAL_RETENTION_DAYS: ${days} days is shorter than IDEMPOTENCY_KEY_TTL_HOURS (${keyTtlHours} h): a repeat of a key must still find its transfer`);
  }
}

/** Gas top-up is all three variables or none, and tops a lane up to more than the level that triggers it. */
function checkGasTopUpSettings(raw: Record<string, unknown>, problems: string[]): void {
  const fields = ["gasTopUpFrom", "gasTopUpBelow", "gasTopUpTo"] as const;
  const set = fields.filter((field) => raw[field] !== undefined);
  if (set.length === 0) return;
  for (const field of fields) {
    if (raw[field] === undefined) problems.push(`${ENVIRONMENT_VARIABLES[field]}: required with ${set.map((given) => ENVIRONMENT_VARIABLES[given]).join(" and ")} (gas top-up takes all three)`);
  }
  const below = etherOf(raw.gasTopUpBelow);
  const to = etherOf(raw.gasTopUpTo);
  if (below !== undefined && to !== undefined && to <= below) problems.push("GAS_TOPUP_TO: must be more than GAS_TOPUP_BELOW (a top-up raises the balance above the level that triggers it)");
}

/** A decimal ether amount in wei; undefined when it is not one (the schema reports that). */
function etherOf(value: unknown): bigint | undefined {
  return typeof value === "string" && new RegExp(ETHER).test(value) ? parseEther(value) : undefined;
}

function describeExpectation(field: keyof Config, schemaMessage: string): string {
  switch (field) {
    case "privateKey":
      return "must be 0x followed by 64 hex digits (several keys: comma-separated)";
    case "tokenAddress":
      return "must be 0x followed by 40 hex digits";
    case "rpcUrl":
      return "must be an http:// or https:// URL, or several separated by commas";
    case "logLevel":
      return `must be one of ${LOG_LEVELS.join(", ")}`;
    case "demoSetup":
    case "authDisabled":
    case "pauseOnUnexpectedOutflow":
    case "resumeNeedsSecondAdmin":
    case "addressBook":
      return "must be true or false";
    case "maxTransferAmount":
    case "transferCapPerDay":
    case "approvalAbove":
    case "approvalAbovePerDay":
      return "must be a plain decimal number of tokens, such as 1000 or 2.5";
    case "minPriorityFeePerGas":
    case "maxFeePerGas":
    case "maxPriorityFeePerGas":
      return "must be a plain decimal number of gwei, such as 30 or 0.5";
    case "gasLimitMultiplier":
      return "must be a plain decimal number such as 1.2";
    case "gasTopUpFrom":
      return "must be the address (0x and 40 hex digits) of one of the pool's wallets";
    case "gasTopUpBelow":
    case "gasTopUpTo":
    case "feeBudgetPerDay":
      return "must be a plain decimal number of ether, such as 0.05";
    case "trustProxy":
      return "must be true, false, a number of proxy hops, or comma-separated addresses or CIDR ranges";
    case "journalSynchronous":
      return "must be FULL or NORMAL";
    case "testFaultPoint":
      return "must be after-sign, after-broadcast or after-replacement-sign (tests only)";
    default:
      return schemaMessage.toLowerCase();
  }
}
