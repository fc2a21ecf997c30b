/** Builds the service exactly as server.ts does, against a test chain, and captures its log lines. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type App, buildApp } from "../../src/app.js";
import { type ChainConnection, connectChain } from "../../src/chain/connect-chain.js";
import { type ChainConfig, loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { type ChainServices, startChainServices } from "../../src/chain-services.js";
import { TEST_HEAD_MAX_AGE_MS } from "./test-chain.js";

export interface TestService {
  app: App;
  chain: ChainConnection;
  services: ChainServices;
  config: ChainConfig;
  /** Every log line the service wrote, as text. */
  logs: string[];
  close(): Promise<void>;
}

export interface ServiceTarget {
  rpcUrl: string;
  privateKey: string;
  tokenAddress: string;
}

/**
 * Loads config from a literal environment, connects to the chain, opens a journal (in a fresh temporary
 * folder unless JOURNAL_PATH is given) and builds the app.
 */
export async function startService(target: ServiceTarget, extraEnv: Record<string, string> = {}): Promise<TestService> {
  const journalDir = extraEnv.JOURNAL_PATH ? undefined : mkdtempSync(join(tmpdir(), "journal-"));
  const config = loadConfig({
    RPC_URL: target.rpcUrl,
    PRIVATE_KEY: target.privateKey,
    TOKEN_ADDRESS: target.tokenAddress,
    LOG_LEVEL: "info",
    CHAIN_REFRESH_INTERVAL_MS: "100",
    HEAD_MAX_AGE_MS: String(TEST_HEAD_MAX_AGE_MS),
    ...(journalDir ? { JOURNAL_PATH: join(journalDir, "transfers.sqlite") } : {}),
    ...extraEnv,
  }) as ChainConfig;
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger(config.logLevel, { privateKey: config.privateKey, rpcUrl: config.rpcUrl }, destination);
  const chain = await connectChain(config);
  const services = await startChainServices(config, chain, logger);
  const app = buildApp({ chain, services, logger });
  await app.ready();
  return {
    app,
    chain,
    services,
    config,
    logs,
    async close() {
      await app.close();
      await services.close();
      chain.provider.destroy();
      if (journalDir) rmSync(journalDir, { recursive: true, force: true });
    },
  };
}

/** POSTs a JSON body through app.inject and returns status and parsed body. */
export async function postJson(
  app: App,
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ statusCode: number; body: any; raw: string; headers: Record<string, unknown> }> {
  const response = await app.inject({ method: "POST", url, payload: body as object, headers: { "content-type": "application/json", ...headers } });
  return { statusCode: response.statusCode, body: safeParse(response.body), raw: response.body, headers: response.headers };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
