/**
 * A node that keeps at most `limit` pending transactions per sender, as geth keeps 16 executable slots per
 * account, made of a fault-injecting proxy in front of a real node: it answers "txpool is full" to a
 * sender's new transaction while `limit` of its transactions are sent and not mined, except the sender's
 * next nonce to be mined (a node that kept the transactions above it and refused that one would jam the
 * sender for good). What the sender has mined is read from the node at each decision, one decision at a
 * time, as a node knows its own pool.
 */
import { type JsonRpcProvider, Transaction } from "ethers";
import type { RpcProxy, ScriptedAnswer } from "./rpc-proxy.js";

export interface PendingLimit {
  /** Transactions refused as "txpool is full" so far. */
  readonly refused: number;
  /** While set, everything this sender sends is dropped: answered with its hash, never forwarded. */
  jam(sender: string | undefined): void;
  stop(): Promise<void>;
}

export function limitPendingPerSender(proxy: RpcProxy, provider: JsonRpcProvider, limit: number): PendingLimit {
  const forwarded = new Map<string, Set<number>>();
  let jammed: string | undefined;
  let refused = 0;
  // One decision at a time: a sender's pool changes only between them, as in a node.
  let deciding: Promise<unknown> = Promise.resolve();
  const decide = async (transaction: Transaction): Promise<ScriptedAnswer> => {
    const sender = transaction.from as string;
    if (sender === jammed) return { result: transaction.hash };
    // What the node has mined, read at the moment of deciding, as a node knows its own pool.
    const minedCount = await provider.getTransactionCount(sender, "latest");
    const sent = forwarded.get(sender) ?? new Set<number>();
    forwarded.set(sender, sent);
    for (const sentNonce of sent) if (sentNonce < minedCount) sent.delete(sentNonce);
    if (!sent.has(transaction.nonce) && transaction.nonce !== minedCount && sent.size >= limit) {
      refused++;
      return { error: { code: -32000, message: "txpool is full" } };
    }
    sent.add(transaction.nonce);
    return undefined;
  };
  proxy.fault = {
    kind: "script",
    answer: ({ method, params }) => {
      if (method !== "eth_sendRawTransaction") return undefined;
      const decision = deciding.then(() => decide(Transaction.from(String(params[0]))));
      deciding = decision.catch(() => undefined);
      return decision;
    },
  };
  return {
    get refused() {
      return refused;
    },
    jam: (sender) => (jammed = sender),
    async stop() {
      await deciding;
      proxy.fault = undefined;
    },
  };
}
