/**
 * An endpoint whose node follows the chain a set number of blocks behind, as a provider's node that lost
 * peers does: its head, its `latest` state, and everything it indexed stop that many blocks below the real
 * head, and moves on with it. Used through the RPC proxy's script. The real head comes from the node
 * itself, watched directly (not through the proxy).
 */
import { JsonRpcProvider, toQuantity } from "ethers";
import type { ScriptedAnswer } from "./rpc-proxy.js";

export interface BehindNode {
  answer(call: { method: string; params: unknown[] }): ScriptedAnswer;
  /** Resolves once the real head is known. */
  ready: Promise<void>;
  stop(): void;
}

const STATE_READS = new Set(["eth_getTransactionCount", "eth_getBalance", "eth_call", "eth_getCode", "eth_estimateGas", "eth_feeHistory"]);

export function watchBehindNode(rpcUrl: string, blocks: number, pollMs = 50): BehindNode {
  const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  let realHead: number | undefined;
  let stopped = false;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const watch = async () => {
    while (!stopped) {
      try {
        realHead = Number(await provider.send("eth_blockNumber", []));
        markReady();
      } catch {
        // The node stopping: the next poll tries again.
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  };
  void watch();

  const head = () => Math.max(0, (realHead ?? 0) - blocks);
  const above = (height: unknown) => typeof height === "string" && /^0x[0-9a-f]+$/i.test(height) && Number(height) > head();
  // A "latest" or "pending" tag, or a block number, as this node sees it.
  const asSeen = (tag: unknown) => (tag === "latest" || tag === "pending" || tag === undefined ? toQuantity(head()) : tag);
  return {
    ready,
    answer({ method, params }) {
      if (method === "eth_blockNumber") return { result: toQuantity(head()) };
      if (method === "eth_getBlockByNumber") return above(params[0]) ? { result: null } : { params: [asSeen(params[0]), ...params.slice(1)] };
      if (STATE_READS.has(method)) {
        // Each of these takes its block second.
        if (above(params[1])) return { error: { code: -32000, message: "header not found" } };
        return { params: [params[0], asSeen(params[1]), ...params.slice(2)] };
      }
      const minedIn = (result: unknown) => (result as { blockNumber?: string | null } | null)?.blockNumber ?? undefined;
      if (method === "eth_getTransactionReceipt") return { transform: (result) => (above(minedIn(result)) ? null : result) };
      if (method === "eth_getTransactionByHash") {
        return { transform: (result) => (above(minedIn(result)) ? { ...(result as object), blockHash: null, blockNumber: null, transactionIndex: null } : result) };
      }
      if (method === "eth_getLogs") return { transform: (result) => (Array.isArray(result) ? result.filter((log: { blockNumber?: string }) => !above(log.blockNumber)) : result) };
      return undefined;
    },
    stop() {
      stopped = true;
      provider.destroy();
    },
  };
}
