/**
 * Whether the node holds a transaction it has just refused in words. Some nodes answer a transaction they
 * already hold with a refusal: ganache says "transaction underpriced" to the very bytes in its pool, and a
 * gateway that retried a broadcast on another backend may pass on that backend's refusal. Words that prove
 * "not taken" are checked against the node's own record of the hash before a client is told nothing was
 * sent.
 */
import { type JsonRpcProvider, keccak256 } from "ethers";

/** Times the node is asked before its refusal's words are taken as they are. */
const ASKS = 3;

/**
 * True when the node returns the transaction, false when it answers that it has none, or does not answer
 * ASKS times in a row (the words stand then, as they did before this check: holding a transfer that every
 * re-send is refused would jam the wallet behind its nonce).
 */
export async function heldByNode(provider: Pick<JsonRpcProvider, "send">, rawTransaction: string): Promise<boolean> {
  const hash = keccak256(rawTransaction);
  for (let ask = 1; ; ask++) {
    try {
      return (await provider.send("eth_getTransactionByHash", [hash])) != null;
    } catch {
      if (ask === ASKS) return false;
      await new Promise((resolve) => setTimeout(resolve, 100 * ask));
    }
  }
}
