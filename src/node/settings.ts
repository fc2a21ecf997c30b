/** The chain's node: its endpoints (several of one chain make a fleet), how they are called, and how fresh a head must be. */
import { Type } from "@sinclair/typebox";
import { settingsPart } from "../settings/settings-part.js";

// One JSON-RPC endpoint, or several comma-separated (providers of the same chain).
const RPC_URLS = "^https?://[^,\\s]+(\\s*,\\s*https?://[^,\\s]+)*$";

export const NODE_SETTINGS = settingsPart({
  schema: {
    rpcUrl: Type.Optional(Type.String({ pattern: RPC_URLS, description: "JSON-RPC endpoint of the Ethereum node; several endpoints of one chain: comma-separated" })),
    rpcMaxLagBlocks: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10_000,
        description: "with several RPC endpoints: one whose head is more than this many blocks behind the highest head is left out until it catches up; default by chain id",
      }),
    ),
    chainId: Type.Optional(Type.Integer({ minimum: 1, description: "expected chain id, checked against the node" })),
    rpcTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
    rpcMaxInFlight: Type.Integer({ minimum: 1, maximum: 10_000, default: 32, description: "most requests to the node at once; the rest wait their turn" }),
    rpcBatchMaxCalls: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 20,
      description: "most gas estimates, or raw transactions to one endpoint, made at the same moment sent in one JSON-RPC batch; 1: each alone",
    }),
    chainRefreshIntervalMs: Type.Integer({ minimum: 50, maximum: 60_000, default: 1000 }),
    headMaxAgeMs: Type.Integer({ minimum: 0, maximum: 60_000, default: 500, description: "oldest chain head a lookup may use" }),
    transactionCacheSize: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 10_000 }),
    finalityBlocks: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100_000,
        description: "blocks below the head at which a transfer is final, where the node has no finalized tag (only on chains finalized-block.ts does not name, and only once the node said so repeatedly); default 64",
      }),
    ),
  },
  variables: {
    rpcUrl: "RPC_URL",
    rpcMaxLagBlocks: "RPC_MAX_LAG_BLOCKS",
    chainId: "CHAIN_ID",
    rpcTimeoutMs: "RPC_TIMEOUT_MS",
    rpcMaxInFlight: "RPC_MAX_IN_FLIGHT",
    rpcBatchMaxCalls: "RPC_BATCH_MAX_CALLS",
    chainRefreshIntervalMs: "CHAIN_REFRESH_INTERVAL_MS",
    headMaxAgeMs: "HEAD_MAX_AGE_MS",
    transactionCacheSize: "TRANSACTION_CACHE_SIZE",
    finalityBlocks: "FINALITY_BLOCKS",
  },
  expectations: { rpcUrl: "must be an http:// or https:// URL, or several separated by commas" },
  urls: { rpcUrl: "several" },
  check(raw, problems) {
    if (typeof raw.rpcUrl === "string" && new RegExp(RPC_URLS).test(raw.rpcUrl)) {
      problems.push(...rpcUrlProblems(rpcEndpointUrls(raw.rpcUrl)).map((problem) => `RPC_URL: ${problem}`));
    }
  },
});

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
