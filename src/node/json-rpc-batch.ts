/**
 * Several reads in one JSON-RPC batch: one request, one round trip, for reads that belong to the same block.
 * Endpoints answer a batch's calls in any order (matched here by id); one that does not take batches at all
 * (some hosted plans) answers a single error, or fewer answers than calls: that is `BatchRefused`, and the
 * caller reads call by call instead.
 */
import type { JsonRpcApiProvider, JsonRpcError, JsonRpcPayload, JsonRpcResult } from "ethers";
import { readNodeAnswer } from "./node-answers.js";

// A whole batch refused for what it is: "batch size exceed limit 500", "Number of requests exceeds max batch size".
const BATCH_REFUSAL = /batch/i;

/** Whether an endpoint's answer is one error about batches as such (too large, not taken), whatever its code. */
export function refusesBatches(answer: RpcAnswer): boolean {
  return "error" in answer && BATCH_REFUSAL.test(String((answer.error as { message?: unknown }).message));
}

/** One call of a batch. */
export interface RpcCall {
  method: string;
  params: unknown[];
}

/** The endpoint did not answer the batch call by call. */
export class BatchRefused extends Error {
  override name = "BatchRefused";
}

/** How an endpoint answered a batch: an answer for every call (by id), one error for the whole batch that
 * says the endpoint is busy or slow (that, not a refusal of batches), or not call by call (`refused` says how). */
export type BatchAnswers = { byId: Map<number, RpcAnswer> } | { busy: JsonRpcError } | { refused: string };

/** What an endpoint answers one call. */
export type RpcAnswer = JsonRpcResult | JsonRpcError;

/** Reads `answers` to the batch `payloads` (endpoints answer a batch's calls in any order). */
export function readBatchAnswers(payloads: readonly JsonRpcPayload[], answers: readonly RpcAnswer[]): BatchAnswers {
  const byId = new Map(answers.map((answer) => [answer.id, answer]));
  if (payloads.every((payload) => byId.has(payload.id))) return { byId };
  const [only] = answers;
  // Busy: one error for the batch as such, under no call's id (an error that answers one call is that call's,
  // and the others were left unanswered: not call by call). Besu and some gateways refuse an oversized batch
  // in the words and code of a rate limit (-32005): a refusal of batches, not a busy endpoint.
  const forTheBatch = only !== undefined && !payloads.some((payload) => payload.id === only.id);
  if (answers.length === 1 && forTheBatch && "error" in only && !refusesBatches(only) && ["rate-limited", "no-answer"].includes(readNodeAnswer({ error: only.error }).meaning)) return { busy: only };
  const words = only && "error" in only ? `: ${String((only.error as { message?: unknown }).message)}` : "";
  return { refused: `the endpoint answered ${answers.length} of a batch of ${payloads.length} calls${words}` };
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
  const read = readBatchAnswers(payloads, await provider._send(payloads));
  if ("busy" in read) throw provider.getRpcError(payloads[0], read.busy);
  if ("refused" in read) throw new BatchRefused(read.refused);
  return payloads.map((payload) => {
    const answer = read.byId.get(payload.id) as RpcAnswer;
    return "error" in answer ? { status: "rejected", reason: provider.getRpcError(payload, answer) } : { status: "fulfilled", value: answer.result };
  });
}
