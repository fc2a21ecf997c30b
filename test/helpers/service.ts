/** Builds the service exactly as server.ts does, against a test chain, and captures its log lines. */
import { Writable } from "node:stream";
import { type App, buildApp } from "../../src/app.js";
import { type ChainConnection, connectChain } from "../../src/chain/connect-chain.js";
import { type ChainConfig, loadConfig } from "../../src/config.js";

export interface TestService {
  app: App;
  chain: ChainConnection;
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

/** Loads config from a literal environment, connects to the chain and builds the app. */
export async function startService(target: ServiceTarget, extraEnv: Record<string, string> = {}): Promise<TestService> {
  const config = loadConfig({
    RPC_URL: target.rpcUrl,
    PRIVATE_KEY: target.privateKey,
    TOKEN_ADDRESS: target.tokenAddress,
    LOG_LEVEL: "info",
    ...extraEnv,
  }) as ChainConfig;
  const chain = await connectChain(config);
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const app = buildApp(config, { chain, logDestination });
  await app.ready();
  return {
    app,
    chain,
    config,
    logs,
    async close() {
      await app.close();
      chain.provider.destroy();
    },
  };
}

/** POSTs a JSON body through app.inject and returns status and parsed body. */
export async function postJson(app: App, url: string, body: unknown): Promise<{ statusCode: number; body: any; raw: string }> {
  const response = await app.inject({ method: "POST", url, payload: body as object, headers: { "content-type": "application/json" } });
  return { statusCode: response.statusCode, body: safeParse(response.body), raw: response.body };
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
