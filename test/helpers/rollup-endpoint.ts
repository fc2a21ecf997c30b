/**
 * A rollup's endpoint in front of a dev node (anvil making a block every 250 ms, started by
 * startRollupChain): the node keeps the state of the last 128 blocks only, so a read of state at an older
 * block is refused in geth's words (anvil's --prune-history still answers old state from memory, so the
 * proxy refuses it); the `finalized` (and `safe`) tag trails the head by hundreds of blocks, as a rollup's
 * does while its batches wait for Ethereum's finality; and the first reads of that tag fail once with a
 * rate limit in JSON-RPC words (-32005 with HTTP 200), as on a hosted plan. Used through the RPC proxy's
 * script: `answer(call)` says how one call is answered, undefined to leave it to what comes next.
 */
import { JsonRpcProvider, toQuantity } from "ethers";
import type { ScriptedAnswer } from "./rpc-proxy.js";
import { type TestChain, startTestChain } from "./test-chain.js";
import type { DemoTokenOptions } from "../../src/dev/demo-chain.js";

/** How a rollup behaves here. */
export interface RollupShape {
  /** Blocks of state a node keeps. */
  stateBlocks: number;
  /** How far the finalized tag trails the head. */
  finalizedLagBlocks: number;
  /** How many of the first reads of the finalized tag fail with a rate limit. */
  failingFinalizedReads: number;
}

export const ROLLUP: RollupShape = { stateBlocks: 128, finalizedLagBlocks: 300, failingFinalizedReads: 2 };

/** Anvil making a block every 250 ms and keeping 128 states, with the demo token deployed. */
export function startRollupChain(tokenOptions: DemoTokenOptions = {}): Promise<TestChain> {
  return startTestChain(["--block-time", "0.25", "--prune-history", "128"], tokenOptions);
}

/** The methods that read state, and where their block parameter is. */
const STATE_READS = new Map([
  ["eth_getTransactionCount", 1],
  ["eth_getBalance", 1],
  ["eth_getCode", 1],
  ["eth_call", 1],
  ["eth_getStorageAt", 2],
  ["eth_getProof", 2],
]);

/** The answers of a rollup's endpoint in front of `rpcUrl`; `stop()` closes its own connection to the node. */
export interface RollupEndpoint {
  answer(call: { method: string; params: unknown[] }): ScriptedAnswer | Promise<ScriptedAnswer>;
  /**
   * What it met so far: reads of the finalized tag, those refused with a rate limit, the highest finalized
   * block it answered (-1 before any), and state reads refused as pruned.
   */
  readonly met: { finalizedReads: number; finalizedRefused: number; highestFinalized: number; prunedStateRefused: number };
  stop(): void;
}

export function rollupEndpoint(rpcUrl: string, shape: RollupShape = ROLLUP): RollupEndpoint {
  const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  let head: { number: number; at: number } | undefined;
  const readHead = async () => {
    if (!head || Date.now() - head.at > 50) head = { number: await provider.getBlockNumber(), at: Date.now() };
    return head.number;
  };
  const met = { finalizedReads: 0, finalizedRefused: 0, highestFinalized: -1, prunedStateRefused: 0 };
  return {
    met,
    async answer({ method, params }) {
      if (method === "eth_getBlockByNumber" && (params[0] === "finalized" || params[0] === "safe")) {
        met.finalizedReads++;
        if (met.finalizedRefused < shape.failingFinalizedReads) {
          met.finalizedRefused++;
          return { error: { code: -32005, message: "limit exceeded" } };
        }
        const finalized = Math.max(0, (await readHead()) - shape.finalizedLagBlocks);
        met.highestFinalized = Math.max(met.highestFinalized, finalized);
        return { params: [toQuantity(finalized), params[1]] };
      }
      const at = STATE_READS.get(method);
      if (at === undefined) return undefined;
      const block = params[at];
      const number = typeof block === "string" && /^0x[0-9a-f]+$/i.test(block) ? Number(block) : block === "earliest" ? 0 : undefined;
      if (number === undefined) return undefined;
      if (number >= (await readHead()) - shape.stateBlocks) return undefined;
      met.prunedStateRefused++;
      return { error: { code: -32000, message: `missing trie node ${toQuantity(number)} (path ): state is not available` } };
    },
    stop: () => provider.destroy(),
  };
}
