/**
 * A node that takes one of the wallet's broadcasts, answers its hash, finds it by hash unmined, counts it
 * among the wallet's pending transactions, answers "already known" to its same bytes, and never passes it
 * on: the chain never sees it. It holds it for the rest of the run, faults or not: only another endpoint
 * (which gets the same bytes) or a replacement at the same nonce gets the wallet moving again.
 */
import { Transaction } from "ethers";
import { type ScriptedAnswer, pendingTransactionJson } from "../helpers/rpc-proxy.js";

export interface NeverPassedOn {
  /** The answer of such a node to a call, or undefined to leave the call to the run's other faults. */
  answer(call: { method: string; params: unknown[] }, faulting: boolean): ScriptedAnswer;
}

/**
 * Whether this run's first endpoint is such a node, and which broadcast made while faults are on it keeps,
 * drawn from `draws` (a sequence of its own, so that a seed's other faults stay what they were).
 */
export function drawNeverPassedOn(draws: () => number, count: (name: string) => void): NeverPassedOn | undefined {
  if (draws() >= 0.5) return undefined;
  let broadcastsLeft = Math.floor(draws() * 12);
  let held: { hash: string; raw: string; from: string; nonce: number } | undefined;
  return {
    answer({ method, params }, faulting) {
      if (held === undefined) {
        if (!faulting || method !== "eth_sendRawTransaction" || broadcastsLeft-- > 0) return undefined;
        const transaction = Transaction.from(params[0] as string);
        held = { hash: transaction.hash as string, raw: params[0] as string, from: (transaction.from as string).toLowerCase(), nonce: transaction.nonce };
        count("a node holds a broadcast, counted as pending, and never passes it on");
        return { result: held.hash };
      }
      const { hash, raw, from, nonce } = held;
      if (method === "eth_sendRawTransaction" && params[0] === raw) return { error: { code: -32000, message: "already known" } };
      // Once the chain has it (another endpoint passed the same bytes on), the node answers what was mined,
      // as a real one does: its pool drops what a new block holds.
      if (method === "eth_getTransactionByHash" && params[0] === hash) return { transform: (result) => result ?? pendingTransactionJson(raw) };
      if (method === "eth_getTransactionCount" && params[1] === "pending" && String(params[0]).toLowerCase() === from) {
        return { transform: (result) => `0x${Math.max(Number(result), nonce + 1).toString(16)}` };
      }
      return undefined;
    },
  };
}
