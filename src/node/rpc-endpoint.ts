/**
 * One JSON-RPC endpoint: its URL (which can carry a provider's key, so only `label` is ever shown), at
 * most a bounded number of requests at once, a bounded request time, and its health. `call` sends one
 * request and says what came of it without throwing, so that callers can weigh several endpoints' answers.
 */
import { isUtf8 } from "node:buffer";
import { type JsonRpcPayload, type JsonRpcResult, makeError } from "ethers";
import { CallGate } from "./call-gate.js";
import { type EndpointFault, EndpointHealth, type EndpointState } from "./endpoint-health.js";
import { refusesBatches } from "./json-rpc-batch.js";
import { httpStatusOf, readNodeAnswer } from "./node-answers.js";
import { RpcTransport } from "./rpc-transport.js";

/** Told about every request to an endpoint: its method, how it ended, how long it took, and which endpoint (host only). */
export type RpcObserver = (method: string, outcome: "ok" | "rpc_error" | "transport_error", seconds: number, endpoint: string) => void;

/** What came of one request: the endpoint's JSON-RPC answer, or the error thrown on the way (no answer). */
export type CallOutcome = { results: JsonRpcResult[] } | { thrown: unknown };

/** Settings every request shares. */
export interface EndpointOptions {
  timeoutMs: number;
  /** At most this many requests to the endpoint at once (RPC_MAX_IN_FLIGHT); the rest wait their turn. */
  maxInFlight: number;
  /**
   * The only endpoint: it retries an HTTP 429 itself and is used whatever its health, as a single RPC_URL
   * always was. One of several moves on to the next endpoint at once instead, and is left out while unwell.
   */
  alone: boolean;
  observe?: RpcObserver;
  /** The clock of its health (tests). */
  now?: () => number;
  onStateChange?: (endpoint: string, state: EndpointState, reason: string | null) => void;
}

/** A lone endpoint's HTTP 429 is asked again: four tries in about a second and a half, so a client is not held long. */
const RATE_LIMIT_RETRY = { maxAttempts: 4, slotInterval: 100 };

// Words of an endpoint that has not reached the block a call reads at (geth, Erigon, Nethermind, Besu,
// hosted gateways), or has pruned its state: another endpoint may have it. Only ever a reason to ask elsewhere.
const LACKS_BLOCK = /header not found|unknown block|block not found|missing trie node|state (is )?not available|resource not found/i;

export class RpcEndpoint {
  readonly label: string;
  readonly health: EndpointHealth;
  readonly #transport: RpcTransport;
  readonly #gate: CallGate;
  readonly #observe: RpcObserver | undefined;

  constructor(url: string, label: string, options: EndpointOptions) {
    this.label = label;
    this.health = new EndpointHealth(label, options.onStateChange, options.now, !options.alone);
    // One of several moves on to the next endpoint at once on a 429, instead of asking again.
    this.#transport = new RpcTransport(url, options.timeoutMs, options.maxInFlight, options.alone ? RATE_LIMIT_RETRY : undefined);
    this.#gate = new CallGate(options.maxInFlight);
    this.#observe = options.observe;
  }

  /** Requests to it sent (or waiting for a turn) and not answered yet. */
  get underWay(): number {
    return this.#gate.underWay;
  }

  /** Closes its connections (the provider is destroyed). */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /**
   * Sends one request (waiting for a turn first) and records how it went; never throws. With `whileIn`, a
   * request whose turn comes after the endpoint was left out is not sent (a read then asks the next
   * endpoint at once, rather than waiting behind requests to an endpoint that hangs).
   */
  call(payload: JsonRpcPayload | JsonRpcPayload[], whileIn = false): Promise<CallOutcome> {
    return this.#gate.run(async () => {
      if (whileIn && this.health.state !== "in") return { thrown: makeError(`${this.label} was left out before this request's turn`, "NETWORK_ERROR") };
      return this.#send(payload);
    });
  }

  async #send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<CallOutcome> {
    const started = performance.now();
    let outcome: CallOutcome;
    try {
      const body = jsonOf(await this.#transport.post(JSON.stringify(payload)));
      const results = Array.isArray(body) ? body : [body];
      // An HTTP 200 whose body is not JSON-RPC (a gateway's page, a bare value) is no answer.
      if (results.length === 0 || !results.every(isJsonRpcAnswer)) throw makeError("the endpoint's reply is not a JSON-RPC answer", "BAD_DATA", { value: body });
      outcome = { results: results as JsonRpcResult[] };
    } catch (error) {
      outcome = { thrown: error };
    }
    const elapsedMs = performance.now() - started;
    // A batch refused for what it is says nothing of how the endpoint serves calls alone.
    const fault = Array.isArray(payload) && refusedAsBatch(outcome) ? undefined : faultOf(outcome);
    if (fault) this.health.recordFault(fault, elapsedMs);
    else this.health.recordAnswer(elapsedMs);
    this.#observeEach(payload, outcome, elapsedMs / 1000);
    return outcome;
  }

  // Every call of a batch is told as one request of its method (hosted endpoints bill per call), with the
  // batch's time; a call the batch's answer left out is told as an error.
  #observeEach(payload: JsonRpcPayload | JsonRpcPayload[], outcome: CallOutcome, seconds: number): void {
    const observe = this.#observe;
    if (!observe) return;
    for (const call of Array.isArray(payload) ? payload : [payload]) {
      const answer = "thrown" in outcome ? undefined : Array.isArray(payload) ? outcome.results.find((result) => result.id === call.id) : outcome.results[0];
      observe(call.method, "thrown" in outcome ? "transport_error" : answer === undefined || "error" in answer ? "rpc_error" : "ok", seconds, this.label);
    }
  }
}

// The reply's body as JSON, as ethers' bodyJson read it (and fails: not UTF-8, or not JSON, is no answer;
// Buffer's decoding alone would put U+FFFD for bad bytes, and a node's words then read as they were not sent).
function jsonOf(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) throw makeError("response body is not valid UTF-8", "UNSUPPORTED_OPERATION", { operation: "bodyText" });
  const text = bytes.toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    throw makeError("response body is not valid JSON", "UNSUPPORTED_OPERATION", { operation: "bodyJson" });
  }
}

function isJsonRpcAnswer(value: unknown): boolean {
  return typeof value === "object" && value !== null && ("result" in value || "error" in value);
}

/**
 * Whether a batch's outcome refuses it for what it is (too large, or batches not taken on this plan): an HTTP
 * 4xx other than 408 and 429, or one error for the whole batch about batches. The endpoint answered.
 */
export function refusedAsBatch(outcome: CallOutcome): boolean {
  if ("thrown" in outcome) {
    const status = httpStatusOf(outcome.thrown);
    return status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
  }
  const [only] = outcome.results;
  return outcome.results.length === 1 && only !== undefined && refusesBatches(only);
}

/** The fault an outcome shows about its endpoint, if any: no answer, a rate limit, or a time-out in words. */
export function faultOf(outcome: CallOutcome): EndpointFault | undefined {
  if ("thrown" in outcome) {
    const { meaning } = readNodeAnswer(outcome.thrown);
    if (meaning === "rate-limited") return "rate-limited";
    if (meaning === "connection-refused") return "refused";
    return (outcome.thrown as { code?: unknown } | null)?.code === "TIMEOUT" ? "time-out" : "no-answer";
  }
  // Any call of a batch the endpoint could not serve for its own reasons makes the batch's fault.
  for (const result of outcome.results) {
    if (!("error" in result)) continue;
    const { meaning } = readNodeAnswer({ error: result.error });
    if (meaning === "rate-limited") return "rate-limited";
    if (meaning === "no-answer") return "time-out";
  }
  return undefined;
}

/** True when the endpoint answered that it lacks the block (or state) the call (or any call of a batch) reads at. */
export function lacksBlock(outcome: CallOutcome): boolean {
  if ("thrown" in outcome) return false;
  return outcome.results.some((result) => "error" in result && LACKS_BLOCK.test(String((result.error as { message?: unknown }).message)));
}

/** The JSON-RPC error of an answer, when it is one. */
export function errorIn(outcome: CallOutcome): { code?: number; message?: string; data?: unknown } | undefined {
  if ("thrown" in outcome) return undefined;
  const [first] = outcome.results;
  return first && "error" in first ? (first.error as { code?: number; message?: string }) : undefined;
}

/** The outcome as ethers' provider expects it from `_send`: the answer, or the error thrown again. */
export function deliver(outcome: CallOutcome): JsonRpcResult[] {
  if ("thrown" in outcome) throw outcome.thrown;
  return outcome.results;
}
