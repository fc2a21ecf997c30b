import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ENVIRONMENT_VARIABLES, loadConfig, settingsForAudit } from "../src/config.js";
import { rpcEndpointUrls } from "../src/node/settings.js";
import { ConfigError } from "../src/settings/settings-part.js";
import { signerSettingsOf } from "../src/signers/settings.js";

const KEY = `0x${"11".repeat(32)}`;
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const API_KEY = "a-long-enough-api-key";
const DEFAULTS = {
  port: 3000,
  host: "127.0.0.1",
  logLevel: "info",
  rpcTimeoutMs: 10_000,
  rpcMaxInFlight: 32,
  rpcBatchMaxCalls: 20,
  demoSetup: false,
  journalPath: "./data/transfers.sqlite",
  journalSynchronous: "FULL",
  journalRetentionDays: 0,
  auditHeadIntervalMs: 600_000,
  idempotencyKeyTtlHours: 24,
  approvalTtlHours: 24,
  chainRefreshIntervalMs: 1000,
  rebroadcastAfterMs: 15_000,
  headMaxAgeMs: 500,
  feeTipPercentile: 50,
  minPriorityFeePerGas: "0.001",
  outflowCheckIntervalMs: 5000,
  pauseOnUnexpectedOutflow: false,
  resumeNeedsSecondAdmin: false,
  addressBook: false,
  addressBookCoolingOffHours: 24,
  gasLimitMultiplier: "1.0",
  stuckAfterBlocks: 3,
  repriceUnminedAfterMs: 60_000,
  maxInFlightPerLane: 16,
  transferSlotWaitMs: 10_000,
  webhookConfirmations: 1,
  webhookRetryInitialMs: 5_000,
  transactionCacheSize: 10_000,
  authDisabled: false,
  rateLimitMax: 600,
  rateLimitWindowMs: 60_000,
};

describe("loadConfig", () => {
  it("reads the fee policy and refuses a gas limit multiplier below 1 or fees that are not gwei decimals", () => {
    expect(loadConfig({ MAX_FEE_PER_GAS: "30", MAX_PRIORITY_FEE_PER_GAS: "1.5", FEE_TIP_PERCENTILE: "60", MIN_PRIORITY_FEE_PER_GAS: "0.01", GAS_LIMIT_MULTIPLIER: "1.2" })).toMatchObject({
      maxFeePerGas: "30",
      maxPriorityFeePerGas: "1.5",
      feeTipPercentile: 60,
      minPriorityFeePerGas: "0.01",
      gasLimitMultiplier: "1.2",
    });
    expect(() => loadConfig({ GAS_LIMIT_MULTIPLIER: "0.9" })).toThrow(/GAS_LIMIT_MULTIPLIER: must be at least 1/);
    expect(() => loadConfig({ MAX_FEE_PER_GAS: "30 gwei" })).toThrow(/MAX_FEE_PER_GAS: must be a plain decimal number of gwei/);
    expect(() => loadConfig({ FEE_TIP_PERCENTILE: "101" })).toThrow(/FEE_TIP_PERCENTILE/);
  });

  it("reads the webhook settings, and refuses malformed ones naming the variable (never echoing a secret)", () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    expect(loadConfig({ WEBHOOK_URL: "https://a.example/hook, http://b.example:8080/x", WEBHOOK_SECRET: secret, WEBHOOK_CONFIRMATIONS: "3" })).toMatchObject({
      webhookUrl: "https://a.example/hook, http://b.example:8080/x",
      webhookSecret: secret,
      webhookConfirmations: 3,
    });
    expect(() => loadConfig({ WEBHOOK_URL: "ftp://a.example", WEBHOOK_SECRET: secret })).toThrow(/WEBHOOK_URL: URL 1 must be http:\/\/ or https:\/\//);
    expect(() => loadConfig({ WEBHOOK_URL: "https://user:pw@a.example" , WEBHOOK_SECRET: secret })).toThrow(/WEBHOOK_URL: URL 1 must not carry credentials/);
    expect(() => loadConfig({ WEBHOOK_URL: "https://a.example" })).toThrow(/WEBHOOK_SECRET: required when WEBHOOK_URL is set/);
    expect(() => loadConfig({ WEBHOOK_URL: "https://a.example", WEBHOOK_SECRET: "not-a-secret" })).toThrow(/WEBHOOK_SECRET: secret 1 must be whsec_/);
    // Too short a key: refused, and the message names the variable but never quotes the secret.
    const tooShort = (() => {
      try {
        loadConfig({ WEBHOOK_URL: "https://a.example", WEBHOOK_SECRET: "whsec_c2hvcnQ=" });
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(tooShort).toMatch(/WEBHOOK_SECRET: secret 1 must be whsec_/);
    expect(tooShort).not.toContain("c2hvcnQ");
    expect(() => loadConfig({ WEBHOOK_CONFIRMATIONS: "0" })).toThrow(/WEBHOOK_CONFIRMATIONS/);
  });

  it("reads RPC_MAX_IN_FLIGHT and FINALITY_BLOCKS, and refuses zero", () => {
    expect(loadConfig({ RPC_MAX_IN_FLIGHT: "8", FINALITY_BLOCKS: "12" })).toMatchObject({ rpcMaxInFlight: 8, finalityBlocks: 12 });
    expect(() => loadConfig({ RPC_MAX_IN_FLIGHT: "0" })).toThrow(/RPC_MAX_IN_FLIGHT/);
    expect(() => loadConfig({ FINALITY_BLOCKS: "0" })).toThrow(/FINALITY_BLOCKS/);
  });

  it("reads several RPC endpoints, comma-separated, in their order, and RPC_MAX_LAG_BLOCKS", () => {
    const config = loadConfig({ RPC_URL: "https://a.example/v3/key1 , http://127.0.0.1:8545", RPC_MAX_LAG_BLOCKS: "10", PRIVATE_KEY: KEY, TOKEN_ADDRESS: TOKEN, API_KEYS: API_KEY });
    expect(rpcEndpointUrls(config.rpcUrl ?? "")).toEqual(["https://a.example/v3/key1", "http://127.0.0.1:8545"]);
    expect(config.rpcMaxLagBlocks).toBe(10);
    expect(() => loadConfig({ RPC_MAX_LAG_BLOCKS: "0" })).toThrow(/RPC_MAX_LAG_BLOCKS/);
  });

  it("refuses an endpoint given twice, or a list with a non-URL, naming the position and never the URL", () => {
    const twice = () => loadConfig({ RPC_URL: "https://a.example/v3/secret,https://a.example/v3/secret", PRIVATE_KEY: KEY, TOKEN_ADDRESS: TOKEN, API_KEYS: API_KEY });
    expect(twice).toThrow(/RPC_URL: endpoint 2 repeats endpoint 1/);
    expect(twice).not.toThrow(/secret/);
    expect(() => loadConfig({ RPC_URL: "https://a.example,localhost:8545" })).toThrow(/RPC_URL: must be an http:\/\/ or https:\/\/ URL, or several/);
  });

  it("reads OUTFLOW_CHECK_INTERVAL_MS, 0 turning the watch off", () => {
    expect(loadConfig({ OUTFLOW_CHECK_INTERVAL_MS: "0" }).outflowCheckIntervalMs).toBe(0);
    expect(loadConfig({ OUTFLOW_CHECK_INTERVAL_MS: "12000" }).outflowCheckIntervalMs).toBe(12_000);
    expect(() => loadConfig({ OUTFLOW_CHECK_INTERVAL_MS: "-1" })).toThrow(/OUTFLOW_CHECK_INTERVAL_MS/);
  });

  it("reads PAUSE_ON_UNEXPECTED_OUTFLOW, which needs the outflow watch", () => {
    expect(loadConfig({ PAUSE_ON_UNEXPECTED_OUTFLOW: "true" }).pauseOnUnexpectedOutflow).toBe(true);
    expect(() => loadConfig({ PAUSE_ON_UNEXPECTED_OUTFLOW: "yes" })).toThrow(/PAUSE_ON_UNEXPECTED_OUTFLOW: must be true or false/);
    expect(() => loadConfig({ PAUSE_ON_UNEXPECTED_OUTFLOW: "true", OUTFLOW_CHECK_INTERVAL_MS: "0" })).toThrow(/PAUSE_ON_UNEXPECTED_OUTFLOW: needs the outflow watch/);
  });

  it("reads APPROVAL_ABOVE and APPROVAL_TTL_HOURS; an approval needs an admin key, and API keys at all", () => {
    const admins = "admin:an-admin-key-of-sixteen,transfer:a-client-key-of-sixteen";
    const config = loadConfig({ APPROVAL_ABOVE: "2500.5", APPROVAL_TTL_HOURS: "0.5", API_KEYS: admins });
    expect([config.approvalAbove, config.approvalTtlHours]).toEqual(["2500.5", 0.5]);
    expect(loadConfig({}).approvalTtlHours).toBe(24);
    expect(() => loadConfig({ APPROVAL_ABOVE: "1e6" })).toThrow(/APPROVAL_ABOVE: must be a plain decimal number of tokens/);
    expect(() => loadConfig({ APPROVAL_TTL_HOURS: "0" })).toThrow(/APPROVAL_TTL_HOURS/);
    expect(() => loadConfig({ APPROVAL_ABOVE: "10", API_KEYS: "transfer:a-client-key-of-sixteen" })).toThrow(/APPROVAL_ABOVE: API_KEYS needs an admin key/);
    expect(() => loadConfig({ APPROVAL_ABOVE: "10", AUTH_DISABLED: "true" })).toThrow(/APPROVAL_ABOVE: needs API keys/);
  });

  it("gives the audit log the settings without their secrets: keys as roles and ids, URLs as hosts (a password with a comma too)", () => {
    const config = loadConfig({
      RPC_URL: "https://eth.example/v3/secret-project-key,https://backup.example/key2",
      PRIVATE_KEY: KEY,
      TOKEN_ADDRESS: TOKEN,
      API_KEYS: "admin:an-admin-key-of-sixteen,a-client-key-of-sixteen",
      WEBHOOK_URL: "https://hooks.example/t/secret-token",
      WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString("base64")}`,
      DATABASE_URL: "postgres://svc:88,12pw@db.internal:5432/app",
      MAX_TRANSFER_AMOUNT: "500",
    });
    const settings = settingsForAudit(config);
    expect(settings).toMatchObject({
      RPC_URL: "eth.example, backup.example",
      PRIVATE_KEY: "(set)",
      WEBHOOK_URL: "hooks.example",
      WEBHOOK_SECRET: "(set)",
      DATABASE_URL: "db.internal:5432",
      MAX_TRANSFER_AMOUNT: "500",
      API_KEYS: expect.stringMatching(/^admin key_[0-9a-f]{12}, transfer key_[0-9a-f]{12}$/),
    });
    const text = JSON.stringify(settings);
    for (const secret of ["secret-project-key", "key2", "an-admin-key", "a-client-key", "secret-token", "whsec_", KEY.slice(2), "12pw", "svc"]) expect(text).not.toContain(secret);
  });

  it("reads REPRICE_UNMINED_AFTER_MS and refuses less than 100 ms", () => {
    expect(loadConfig({ REPRICE_UNMINED_AFTER_MS: "120000" }).repriceUnminedAfterMs).toBe(120_000);
    expect(() => loadConfig({ REPRICE_UNMINED_AFTER_MS: "50" })).toThrow(/REPRICE_UNMINED_AFTER_MS/);
  });

  it("reads STUCK_AFTER_BLOCKS and refuses zero", () => {
    expect(loadConfig({ STUCK_AFTER_BLOCKS: "12" }).stuckAfterBlocks).toBe(12);
    expect(() => loadConfig({ STUCK_AFTER_BLOCKS: "0" })).toThrow(/STUCK_AFTER_BLOCKS/);
  });

  it("reads TRUST_PROXY, and refuses a value that is neither a flag, a hop count nor addresses", () => {
    expect(loadConfig({ TRUST_PROXY: "1" }).trustProxy).toBe("1");
    expect(loadConfig({ TRUST_PROXY: "10.0.0.0/8,127.0.0.1" }).trustProxy).toBe("10.0.0.0/8,127.0.0.1");
    expect(() => loadConfig({ TRUST_PROXY: "yes please" })).toThrow(/TRUST_PROXY: must be true, false, a number of proxy hops/);
  });

  it("defaults everything when nothing is set (the dev-chain mode)", () => {
    expect(loadConfig({})).toEqual({ ...DEFAULTS });
  });

  it("reads and converts every variable", () => {
    expect(
      loadConfig({ RPC_URL: "https://node.example/v3/abc", PRIVATE_KEY: KEY, TOKEN_ADDRESS: TOKEN, CHAIN_ID: "1", PORT: "8080", HOST: "0.0.0.0", LOG_LEVEL: "warn", RPC_TIMEOUT_MS: "2500", API_KEYS: API_KEY }),
    ).toEqual({ ...DEFAULTS, rpcUrl: "https://node.example/v3/abc", privateKey: KEY, tokenAddress: TOKEN, chainId: 1, port: 8080, host: "0.0.0.0", logLevel: "warn", rpcTimeoutMs: 2500, apiKeys: API_KEY });
  });

  it("reads the audit log's key and how often its head is published", () => {
    expect(loadConfig({ AUDIT_KEY: "k".repeat(32), AUDIT_HEAD_INTERVAL_MS: "0" })).toMatchObject({ auditKey: "k".repeat(32), auditHeadIntervalMs: 0 });
  });

  it("reads the journal and idempotency settings", () => {
    expect(loadConfig({ JOURNAL_PATH: "/var/lib/tts/j.sqlite", JOURNAL_SYNCHRONOUS: "NORMAL", IDEMPOTENCY_KEY_TTL_HOURS: "0.5", CHAIN_REFRESH_INTERVAL_MS: "250" })).toMatchObject({
      journalPath: "/var/lib/tts/j.sqlite",
      journalSynchronous: "NORMAL",
      idempotencyKeyTtlHours: 0.5,
      chainRefreshIntervalMs: 250,
    });
  });

  it("accepts a real node without API keys only with AUTH_DISABLED=true", () => {
    expect(loadConfig({ RPC_URL: "http://127.0.0.1:8545", PRIVATE_KEY: KEY, TOKEN_ADDRESS: TOKEN, AUTH_DISABLED: "true" }).authDisabled).toBe(true);
  });

  it("treats empty values as unset", () => {
    expect(loadConfig({ RPC_URL: "", PORT: " " }).port).toBe(3000);
  });

  const refusals: [string, Record<string, string>, string][] = [
    ["RPC_URL without a key and token", { RPC_URL: "http://127.0.0.1:8545" }, "PRIVATE_KEY: required when RPC_URL or NETWORKS_FILE is set"],
    ["RPC_URL without a token", { RPC_URL: "http://127.0.0.1:8545", PRIVATE_KEY: KEY }, "TOKEN_ADDRESS: required when RPC_URL is set"],
    ["a real node without API keys", { RPC_URL: "http://127.0.0.1:8545", PRIVATE_KEY: KEY, TOKEN_ADDRESS: TOKEN }, "API_KEYS: required"],
    ["a short API key", { API_KEYS: "short" }, "API_KEYS: entry 1 is neither"],
    ["a malformed key hash", { API_KEYS: "sha256:abc" }, "API_KEYS: entry 1 is neither"],
    ["a policy amount with an exponent", { MAX_TRANSFER_AMOUNT: "1e6" }, "MAX_TRANSFER_AMOUNT: must be a plain decimal"],
    ["a non-URL RPC_URL", { RPC_URL: "localhost:8545" }, "RPC_URL: must be an http:// or https:// URL"],
    ["a short private key", { PRIVATE_KEY: "0x1234" }, "PRIVATE_KEY: must be 0x followed by 64 hex digits"],
    ["a bad token address", { TOKEN_ADDRESS: "0x12" }, "TOKEN_ADDRESS: must be 0x followed by 40 hex digits"],
    ["a fractional chain id", { CHAIN_ID: "1.5" }, "CHAIN_ID: must be a whole number"],
    ["a port out of range", { PORT: "70000" }, "PORT:"],
    ["a word for a port", { PORT: "http" }, "PORT: must be a whole number"],
    ["an unknown log level", { LOG_LEVEL: "loud" }, "LOG_LEVEL: must be one of"],
    ["DEMO_SETUP without RPC_URL", { DEMO_SETUP: "true" }, "DEMO_SETUP: needs RPC_URL"],
    ["an unknown journal mode", { JOURNAL_SYNCHRONOUS: "OFF" }, "JOURNAL_SYNCHRONOUS: must be FULL or NORMAL"],
    ["a zero key lifetime", { IDEMPOTENCY_KEY_TTL_HOURS: "0" }, "IDEMPOTENCY_KEY_TTL_HOURS:"],
    ["a short audit key", { AUDIT_KEY: "short-key" }, "AUDIT_KEY:"],
    ["a holder of a key that is not configured", { API_KEYS: API_KEY, API_KEY_HOLDERS: "key_0123456789ab=alice" }, "API_KEY_HOLDERS: entry 1 names key_0123456789ab, which is none of API_KEYS's keys"],
    ["a second admin's resume with one admin", { API_KEYS: `admin:${API_KEY}`, RESUME_NEEDS_SECOND_ADMIN: "true" }, "RESUME_NEEDS_SECOND_ADMIN: needs admin keys of two people"],
    ["holders without API_KEYS", { API_KEY_HOLDERS: "key_0123456789ab=alice" }, "API_KEY_HOLDERS: names the holders of API_KEYS's keys"],
  ];
  it.each(refusals)("refuses %s, naming the variable", (_label, env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("never echoes a private key in its message", () => {
    const almostKey = `0x${"ab".repeat(31)}`;
    try {
      loadConfig({ PRIVATE_KEY: almostKey });
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain(almostKey.slice(2));
    }
  });

  it("lists every bad variable at once", () => {
    expect(() => loadConfig({ PORT: "x", LOG_LEVEL: "y" })).toThrow(/PORT[\s\S]*LOG_LEVEL/);
  });
});

/** What loadConfig says is wrong with `env`, or "" when nothing is. */
function problemsOf(env: Record<string, string>): string {
  try {
    loadConfig(env);
    return "";
  } catch (error) {
    return (error as ConfigError).message;
  }
}

describe("the signer", () => {
  const base = { RPC_URL: "http://127.0.0.1:8545", TOKEN_ADDRESS: TOKEN, API_KEYS: API_KEY };

  it("is exactly one of the four, each with all its variables", () => {
    expect(signerSettingsOf(loadConfig({ ...base, PRIVATE_KEY: KEY }))).toEqual([{ kind: "private-key", privateKey: KEY }]);
    expect(signerSettingsOf(loadConfig({ ...base, AWS_KMS_KEY_ID: "alias/hot-wallet" }))).toEqual([{ kind: "aws-kms", keyId: "alias/hot-wallet" }]);
    expect(signerSettingsOf(loadConfig({ ...base, KEYSTORE_PATH: "/k.json", KEYSTORE_PASSWORD_FILE: "/p" }))).toEqual([{ kind: "keystore", keystorePath: "/k.json", passwordFile: "/p" }]);
    const pkcs11 = { PKCS11_MODULE: "/lib.so", PKCS11_TOKEN_LABEL: "wallet", PKCS11_KEY_LABEL: "hot", PKCS11_PIN_FILE: "/pin" };
    expect(signerSettingsOf(loadConfig({ ...base, ...pkcs11 }))).toEqual([{ kind: "pkcs11", modulePath: "/lib.so", tokenLabel: "wallet", keyLabel: "hot", pinFile: "/pin" }]);
    expect(problemsOf(base)).toContain("PRIVATE_KEY: required when RPC_URL or NETWORKS_FILE is set, unless the key is elsewhere: KEYSTORE_PATH, AWS_KMS_KEY_ID or PKCS11_MODULE");
    expect(problemsOf({ ...base, PRIVATE_KEY: KEY, AWS_KMS_KEY_ID: "alias/hot-wallet" })).toContain("PRIVATE_KEY, AWS_KMS_KEY_ID: each selects the wallet's signer; set exactly one");
    expect(problemsOf({ ...base, PKCS11_MODULE: "/lib.so", PKCS11_KEY_LABEL: "hot" })).toContain("PKCS11_TOKEN_LABEL: required with PKCS11_MODULE");
    expect(problemsOf({ ...base, PKCS11_MODULE: "/lib.so", PKCS11_KEY_LABEL: "hot" })).toContain("PKCS11_PIN_FILE: required with PKCS11_MODULE");
    expect(problemsOf({ ...base, KEYSTORE_PATH: "/k.json" })).toContain("KEYSTORE_PASSWORD_FILE: required with KEYSTORE_PATH");
  });
});

describe("a wallet pool", () => {
  const base = { RPC_URL: "http://127.0.0.1:8545", TOKEN_ADDRESS: TOKEN, API_KEYS: API_KEY };
  const OTHER_KEY = `0x${"22".repeat(32)}`;

  it("takes a comma-separated list in every signer variable: each key is a lane", () => {
    expect(signerSettingsOf(loadConfig({ ...base, PRIVATE_KEY: `${KEY}, ${OTHER_KEY}` }))).toEqual([
      { kind: "private-key", privateKey: KEY },
      { kind: "private-key", privateKey: OTHER_KEY },
    ]);
    expect(signerSettingsOf(loadConfig({ ...base, AWS_KMS_KEY_ID: "alias/hot-1,alias/hot-2" }))?.map((settings) => settings.kind === "aws-kms" && settings.keyId)).toEqual(["alias/hot-1", "alias/hot-2"]);
    const pkcs11 = { PKCS11_MODULE: "/lib.so", PKCS11_TOKEN_LABEL: "wallet", PKCS11_KEY_LABEL: "hot-1,hot-2", PKCS11_PIN_FILE: "/pin" };
    expect(signerSettingsOf(loadConfig({ ...base, ...pkcs11 }))?.map((settings) => settings.kind === "pkcs11" && settings.keyLabel)).toEqual(["hot-1", "hot-2"]);
    // One password for every keystore, or one each, in order.
    const keystores = (passwords: string) => signerSettingsOf(loadConfig({ ...base, KEYSTORE_PATH: "/a.json,/b.json", KEYSTORE_PASSWORD_FILE: passwords }));
    expect(keystores("/p")?.map((settings) => settings.kind === "keystore" && settings.passwordFile)).toEqual(["/p", "/p"]);
    expect(keystores("/pa,/pb")?.map((settings) => settings.kind === "keystore" && [settings.keystorePath, settings.passwordFile])).toEqual([["/a.json", "/pa"], ["/b.json", "/pb"]]);
    expect(loadConfig({ MAX_IN_FLIGHT_PER_LANE: "64" }).maxInFlightPerLane).toBe(64);
    expect(loadConfig({ TRANSFER_SLOT_WAIT_MS: "0" }).transferSlotWaitMs).toBe(0);
  });

  it("refuses a key listed twice, an empty entry, and passwords that do not match the keystores, without echoing a key", () => {
    const problems = (env: Record<string, string>) => problemsOf({ ...base, ...env });
    const twice = problems({ PRIVATE_KEY: `${KEY},${KEY.toUpperCase().replace("0X", "0x")}` });
    expect(twice).toContain("PRIVATE_KEY: the same key is listed twice; each lane of a pool needs a key of its own");
    expect(twice).not.toContain("1111");
    expect(problems({ PRIVATE_KEY: `${KEY},` })).toContain("PRIVATE_KEY: must be 0x followed by 64 hex digits (several keys: comma-separated)");
    expect(problems({ AWS_KMS_KEY_ID: "alias/a,,alias/b" })).toContain("AWS_KMS_KEY_ID: an empty entry in the comma-separated list");
    expect(problems({ KEYSTORE_PATH: "/a,/b,/c", KEYSTORE_PASSWORD_FILE: "/pa,/pb" })).toContain(
      "KEYSTORE_PASSWORD_FILE: 2 files for 3 keystores; give one for all, or one per keystore in the same order",
    );
    expect(problems({ PRIVATE_KEY: KEY, MAX_IN_FLIGHT_PER_LANE: "0" })).toContain("MAX_IN_FLIGHT_PER_LANE");
  });

  it("takes gas top-up as all three variables or none, in ether, topping up to more than the level that triggers it", () => {
    const topUp = { PRIVATE_KEY: KEY, GAS_TOPUP_FROM: `0x${"ab".repeat(20)}`, GAS_TOPUP_BELOW: "0.05", GAS_TOPUP_TO: "0.2" };
    expect(loadConfig({ ...base, ...topUp })).toMatchObject({ gasTopUpFrom: topUp.GAS_TOPUP_FROM, gasTopUpBelow: "0.05", gasTopUpTo: "0.2" });
    const problems = (env: Record<string, string>) => problemsOf({ ...base, ...env });
    expect(problems({ PRIVATE_KEY: KEY, GAS_TOPUP_FROM: topUp.GAS_TOPUP_FROM })).toContain("GAS_TOPUP_BELOW: required with GAS_TOPUP_FROM (gas top-up takes all three)");
    expect(problems({ ...topUp, GAS_TOPUP_TO: "0.05" })).toContain("GAS_TOPUP_TO: must be more than GAS_TOPUP_BELOW");
    expect(problems({ ...topUp, GAS_TOPUP_BELOW: "5 ETH" })).toContain("GAS_TOPUP_BELOW: must be a plain decimal number of ether, such as 0.05");
    expect(problems({ ...topUp, GAS_TOPUP_FROM: "hot-1" })).toContain("GAS_TOPUP_FROM: must be the address (0x and 40 hex digits) of one of the pool's wallets");
  });
});

describe("JOURNAL_RETENTION_DAYS", () => {
  const base = { RPC_URL: "http://127.0.0.1:8545", TOKEN_ADDRESS: TOKEN, API_KEYS: API_KEY, PRIVATE_KEY: KEY };
  const problems = (env: Record<string, string>) => problemsOf({ ...base, ...env });

  it("keeps everything by default, and keeps a transfer at least as long as its Idempotency-Key", () => {
    expect(loadConfig(base).journalRetentionDays).toBe(0);
    expect(loadConfig({ ...base, JOURNAL_RETENTION_DAYS: "90", JOURNAL_ARCHIVE_DIR: "/var/archive" })).toMatchObject({ journalRetentionDays: 90, journalArchiveDir: "/var/archive" });
    expect(problems({ JOURNAL_RETENTION_DAYS: "1", IDEMPOTENCY_KEY_TTL_HOURS: "48" })).toContain(
      "JOURNAL_RETENTION_DAYS: 1 days is shorter than IDEMPOTENCY_KEY_TTL_HOURS (48 h): a repeat of a key must still find its transfer",
    );
    expect(loadConfig({ ...base, JOURNAL_RETENTION_DAYS: "30", DATABASE_URL: "postgres://u:p@db/transfers" }).journalRetentionDays).toBe(30);
    expect(problems({ JOURNAL_RETENTION_DAYS: "1.5" })).toContain("JOURNAL_RETENTION_DAYS: must be a whole number");
  });
});

describe("DEV_BLOCK_TIME", () => {
  it("is for the local dev chain only, in whole seconds", () => {
    expect(loadConfig({ DEV_BLOCK_TIME: "30" }).devBlockTime).toBe(30);
    expect(() => loadConfig({ DEV_BLOCK_TIME: "1.5" })).toThrow(/DEV_BLOCK_TIME: must be a whole number/);
    expect(() => loadConfig({ DEV_BLOCK_TIME: "30", RPC_URL: "http://127.0.0.1:8545", PRIVATE_KEY: KEY, TOKEN_ADDRESS: TOKEN, API_KEYS: API_KEY })).toThrow(
      /DEV_BLOCK_TIME: only for the local dev chain started when RPC_URL is unset/,
    );
  });
});

describe("the documentation of the environment", () => {
  it("names every variable the service reads, in .env.example and in the README", () => {
    const example = readFileSync(".env.example", "utf8");
    const readme = readFileSync("README.md", "utf8");
    // TEST_FAULT_POINT is a test-only switch, documented in the README only.
    const variables = Object.values(ENVIRONMENT_VARIABLES).filter((name) => name !== "TEST_FAULT_POINT");
    expect(variables.filter((name) => !new RegExp(`^#? ?${name}=`, "m").test(example))).toEqual([]);
    expect(Object.values(ENVIRONMENT_VARIABLES).filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });
});
