/**
 * A node that keeps at most `limit` pending transactions per sender, as geth keeps 16 executable slots per
 * account, made of a fault-injecting proxy in front of a real node: it answers "txpool is full" to a
 * sender's new transaction while `limit` of its transactions are sent and not mined, except the sender's
 * next nonce to be mined (a node that kept the transactions above it and refused that one would jam the
 * sender for good). What each sender has mined is read from the node itself every 20 ms (a node knows its
 * own pool at once; a slower read would refuse what the node no longer holds).
 */
import { type JsonRpcProvider, Transaction } from "ethers";
import type { RpcProxy } from "./rpc-proxy.js";

export interface PendingLimit {
  /** Transactions refused as "txpool is full" so far. */
  readonly refused: number;
  /** While set, everything this sender sends is dropped: answered with its hash, never forwarded. */
  jam(sender: string | undefined): void;
  stop(): Promise<void>;
}

export function limitPendingPerSender(proxy: RpcProxy, provider: JsonRpcProvider, senders: readonly string[], limit: number): PendingLimit {
  const mined = new Map<string, number>();
  const forwarded = new Map<string, Set<number>>();
  let jammed: string | undefined;
  let refused = 0;
  let polling = true;
  const poll = (async () => {
    while (polling) {
      for (const address of senders) mined.set(address, await provider.getTransactionCount(address, "latest").catch(() => mined.get(address) ?? 0));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  proxy.fault = {
    kind: "script",
    answer: ({ method, params }) => {
      if (method !== "eth_sendRawTransaction") return undefined;
      const transaction = Transaction.from(String(params[0]));
      const sender = transaction.from as string;
      if (sender === jammed) return { result: transaction.hash };
      const sent = forwarded.get(sender) ?? new Set<number>();
      forwarded.set(sender, sent);
      const minedCount = mined.get(sender) ?? 0;
      for (const sentNonce of sent) if (sentNonce < minedCount) sent.delete(sentNonce);
      if (!sent.has(transaction.nonce) && transaction.nonce !== minedCount && sent.size >= limit) {
        refused++;
        return { error: { code: -32000, message: "txpool is full" } };
      }
      sent.add(transaction.nonce);
      return undefined;
    },
  };
  return {
    get refused() {
      return refused;
    },
    jam: (sender) => (jammed = sender),
    async stop() {
      polling = false;
      await poll;
      proxy.fault = undefined;
    },
  };
}
