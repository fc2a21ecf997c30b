/**
 * A hosted endpoint as a fleet of backends behind a load balancer, in front of one real node: receipts,
 * mined lookups and Transfer logs appear only some time after the block that mined them (each backend's
 * index lags its head), and a backend can be stuck at an old head while the others advance, so that heads
 * go back and forth between calls. Used through the RPC proxy's script: `answer(call)` says how one call
 * is answered. What "recent" means comes from the node itself, watched directly (not through the proxy):
 * the moment each block was first seen.
 */
import { JsonRpcProvider } from "ethers";
import type { ScriptedAnswer } from "./rpc-proxy.js";

/** A block as eth_getBlockByNumber answers it (without transactions); the stuck backend answers it whole. */
interface RpcBlock {
  number: string;
  hash: string;
  [field: string]: unknown;
}

/** The answers of a lagging fleet; `stop()` ends the watching of the node. */
export interface LaggingFleet {
  /** How one call is answered, or undefined to forward it untouched. `lagMs`: this call's backend's index lag. */
  answer(call: { method: string; params: unknown[] }, lagMs: number): ScriptedAnswer;
  /** From now for `forMs`, calls answered by the stuck backend (`share` of them) see the head as it is now. */
  stickBackend(forMs: number, share: number, random: () => number): void;
  stop(): void;
}

/** Watches `rpcUrl`'s head every `pollMs` and answers as a fleet whose indexes lag. */
export function watchLaggingFleet(rpcUrl: string, pollMs = 100): LaggingFleet {
  const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  // Height -> when the block now at that height was first seen (a reorganisation's new block counts anew).
  const seen = new Map<number, { hash?: string; at: number }>();
  let latest: RpcBlock | undefined;
  let stuck: { block: RpcBlock; until: number; share: number; random: () => number } | undefined;
  let stopped = false;
  const watch = async () => {
    while (!stopped) {
      try {
        const block = (await provider.send("eth_getBlockByNumber", ["latest", false])) as RpcBlock;
        const height = Number(block.number);
        const now = Date.now();
        for (let below = latest ? Number(latest.number) + 1 : height; below < height; below++) if (!seen.has(below)) seen.set(below, { at: now });
        if (seen.get(height)?.hash !== block.hash) seen.set(height, { hash: block.hash, at: now });
        for (const known of seen.keys()) if (known > height) seen.delete(known);
        latest = block;
      } catch {
        // The node restarting or stopping: the next poll tries again.
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  };
  void watch();

  // Whether the block at `height` (hex) is younger than `lagMs`: a backend with that lag has not indexed it.
  const isRecent = (height: unknown, lagMs: number) => {
    if (typeof height !== "string") return false;
    const first = seen.get(Number(height));
    return first === undefined || Date.now() - first.at < lagMs;
  };

  return {
    answer({ method, params }, lagMs) {
      const head = stuck && Date.now() <= stuck.until && stuck.random() < stuck.share ? stuck.block : undefined;
      const aboveHead = (height: unknown) => head !== undefined && typeof height === "string" && height.startsWith("0x") && Number(height) > Number(head.number);
      // The stuck backend: its head, and nothing above it.
      if (head) {
        if (method === "eth_blockNumber") return { result: head.number };
        if (method === "eth_getBlockByNumber" && (params[0] === "latest" || params[0] === "pending")) return { result: head };
        if (method === "eth_getBlockByNumber" && aboveHead(params[0])) return { result: null };
        if (["eth_getTransactionCount", "eth_getBalance", "eth_call", "eth_feeHistory"].includes(method) && params.some(aboveHead)) return { error: { code: -32000, message: "header not found" } };
      }
      const hidden = (height: unknown) => aboveHead(height) || isRecent(height, lagMs);
      const minedIn = (result: unknown) => (result as { blockNumber?: string | null } | null)?.blockNumber ?? undefined;
      if (method === "eth_getTransactionReceipt" || method === "eth_getTransactionByHash") return { transform: (result) => (hidden(minedIn(result)) ? null : result) };
      if (method === "eth_getLogs") return { transform: (result) => (Array.isArray(result) ? result.filter((log: { blockNumber?: string }) => !hidden(log.blockNumber)) : result) };
      return undefined;
    },
    stickBackend(forMs, share, random) {
      if (latest) stuck = { block: latest, until: Date.now() + forMs, share, random };
    },
    stop() {
      stopped = true;
      provider.destroy();
    },
  };
}
