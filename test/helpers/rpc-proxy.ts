/**
 * An HTTP proxy in front of anvil that can misbehave on demand, so that node faults a real node will not
 * produce when asked (time-outs, HTTP errors, refusals of one method) reach the service through its real
 * ethers stack. It also counts the JSON-RPC calls it forwards, by method.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Transaction } from "ethers";
import { request } from "undici";

export type ProxyFault =
  /** Never answers (only these methods, when given), and never forwards: the node never sees them. */
  | { kind: "hang"; methods?: readonly string[] }
  /** Forwards these methods to the node but never answers: the node acts, the caller never learns. */
  | { kind: "swallow-reply"; methods: readonly string[] }
  | { kind: "http-500" }
  /** Answers these methods with HTTP 429, as a rate-limited hosted endpoint does; nothing is forwarded. */
  | { kind: "http-429"; methods: readonly string[] }
  /** Answers these methods with a result of its own: a node that changed under the service. */
  | { kind: "rpc-result"; methods: readonly string[]; result: unknown }
  /**
   * Answers these methods with a JSON-RPC error. With `onlyNonce`, only a raw transaction with that nonce;
   * with `once`, only the first such call, then the fault is cleared; with `delayMs`, the answer comes late.
   */
  | { kind: "rpc-error"; message: string; methods: readonly string[]; once?: boolean; onlyNonce?: number; delayMs?: number }
  /**
   * A backend that lags behind (one node of a load-balanced endpoint): it does not know transactions or
   * receipts yet, and counts fewer transactions of every account.
   */
  | { kind: "lagging"; nonceCount: number }
  /**
   * A node whose pool holds the first transaction at this nonce but never mines it or counts it as
   * pending (anvil can end up so: foundry-rs/foundry#10122): it is not forwarded, it is found by its hash
   * unmined, and the same bytes again are "already known". Another transaction at the nonce is forwarded.
   * With `countedPending`, the node counts it among its sender's pending transactions too: a node that
   * took it at a fair price and never passed it on to the block builders; with `every`, it so holds every
   * transaction at the nonce, not only the first. `held` lists what it holds (hash -> raw), first first.
   * With `forgets`, it loses what it took between calls (a node that drops it unseen): not found by its
   * hash, and the same bytes again are taken afresh, never "already known".
   */
  | { kind: "hold-unmined"; nonce: number; countedPending?: boolean; every?: boolean; forgets?: boolean; held?: Map<string, string>; heldHash?: string; heldFrom?: string }
  /** Forwards, and words the node's errors of these methods as another implementation would. */
  | { kind: "reword-errors"; methods: readonly string[]; message: string }
  /** A node that slows down with load: every call waits this long for each call under way at the proxy. */
  | { kind: "slow-under-load"; msPerCallInFlight: number }
  /**
   * A test's own script: for each call, the JSON-RPC answer to give instead of the node's (`{result}` or
   * `{error}`), "hang" (never forwarded, never answered), "lost-reply" (forwarded, never answered), or
   * undefined to forward it.
   */
  | { kind: "script"; answer: (call: { method: string; params: unknown[] }) => ScriptedAnswer | Promise<ScriptedAnswer> };

/** What a script makes of one call. */
/**
 * A scripted call's answer: a result or an error of its own, no answer ("hang"), the node's answer lost
 * after it acted ("lost-reply"), the node's result changed by `transform` (as a backend that has not
 * indexed everything would answer), the call forwarded with other `params`, or undefined to forward it as it is.
 */
export type ScriptedAnswer =
  | { result: unknown }
  /** Forwarded with these parameters instead (a node that reads "latest" as an older block). */
  | { params: unknown[] }
  | { error: { code: number; message: string } }
  | { transform: (result: unknown) => unknown }
  /** Forwarded to the node, which acts on it; the caller gets this error instead of its answer (a gateway that retried on another backend). */
  | { errorAfterForward: { code: number; message: string } }
  | "hang"
  | "lost-reply"
  | undefined;

export interface RpcProxy {
  url: string;
  /** Calls forwarded (or answered with a fault) per JSON-RPC method. */
  calls: Map<string, number>;
  /** HTTP requests received: a batch of calls is one. */
  requests: number;
  /** The methods of each HTTP request received, in order (a batch's calls in one entry). */
  requestMethods: string[][];
  fault: ProxyFault | undefined;
  /** How far the node is: every request is held half of this (ms) on its way there and half on its way back, faults or not. */
  distanceMs: number;
  /**
   * Refuses batches as endpoints whose plan does not take them do: with one JSON-RPC error for the whole
   * batch ("one-error"), or with HTTP 400 ("http-400").
   */
  refuseBatches: false | "one-error" | "http-400";
  /** Stops listening: connections are refused, as by a node that went down. */
  goDown(): Promise<void>;
  /** Listens again on the same port, as a node that came back. */
  comeBack(): Promise<void>;
  close(): Promise<void>;
}

export async function startRpcProxy(targetUrl: string): Promise<RpcProxy> {
  const hanging = new Set<import("node:http").ServerResponse>();
  const proxy: RpcProxy = {
    url: "",
    calls: new Map(),
    requests: 0,
    requestMethods: [],
    fault: undefined,
    distanceMs: 0,
    refuseBatches: false,
    goDown: () => closeServer(server, hanging),
    comeBack: () => new Promise<void>((resolve) => server.listen(Number(new URL(proxy.url).port), "127.0.0.1", resolve)),
    close: () => (server.listening ? closeServer(server, hanging) : Promise.resolve()),
  };
  let callsInFlight = 0;
  /** What the proxy makes of one call: its JSON-RPC answer, or what becomes of the whole request. */
  type Outcome = { answer: object } | { request: "hang" } | { request: "lost-reply" } | { request: "http"; status: number; headers: Record<string, string>; body: string };
  type Payload = { id: number; method: string; params?: unknown };
  /** A call the node is to answer, and what the proxy then makes of the node's answer. */
  type Forward = { forward: Payload; after: (answer: { result?: unknown; error?: { message: string } }) => Outcome };
  const decide = async (payload: Payload): Promise<Outcome | Forward> => {
    proxy.calls.set(payload.method, (proxy.calls.get(payload.method) ?? 0) + 1);
    const fault = proxy.fault;
    if (fault?.kind === "slow-under-load") await new Promise((resolve) => setTimeout(resolve, fault.msPerCallInFlight * callsInFlight));
    const scripted = fault?.kind === "script" ? await fault.answer({ method: payload.method, params: Array.isArray(payload.params) ? payload.params : [] }) : undefined;
    const answer = (fields: object): Outcome => ({ answer: { jsonrpc: "2.0", id: payload.id, ...fields } });
    if (scripted === "hang") return { request: "hang" };
    if (typeof scripted === "object" && ("result" in scripted || "error" in scripted)) return answer(scripted);
    if (fault?.kind === "hang" && (!fault.methods || fault.methods.includes(payload.method))) return { request: "hang" };
    if (fault?.kind === "http-429" && fault.methods.includes(payload.method)) {
      return { request: "http", status: 429, headers: { "retry-after": "0" }, body: JSON.stringify({ jsonrpc: "2.0", id: payload.id, error: { code: 429, message: "Too Many Requests" } }) };
    }
    if (fault?.kind === "lagging" && ["eth_getTransactionByHash", "eth_getTransactionReceipt", "eth_getTransactionCount"].includes(payload.method)) {
      return answer({ result: payload.method === "eth_getTransactionCount" ? `0x${fault.nonceCount.toString(16)}` : null });
    }
    if (fault?.kind === "hold-unmined") {
      const held = answerAsHoldingNode(fault, payload);
      if (held) return answer(held);
    }
    if (fault?.kind === "http-500") return { request: "http", status: 500, headers: { "content-type": "text/plain" }, body: "internal error" };
    if (fault?.kind === "rpc-result" && fault.methods.includes(payload.method)) return answer({ result: fault.result });
    if (fault?.kind === "rpc-error" && fault.methods.includes(payload.method) && (fault.onlyNonce === undefined || rawNonce(payload.params) === fault.onlyNonce)) {
      if (fault.once) proxy.fault = undefined;
      if (fault.delayMs) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      return answer({ error: { code: -32000, message: fault.message } });
    }
    return {
      forward: typeof scripted === "object" && "params" in scripted ? { ...payload, params: scripted.params } : payload,
      after: (parsed) => {
        if (scripted === "lost-reply" || (fault?.kind === "swallow-reply" && fault.methods.includes(payload.method))) return { request: "lost-reply" };
        let changed = parsed;
        if (typeof scripted === "object" && "errorAfterForward" in scripted) return answer({ error: scripted.errorAfterForward });
        if (typeof scripted === "object" && "transform" in scripted && "result" in changed) changed = { ...changed, result: scripted.transform(changed.result) };
        if (fault?.kind === "reword-errors" && fault.methods.includes(payload.method) && changed.error) changed = { ...changed, error: { ...changed.error, message: fault.message } };
        if (fault?.kind === "hold-unmined" && countsHeld(fault, payload) && typeof changed.result === "string") {
          changed = { ...changed, result: `0x${Math.max(Number(changed.result), fault.nonce + 1).toString(16)}` };
        }
        return { answer: changed };
      },
    };
  };
  const server: Server = createServer(async (req, res) => {
    callsInFlight++;
    res.on("close", () => callsInFlight--);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const payload = JSON.parse(Buffer.concat(chunks).toString()) as Payload | Payload[];
    const halfway = () => (proxy.distanceMs > 0 ? new Promise((resolve) => setTimeout(resolve, proxy.distanceMs / 2)) : undefined);
    await halfway();
    proxy.requests++;
    proxy.requestMethods.push((Array.isArray(payload) ? payload : [payload]).map((call) => call.method));
    if (Array.isArray(payload) && proxy.refuseBatches) {
      const refusal = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "batch requests are not supported on this plan" } });
      await halfway();
      res.writeHead(proxy.refuseBatches === "http-400" ? 400 : 200, { "content-type": "application/json" }).end(refusal);
      return;
    }
    // A batch's calls meet the faults one by one; those left to the node reach it as a batch too.
    const decisions = await Promise.all((Array.isArray(payload) ? payload : [payload]).map(decide));
    const forwards = decisions.filter((decision): decision is Forward => "forward" in decision);
    let outcomes: Outcome[] = decisions.filter((decision): decision is Outcome => !("forward" in decision));
    if (forwards.length > 0) {
      const body = JSON.stringify(Array.isArray(payload) ? forwards.map((forward) => forward.forward) : forwards[0].forward);
      const upstream = await request(targetUrl, { method: "POST", body, headers: { "content-type": "application/json" } });
      const text = await upstream.body.text();
      if (upstream.statusCode !== 200) {
        outcomes = [{ request: "http", status: upstream.statusCode, headers: {}, body: text }];
      } else {
        type Answer = { id: number; result?: unknown; error?: { message: string } };
        const parsed = JSON.parse(text) as Answer | Answer[];
        const byId = new Map((Array.isArray(parsed) ? parsed : [parsed]).map((answer) => [answer.id, answer]));
        outcomes.push(...forwards.map((forward) => forward.after(byId.get(forward.forward.id) ?? { error: { message: "the node did not answer this call" } })));
      }
    }
    // A call whose fault is the whole request's (no answer, an HTTP error) makes it so for a batch, as one
    // broken backend behind an endpoint would.
    const whole = outcomes.find((outcome) => "request" in outcome);
    await halfway();
    if (whole && "request" in whole) {
      if (whole.request === "http") res.writeHead(whole.status, { "content-type": "application/json", ...whole.headers }).end(whole.body);
      else hanging.add(res);
      return;
    }
    const answers = outcomes.map((outcome) => (outcome as { answer: object }).answer);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(Array.isArray(payload) ? answers : answers[0]));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

function closeServer(server: Server, hanging: Set<import("node:http").ServerResponse>): Promise<void> {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

// The nonce of the raw transaction in eth_sendRawTransaction's params.
function rawNonce(params: unknown): number | undefined {
  const raw = Array.isArray(params) ? params[0] : undefined;
  return typeof raw === "string" ? Transaction.from(raw).nonce : undefined;
}

// The answer of a node that holds one transaction unmined, or undefined to forward the call.
function answerAsHoldingNode(fault: Extract<ProxyFault, { kind: "hold-unmined" }>, payload: { method: string; params?: unknown }): object | undefined {
  const [param] = Array.isArray(payload.params) ? payload.params : [];
  if (payload.method === "eth_sendRawTransaction" && typeof param === "string") {
    const transaction = Transaction.from(param);
    if (transaction.nonce !== fault.nonce) return undefined;
    fault.held ??= new Map();
    const hash = transaction.hash as string;
    if (fault.held.has(hash)) return fault.forgets ? { result: hash } : { error: { code: -32000, message: "already known" } };
    if (fault.held.size > 0 && !fault.every) return undefined;
    fault.held.set(hash, param);
    fault.heldHash ??= hash;
    fault.heldFrom = transaction.from as string;
    return { result: hash };
  }
  const raw = payload.method === "eth_getTransactionByHash" && typeof param === "string" && !fault.forgets ? fault.held?.get(param) : undefined;
  if (raw !== undefined) return { result: pendingTransactionJson(raw) };
  return undefined;
}

// A pending count of the held transaction's sender, where the node counts what it holds.
function countsHeld(fault: Extract<ProxyFault, { kind: "hold-unmined" }>, payload: { method: string; params?: unknown }): boolean {
  if (!fault.countedPending || fault.heldFrom === undefined || payload.method !== "eth_getTransactionCount") return false;
  const [address, block] = Array.isArray(payload.params) ? payload.params : [];
  return block === "pending" && typeof address === "string" && address.toLowerCase() === fault.heldFrom.toLowerCase();
}

/** A signed transaction as a node answers eth_getTransactionByHash while it waits in its pool. */
export function pendingTransactionJson(rawTransaction: string): Record<string, unknown> {
  const transaction = Transaction.from(rawTransaction);
  const quantity = (value: bigint | number) => `0x${value.toString(16)}`;
  const signature = transaction.signature;
  return {
    type: quantity(transaction.type ?? 0),
    chainId: quantity(transaction.chainId),
    nonce: quantity(transaction.nonce),
    from: transaction.from,
    to: transaction.to,
    value: quantity(transaction.value),
    gas: quantity(transaction.gasLimit),
    input: transaction.data,
    ...(transaction.type === 2
      ? { maxFeePerGas: quantity(transaction.maxFeePerGas ?? 0n), maxPriorityFeePerGas: quantity(transaction.maxPriorityFeePerGas ?? 0n), gasPrice: quantity(transaction.maxFeePerGas ?? 0n), accessList: [] }
      : { gasPrice: quantity(transaction.gasPrice ?? 0n) }),
    // EIP-1559: v is the y parity; legacy: EIP-155's v, which carries the chain id.
    v: quantity(transaction.type === 2 ? (signature?.yParity ?? 0) : (signature?.networkV ?? BigInt(signature?.v ?? 0))),
    r: signature?.r,
    s: signature?.s,
    ...(transaction.type === 2 && { yParity: quantity(signature?.yParity ?? 0) }),
    hash: transaction.hash,
    blockHash: null,
    blockNumber: null,
    transactionIndex: null,
  };
}
