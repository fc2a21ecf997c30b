/**
 * Several reads in one JSON-RPC batch: one request, one round trip, for reads that belong to the same block.
 * Endpoints answer a batch's calls in any order (matched here by id); one that does not take batches at all
 * (some hosted plans) answers a single error, or fewer answers than calls: that is `BatchRefused`, and the
 * caller reads call by call instead.
 */
import type { JsonRpcApiProvider, JsonRpcPayload } from "ethers";
import { readNodeAnswer } from "./node-answers.js";

/** One call of a batch. */
export interface RpcCall {
  method: string;
  params: unknown[];
}

/** The endpoint did not answer the batch call by call. */
export class BatchRefused extends Error {
  override name = "BatchRefused";
}

/**
 * What became of every call, in the order given: its result, or the error the node answered it with, as
 * ethers would have thrown it for the call alone (so that readNodeAnswer reads it the same way). Throws
 * when the request itself got no answer, and BatchRefused when the answer is not one per call.
 */
export async function sendBatch(provider: JsonRpcApiProvider, calls: readonly RpcCall[]): Promise<PromiseSettledResult<unknown>[]> {
  const payloads: JsonRpcPayload[] = calls.map((call, index) => ({ jsonrpc: "2.0", id: index + 1, method: call.method, params: call.params }));
  // As ethers tells of the calls it sends itself (what counts a process's calls listens to this).
  void provider.emit("debug", { action: "sendRpcPayload", payload: payloads });
  const answers = await provider._send(payloads);
  const byId = new Map(answers.map((answer) => [answer.id, answer]));
  if (payloads.some((payload) => !byId.has(payload.id))) {
    const [only] = answers;
    // One error for the whole batch that says the endpoint is busy or slow is that, not a refusal of batches.
    if (only && "error" in only && ["rate-limited", "no-answer"].includes(readNodeAnswer({ error: only.error }).meaning)) throw provider.getRpcError(payloads[0], only);
    const words = only && "error" in only ? `: ${String((only.error as { message?: unknown }).message)}` : "";
    throw new BatchRefused(`the endpoint answered ${answers.length} of a batch of ${payloads.length} calls${words}`);
  }
  return payloads.map((payload) => {
    const answer = byId.get(payload.id) as (typeof answers)[number];
    return "error" in answer ? { status: "rejected", reason: provider.getRpcError(payload, answer) } : { status: "fulfilled", value: answer.result };
  });
}
