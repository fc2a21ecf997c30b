/**
 * Calls made in the same turn of the event loop, sent together as one JSON-RPC batch. Under load many
 * transfers run their pre-flight at once; one request for all of their estimates spares the process and the
 * node an HTTP request each (at concurrency 50, about a tenth of the service's CPU a transfer). The broadcasts
 * of one journal commit likewise leave in one turn: one batch per endpoint (rpc-provider.ts). Nothing waits
 * for a timer: the calls of one turn go at the end of it, and a call alone goes alone, as before.
 *
 * An endpoint that does not answer a batch call by call (some hosted plans refuse batches, or cap their
 * size: one error for all of it, fewer answers than calls, an HTTP 4xx) gets each call of that batch again
 * alone, and no batch from then on. So does one that fails batches where the same calls alone are answered
 * (an HTTP 5xx, a reply that is not JSON-RPC), three batches in a row. A batch that met a time-out, a refused
 * connection or a rate limit is not sent again call by call: each call gets what the batch got, as it would
 * have alone. One error for the whole batch that says the endpoint is busy or slow is the endpoint's answer
 * to each of its calls.
 */
import type { JsonRpcPayload, JsonRpcResult } from "ethers";
import { type BatchAnswers, type RpcAnswer, readBatchAnswers } from "./json-rpc-batch.js";
import { httpStatusOf } from "./node-answers.js";
import { faultOf, refusedAsBatch } from "./rpc-endpoint.js";

/** Batches failed in a row where their calls alone were answered, before batches are given up. */
const FAILED_BATCHES_BEFORE_ALONE = 3;

/** Sends a call, or several as a batch, and answers what the endpoint said to each (in any order, by id). */
export type SendCalls = (payload: JsonRpcPayload | JsonRpcPayload[]) => Promise<JsonRpcResult[]>;

/** What the answer to a call sent again alone, after its batch got no answer call by call, is taken for. */
export type ResentAfterBatch = (alone: Promise<JsonRpcResult[]>) => Promise<JsonRpcResult[]>;

interface WaitingCall {
  payload: JsonRpcPayload;
  resolve: (answers: JsonRpcResult[]) => void;
  reject: (error: unknown) => void;
}

export class TurnBatch {
  readonly #send: SendCalls;
  readonly #maxCalls: number;
  readonly #onRefused: (reason: string) => void;
  readonly #idle: () => boolean;
  readonly #resentAfterBatch: ResentAfterBatch;
  #waiting: WaitingCall[] = [];
  #refused = false;
  #failedInARow = 0;

  /**
   * `maxCalls` (RPC_BATCH_MAX_CALLS): at most this many calls in one batch; 1 sends every call alone.
   * `idle`: whether no request to the endpoint is under way; a call made then goes at once, alone.
   * `resentAfterBatch`: what a call's answer stands for when it was sent alone after its batch got no
   * answer call by call (the endpoint may have acted on the batch all the same): by default, the answer.
   */
  constructor(send: SendCalls, maxCalls: number, onRefused: (reason: string) => void, idle: () => boolean = () => false, resentAfterBatch: ResentAfterBatch = (answer) => answer) {
    this.#send = send;
    this.#maxCalls = maxCalls;
    this.#onRefused = onRefused;
    this.#idle = idle;
    this.#resentAfterBatch = resentAfterBatch;
  }

  /** Sends `payload` with the other calls of this turn; answers as `send` would for it alone. */
  call(payload: JsonRpcPayload): Promise<JsonRpcResult[]> {
    if (this.#refused || this.#maxCalls === 1) return this.#send(payload);
    // No load to share a request with: the call leaves now, before the rest of the turn (a journal
    // commit's fsync above all) holds the thread.
    if (this.#waiting.length === 0 && this.#idle()) return this.#send(payload);
    return new Promise((resolve, reject) => {
      // At the end of the loop's turn: the calls of every request read from the sockets in it go together.
      if (this.#waiting.push({ payload, resolve, reject }) === 1) setImmediate(() => this.#sendWaiting());
    });
  }

  #sendWaiting(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (let start = 0; start < waiting.length; start += this.#maxCalls) void this.#sendGroup(waiting.slice(start, start + this.#maxCalls));
  }

  async #sendGroup(group: WaitingCall[]): Promise<void> {
    if (group.length === 1 || this.#refused) {
      await this.#sendEachAlone(group, false);
      return;
    }
    const payloads = group.map((call) => call.payload);
    let read: BatchAnswers;
    try {
      read = readBatchAnswers(payloads, await this.#send(payloads));
    } catch (error) {
      if (refusedAsBatch({ thrown: error })) {
        // Its status only: an error's words may quote the reply, and a reply can echo the request's URL (a provider's key).
        this.#giveUp(`the endpoint refused a batch of ${group.length} calls with HTTP ${String(httpStatusOf(error))}`);
        await this.#sendEachAlone(group, true);
        return;
      }
      const fault = faultOf({ thrown: error });
      if (fault !== "no-answer") {
        for (const call of group) call.reject(error);
        return;
      }
      const answeredAlone = await this.#sendEachAlone(group, true);
      if (answeredAlone && ++this.#failedInARow >= FAILED_BATCHES_BEFORE_ALONE) this.#giveUp(`${FAILED_BATCHES_BEFORE_ALONE} batches in a row got no answer where their calls alone did`);
      return;
    }
    if ("refused" in read) {
      this.#giveUp(read.refused);
      await this.#sendEachAlone(group, true);
      return;
    }
    this.#failedInARow = 0;
    for (const call of group) call.resolve(["busy" in read ? { ...read.busy, id: call.payload.id } : (read.byId.get(call.payload.id) as RpcAnswer)] as JsonRpcResult[]);
  }

  #giveUp(reason: string): void {
    if (this.#refused) return;
    this.#refused = true;
    this.#onRefused(reason);
  }

  // True when every call got an answer alone. `afterBatch`: the group was sent as a batch first.
  async #sendEachAlone(group: WaitingCall[], afterBatch: boolean): Promise<boolean> {
    const answered = await Promise.all(
      group.map((call) => {
        const alone = this.#send(call.payload);
        (afterBatch ? this.#resentAfterBatch(alone) : alone).then(call.resolve, call.reject);
        return alone.then(
          () => true,
          () => false,
        );
      }),
    );
    return answered.every(Boolean);
  }
}
