/**
 * A node that takes one of the wallet's broadcasts, answers its hash, counts it among the wallet's pending
 * transactions, and never passes it on: the chain never sees it. In half the runs it holds it (finds it by
 * hash unmined, answers "already known" to its same bytes); in the other half it drops it unseen (its hash
 * is not found, and it takes the same bytes afresh at each re-send, to drop them again). It does so for the
 * rest of the run, faults or not: only another endpoint (which gets the same bytes) or a replacement at the
 * same nonce gets the wallet moving again.
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
  // Drawn last, so that which broadcast it keeps is what it was before this variant existed.
  const forgets = draws() < 0.5;
  let held: { hash: string; raw: string; from: string; nonce: number } | undefined;
  return {
    answer({ method, params }, faulting) {
      if (held === undefined) {
        if (!faulting || method !== "eth_sendRawTransaction" || broadcastsLeft-- > 0) return undefined;
        const transaction = Transaction.from(params[0] as string);
        held = { hash: transaction.hash as string, raw: params[0] as string, from: (transaction.from as string).toLowerCase(), nonce: transaction.nonce };
        count(
          forgets
            ? "a node takes a broadcast afresh at each re-send, counted as pending, drops it unseen and never passes it on"
            : "a node holds a broadcast, counted as pending, and never passes it on",
        );
        return { result: held.hash };
      }
      const { hash, raw, from, nonce } = held;
      if (method === "eth_sendRawTransaction" && params[0] === raw) return forgets ? { result: hash } : { error: { code: -32000, message: "already known" } };
      // Dropped unseen: found only once the chain has it, by the node behind (left to the run's other faults).
      if (forgets && method === "eth_getTransactionByHash") return undefined;
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
