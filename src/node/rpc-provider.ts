/** The JSON-RPC connection to the node: one provider per process, with a bounded request time. */
import { FetchRequest, JsonRpcProvider, type JsonRpcPayload, type JsonRpcResult, makeError } from "ethers";
import { CallGate } from "./call-gate.js";

/** Options every request to the node shares. */
export interface RpcOptions {
  rpcUrl: string;
  timeoutMs: number;
  /** At most this many requests to the node at once (RPC_MAX_IN_FLIGHT); the rest wait their turn. */
  maxInFlight: number;
}

/**
 * ethers retries an HTTP 429 itself, with exponential backoff and jitter; four tries in about a second
 * and a half, rather than its twelve over minutes, so a client is not held that long.
 */
const RATE_LIMIT_RETRY = { maxAttempts: 4, slotInterval: 100 };

function newRequest({ rpcUrl, timeoutMs }: Omit<RpcOptions, "maxInFlight">): FetchRequest {
  const request = new FetchRequest(rpcUrl);
  request.timeout = timeoutMs;
  request.setThrottleParams(RATE_LIMIT_RETRY);
  return request;
}

/**
 * Asks the node for its chain id with a single request. Used before the provider exists, because a
 * JsonRpcProvider that detects its network by itself retries forever when the node is down.
 */
export async function fetchChainId(options: Omit<RpcOptions, "maxInFlight">): Promise<bigint> {
  const request = newRequest(options);
  request.body = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };
  const response = await request.send();
  response.assertOk();
  const payload = response.bodyJson as { result?: string; error?: unknown };
  if (typeof payload.result !== "string") {
    throw makeError("eth_chainId returned no result", "BAD_DATA", { value: payload });
  }
  return BigInt(payload.result);
}

/** Told about every request to the node: its method, how it ended, and how long it took. */
export type RpcObserver = (method: string, outcome: "ok" | "rpc_error" | "transport_error", seconds: number) => void;

/**
 * A JsonRpcProvider that sends at most a bounded number of requests at once and reports each request to an
 * observer (metrics), timed from when it was sent.
 */
class GatedJsonRpcProvider extends JsonRpcProvider {
  constructor(
    request: FetchRequest,
    chainId: bigint,
    private readonly gate: CallGate,
    private readonly observe: RpcObserver | undefined,
  ) {
    super(request, chainId, { staticNetwork: true, batchMaxCount: 1 });
  }

  override _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    return this.gate.run(() => (this.observe ? this.#sendObserved(payload, this.observe) : super._send(payload)));
  }

  async #sendObserved(payload: JsonRpcPayload | JsonRpcPayload[], observe: RpcObserver): Promise<JsonRpcResult[]> {
    const started = performance.now();
    const method = Array.isArray(payload) ? "batch" : payload.method;
    try {
      const results = await super._send(payload);
      observe(method, results.some((result) => "error" in result) ? "rpc_error" : "ok", (performance.now() - started) / 1000);
      return results;
    } catch (error) {
      observe(method, "transport_error", (performance.now() - started) / 1000);
      throw error;
    }
  }
}

/**
 * A provider bound to a known chain: it never re-detects the network, sends each call on its own (no
 * batching, whose stall would add latency to every request), and at most `maxInFlight` at once.
 */
export function createRpcProvider(options: RpcOptions, chainId: bigint, observe?: RpcObserver): JsonRpcProvider {
  return new GatedJsonRpcProvider(newRequest(options), chainId, new CallGate(options.maxInFlight), observe);
}

/** The node's host for logs and messages; the path, query and credentials can hold API keys and are left out. */
export function describeRpcUrl(rpcUrl: string): string {
  try {
    const url = new URL(rpcUrl);
    return `${url.protocol}//${url.host}`;
  } catch {
    return "(unparseable RPC_URL)";
  }
}
