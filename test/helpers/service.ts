/** Starts the service exactly as server.ts does (composeService), against a test chain, capturing its logs. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { App } from "../../src/app.js";
import type { ChainServices } from "../../src/chain-services.js";
import type { ChainConnection } from "../../src/node/connect-chain.js";
import { composeService } from "../../src/compose.js";
import { type ChainConfig, chainConfigOf, loadConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import type { ServiceMetrics } from "../../src/metrics.js";
import { type RpcProxy, startRpcProxy } from "./rpc-proxy.js";
import { TEST_HEAD_MAX_AGE_MS } from "./test-chain.js";

/** The API key every test service accepts (API_KEYS), and the header that carries it. */
export const TEST_API_KEY = "test-api-key-0123456789";
export const AUTHORIZATION = { authorization: `Bearer ${TEST_API_KEY}` };
/** API_KEYS of the services tests start: the test key is an operator's (admin), so tests may read /wallet. */
export const TEST_API_KEYS = `admin:${TEST_API_KEY}`;

export interface TestService {
  app: App;
  chain: ChainConnection;
  services: ChainServices;
  metrics: ServiceMetrics;
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
 * Loads config from a literal environment, then composes the service: a journal in a fresh temporary
 * folder unless JOURNAL_PATH is given, TEST_API_KEY (admin) as the API key unless API_KEYS is given.
 */
export async function startService(target: ServiceTarget, extraEnv: Record<string, string> = {}): Promise<TestService> {
  const journalDir = extraEnv.JOURNAL_PATH ? undefined : mkdtempSync(join(tmpdir(), "journal-"));
  const config = chainConfigOf(loadConfig({
    RPC_URL: target.rpcUrl,
    PRIVATE_KEY: target.privateKey,
    TOKEN_ADDRESS: target.tokenAddress,
    LOG_LEVEL: "info",
    API_KEYS: TEST_API_KEYS,
    RATE_LIMIT_MAX: "100000",
    CHAIN_REFRESH_INTERVAL_MS: "100",
    HEAD_MAX_AGE_MS: String(TEST_HEAD_MAX_AGE_MS),
    ...(journalDir ? { JOURNAL_PATH: join(journalDir, "transfers.sqlite") } : {}),
    ...extraEnv,
  }));
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const service = await composeService(config, createLogger(config.logLevel, config, destination));
  await service.app.ready();
  // RPC_URL: the start stops unless the node answered.
  const chain = service.chain as ChainConnection;
  return {
    ...service,
    chain,
    config,
    logs,
    async close() {
      await service.close();
      if (journalDir) rmSync(journalDir, { recursive: true, force: true });
    },
  };
}

/** A service that reaches its node through a fault-injecting proxy (see rpc-proxy.ts). */
export interface ProxiedService {
  proxy: RpcProxy;
  service: TestService;
  close(): Promise<void>;
}

/** Starts a proxy in front of the chain's node and a service that uses it. */
export async function startServiceBehindProxy(
  target: ServiceTarget,
  extraEnv: Record<string, string> = {},
  rpcUrlOf: (proxyUrl: string) => string = (proxyUrl) => proxyUrl,
): Promise<ProxiedService> {
  const proxy = await startRpcProxy(target.rpcUrl);
  const service = await startService({ ...target, rpcUrl: rpcUrlOf(proxy.url) }, extraEnv);
  return {
    proxy,
    service,
    async close() {
      await service.close();
      await proxy.close();
    },
  };
}

/** A service whose RPC_URL lists several fault-injecting proxies, all in front of the one node. */
export interface MultiProxiedService {
  proxies: RpcProxy[];
  service: TestService;
  close(): Promise<void>;
}

/** `prepare` sets the proxies' faults before the service first connects. */
export async function startServiceBehindProxies(
  target: ServiceTarget,
  count: number,
  extraEnv: Record<string, string> = {},
  prepare: (proxies: RpcProxy[]) => void = () => {},
): Promise<MultiProxiedService> {
  const proxies = await Promise.all(Array.from({ length: count }, () => startRpcProxy(target.rpcUrl)));
  try {
    prepare(proxies);
    const service = await startService({ ...target, rpcUrl: proxies.map((proxy) => proxy.url).join(",") }, extraEnv);
    return {
      proxies,
      service,
      async close() {
        await service.close();
        await Promise.all(proxies.map((proxy) => proxy.close()));
      },
    };
  } catch (error) {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    throw error;
  }
}

/** POSTs a JSON body through app.inject, with the test API key unless headers say otherwise. */
export async function postJson(
  app: App,
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ statusCode: number; body: any; raw: string; headers: Record<string, unknown> }> {
  const response = await app.inject({
    method: "POST",
    url,
    payload: body as object,
    headers: { "content-type": "application/json", ...AUTHORIZATION, ...headers },
  });
  return { statusCode: response.statusCode, body: safeParse(response.body), raw: response.body, headers: response.headers };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
