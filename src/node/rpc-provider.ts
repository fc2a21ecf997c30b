/**
 * The JSON-RPC connection to the chain: one provider per process, over one endpoint or several (RPC_URL,
 * comma-separated). A read goes to one endpoint and, when it gets no answer there, to the next; a raw
 * transaction goes to every endpoint in rotation at once. One endpoint behaves as a single RPC_URL always did.
 */
import { FetchRequest, type JsonRpcError, JsonRpcProvider, type JsonRpcPayload, type JsonRpcResult, makeError } from "ethers";
import { broadcastOutcomeToReport, tookIt, unprovenResend } from "./broadcast-answers.js";
import { blockNumberReadAt, headIn, hexQuantity, readsHead } from "./call-blocks.js";
import type { EndpointState } from "./endpoint-health.js";
import { EndpointSet } from "./endpoint-set.js";
import { TurnBatch } from "./turn-batch.js";
import { type CallOutcome, RpcEndpoint, type RpcObserver, deliver, errorIn, faultOf, lacksBlock } from "./rpc-endpoint.js";

export type { RpcObserver } from "./rpc-endpoint.js";

/** Options every request to the endpoints shares. */
export interface RpcOptions {
  rpcUrls: readonly string[];
  timeoutMs: number;
  /** At most this many requests to each endpoint at once (RPC_MAX_IN_FLIGHT); the rest wait their turn. */
  maxInFlight: number;
  observe?: RpcObserver;
  onStateChange?: (endpoint: string, state: EndpointState, reason: string | null) => void;
}

/** The endpoints, named by host (a second one on the same host gets "#2"), not yet checked. */
export function createEndpoints(options: RpcOptions): RpcEndpoint[] {
  const labels: string[] = [];
  return options.rpcUrls.map((url) => {
    const host = describeRpcUrl(url);
    const label = labels.includes(host) ? `${host}#${labels.filter((taken) => taken.startsWith(host)).length + 1}` : host;
    labels.push(label);
    return new RpcEndpoint(url, label, { ...options, alone: options.rpcUrls.length === 1 });
  });
}

/** Asks one endpoint a method without parameters that answers a quantity (a chain id, a head); undefined without one. */
export async function askEndpoint(endpoint: RpcEndpoint, method: "eth_chainId" | "eth_blockNumber"): Promise<bigint | undefined> {
  const outcome = await endpoint.call({ jsonrpc: "2.0", id: 1, method, params: [] });
  if ("thrown" in outcome || errorIn(outcome)) return undefined;
  const [first] = outcome.results as { result?: unknown }[];
  return hexQuantity(first?.result);
}

/** Ties endpoints to the chain they serve, with the probe that brings left-out ones back. */
export function endpointSetOf(endpoints: readonly RpcEndpoint[], chainId: bigint, maxLagBlocks: number): EndpointSet {
  return new EndpointSet(endpoints, maxLagBlocks, chainId, askEndpoint);
}

/**
 * How the provider batches: at most `maxCalls` calls in one request; `onRefused` hears once that batches
 * were given up, of estimates (one batcher for every endpoint) or of broadcasts to one endpoint (`endpoint`,
 * its label).
 */
export interface BatchOptions {
  maxCalls: number;
  onRefused: (reason: string, calls: { kind: "estimates" } | { kind: "broadcasts"; endpoint: string }) => void;
}

// The pre-flight of a transfer, made by many transfers at once under load: sent together when made in one turn.
const BATCHED_IN_TURN = new Set(["eth_estimateGas", "eth_call"]);

/**
 * A JsonRpcProvider over an endpoint set: bound to a known chain (it never re-detects the network). Every
 * call leaves at once: ethers' own queue waits for a timer (at least a millisecond) before each, which put
 * two milliseconds into every transfer. Estimates and calls at the latest block made in the same turn of
 * the event loop while other requests are under way go together (turn-batch.ts), to the endpoint that
 * serves the read; so do raw transactions, to each endpoint they are broadcast to (one batch per endpoint,
 * each call weighed across the endpoints as alone); everything else on its own.
 */
class EndpointSetProvider extends JsonRpcProvider {
  readonly #turn: TurnBatch;
  // The broadcasts of one turn, per endpoint: a batch to each while requests to it are under way.
  readonly #broadcastTurns: Map<RpcEndpoint, TurnBatch>;
  #nextId = 1;
  // Requests to the endpoints sent and not answered yet.
  #underWay = 0;

  constructor(
    readonly endpoints: EndpointSet,
    firstUrl: string,
    batches: BatchOptions,
  ) {
    super(new FetchRequest(firstUrl), endpoints.chainId, { staticNetwork: true, batchMaxCount: 1 });
    this.#turn = new TurnBatch((payload) => this.#sendNow(payload), batches.maxCalls, (reason) => batches.onRefused(reason, { kind: "estimates" }), () => this.#underWay === 0);
    this.#broadcastTurns = new Map(
      endpoints.endpoints.map((endpoint) => [
        endpoint,
        new TurnBatch(
          async (payload) => {
            // A batch gathered before the provider was destroyed (at close) does not leave after it.
            if (this.destroyed) throw makeError("provider destroyed; cancelled request", "UNSUPPORTED_OPERATION", { operation: "eth_sendRawTransaction" });
            return deliver(await endpoint.call(payload));
          },
          batches.maxCalls,
          (reason) => batches.onRefused(reason, { kind: "broadcasts", endpoint: endpoint.label }),
          () => endpoint.underWay === 0,
          unprovenResend,
        ),
      ]),
    );
  }

  override destroy(): void {
    super.destroy();
    for (const endpoint of this.endpoints.endpoints) void endpoint.close().catch(() => undefined);
  }

  /** As ethers' own send answers a call (the node's error as ethers reads it, its debug events), without its queue. */
  override async send(method: string, params: unknown[] | Record<string, unknown>): Promise<unknown> {
    if (this.destroyed) return super.send(method, params);
    this._start();
    const payload: JsonRpcPayload = { method, params, id: this.#nextId++, jsonrpc: "2.0" };
    void this.emit("debug", { action: "sendRpcPayload", payload });
    let results: JsonRpcResult[];
    try {
      results = await this._send(payload);
    } catch (error) {
      void this.emit("debug", { action: "receiveRpcError", error });
      throw error;
    }
    void this.emit("debug", { action: "receiveRpcResult", result: results });
    if (this.destroyed) throw makeError("provider destroyed; cancelled request", "UNSUPPORTED_OPERATION", { operation: method });
    const answer = results.find((result) => result.id === payload.id);
    if (!answer) {
      const error = makeError("missing response for request", "BAD_DATA", { value: results, info: { payload } });
      void this.emit("error", error);
      throw error;
    }
    if ("error" in answer) throw this.getRpcError(payload, answer as unknown as JsonRpcError);
    return answer.result;
  }

  override _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    if (!Array.isArray(payload) && BATCHED_IN_TURN.has(payload.method) && blockNumberReadAt(payload.method, paramsOf(payload)) === undefined) return this.#turn.call(payload);
    return this.#sendNow(payload);
  }

  async #sendNow(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    // A batch gathered before the provider was destroyed (at close) does not leave after it.
    if (this.destroyed) throw makeError("provider destroyed; cancelled request", "UNSUPPORTED_OPERATION", { operation: Array.isArray(payload) ? "batch" : payload.method });
    this.#underWay++;
    try {
      return await this.#sendToEndpoints(payload);
    } finally {
      this.#underWay--;
    }
  }

  async #sendToEndpoints(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    // A batch reads at its highest block (the reads of one block go together): an endpoint that reached it first.
    if (Array.isArray(payload)) return deliver(await this.#read(this.endpoints.readOrder(highestBlockReadAt(payload)), payload));
    const params = paramsOf(payload);
    if (payload.method === "eth_sendRawTransaction") return deliver(await this.#broadcast(payload));
    if (readsHead(payload.method, params)) return deliver(await this.#read(this.endpoints.headReadOrder(), payload));
    return deliver(await this.#read(this.endpoints.readOrder(blockNumberReadAt(payload.method, params)), payload));
  }

  /**
   * Tries the endpoints in order until one answers. An endpoint that lacks the block a call reads at (its
   * words, or a null block at a number) is passed over for the next; its answer stands when none has it.
   */
  async #read(order: readonly RpcEndpoint[], payload: JsonRpcPayload | JsonRpcPayload[]): Promise<CallOutcome> {
    let outcome: CallOutcome | undefined;
    let lacking: CallOutcome | undefined;
    for (const endpoint of order) {
      outcome = await endpoint.call(payload, endpoint.health.state === "in");
      if (faultOf(outcome) !== undefined) continue;
      this.endpoints.recordAnsweredWhileNoneIn(endpoint);
      if (lacksBlock(outcome) || (!Array.isArray(payload) && isMissingBlock(payload, outcome))) {
        lacking ??= outcome;
        continue;
      }
      if (!Array.isArray(payload) && readsHead(payload.method, payload.params as unknown[]) && "results" in outcome) {
        const head = headIn(payload.method, (outcome.results[0] as { result?: unknown } | undefined)?.result);
        if (head !== undefined) this.endpoints.recordHead(endpoint, head);
      }
      return outcome;
    }
    if (lacking) return lacking;
    if (!outcome) throw new Error("no RPC endpoint on the chain to ask");
    return outcome;
  }

  /**
   * Sends a raw transaction to every endpoint in rotation at once and answers as soon as one takes it. When
   * none answered at all, the endpoints left out are tried too. See broadcast-answers.ts for what is
   * reported when none takes it.
   */
  async #broadcast(payload: JsonRpcPayload): Promise<CallOutcome> {
    const targets = this.endpoints.broadcastTargets();
    const first = await sendToAll(targets, (endpoint) => this.#broadcastTo(endpoint, payload));
    if (first.taken) return first.taken;
    const others = this.endpoints.otherThan(targets);
    if (others.length === 0 || first.outcomes.some((outcome) => faultOf(outcome) === undefined)) return broadcastOutcomeToReport(first.outcomes);
    const second = await sendToAll(others, (endpoint) => this.#broadcastTo(endpoint, payload));
    return second.taken ?? broadcastOutcomeToReport([...first.outcomes, ...second.outcomes]);
  }

  // One endpoint's answer to one raw transaction, sent with the others of this turn to it.
  #broadcastTo(endpoint: RpcEndpoint, payload: JsonRpcPayload): Promise<CallOutcome> {
    const turn = this.#broadcastTurns.get(endpoint) as TurnBatch;
    return turn.call(payload).then(
      (results): CallOutcome => ({ results }),
      (thrown: unknown): CallOutcome => ({ thrown }),
    );
  }
}

function paramsOf(payload: JsonRpcPayload): unknown[] {
  return Array.isArray(payload.params) ? (payload.params as unknown[]) : [];
}

function highestBlockReadAt(payloads: readonly JsonRpcPayload[]): number | undefined {
  const blocks = payloads.map((payload) => blockNumberReadAt(payload.method, paramsOf(payload))).filter((block) => block !== undefined);
  return blocks.length === 0 ? undefined : Math.max(...blocks);
}

// A block read by number that came back null: the endpoint has not reached it (geth answers so).
function isMissingBlock(payload: JsonRpcPayload, outcome: CallOutcome): boolean {
  if (payload.method !== "eth_getBlockByNumber" || blockNumberReadAt(payload.method, payload.params as unknown[]) === undefined) return false;
  return "results" in outcome && (outcome.results[0] as { result?: unknown } | undefined)?.result === null;
}

/**
 * Sends to every endpoint at once (`send`); settles with the first that took it, or with every outcome (in
 * the endpoints' order, so that what is reported does not depend on who answered first) when none did.
 */
function sendToAll(endpoints: readonly RpcEndpoint[], send: (endpoint: RpcEndpoint) => Promise<CallOutcome>): Promise<{ taken?: CallOutcome; outcomes: CallOutcome[] }> {
  if (endpoints.length === 0) throw new Error("no RPC endpoint on the chain to send to");
  return new Promise((resolve) => {
    const outcomes: (CallOutcome | undefined)[] = endpoints.map(() => undefined);
    let answered = 0;
    let settled = false;
    endpoints.forEach((endpoint, index) => {
      // The endpoints still under way when one took it finish in the background.
      void send(endpoint)
        .catch((error: unknown): CallOutcome => ({ thrown: error }))
        .then((outcome) => {
          outcomes[index] = outcome;
          answered++;
          if (settled) return;
          if (tookIt(outcome)) {
            settled = true;
            resolve({ taken: outcome, outcomes: outcomes.filter((each) => each !== undefined) });
          } else if (answered === endpoints.length) {
            settled = true;
            resolve({ outcomes: outcomes.filter((each) => each !== undefined) });
          }
        });
    });
  });
}

/** A provider over `endpoints`, which serve chain `endpoints.chainId`. */
export function createRpcProvider(endpoints: EndpointSet, firstUrl: string, batches: BatchOptions): JsonRpcProvider & { endpoints: EndpointSet } {
  return new EndpointSetProvider(endpoints, firstUrl, batches);
}

/** The node's host for logs and messages; the path, query and credentials can hold API keys and are left out. */
function describeRpcUrl(rpcUrl: string): string {
  try {
    const url = new URL(rpcUrl);
    return `${url.protocol}//${url.host}`;
  } catch {
    return "(unparseable RPC_URL)";
  }
}
