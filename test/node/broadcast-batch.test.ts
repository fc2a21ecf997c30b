/**
 * Raw transactions broadcast in the same turn of the event loop go to each endpoint as one JSON-RPC batch
 * (rpc-provider.ts, turn-batch.ts), and each transaction is answered as it would have been alone: taken when
 * any endpoint took it, refused only when every endpoint refused it in words that prove it, unknown when an
 * answer is missing. JSON-RPC servers on 127.0.0.1 stand in for the endpoints; their answers are scripted.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Wallet, isError, keccak256 } from "ethers";
import { afterEach, describe, expect, it } from "vitest";
import { provesNotTaken, readNodeAnswer } from "../../src/node/node-answers.js";
import { createEndpoints, createRpcProvider, endpointSetOf } from "../../src/node/rpc-provider.js";

interface Call {
  id: number;
  method: string;
  params: unknown[];
}
/** What an endpoint makes of one HTTP request: a status and body, or no answer at all. */
type Reply = { status?: number; body: unknown } | "hang";

interface FakeEndpoint {
  url: string;
  /** Every request's calls, in order: a batch is one entry of several. */
  requests: { batch: boolean; methods: string[] }[];
  close(): Promise<void>;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function fakeEndpoint(reply: (payload: Call | Call[]) => Reply | Promise<Reply>): Promise<FakeEndpoint> {
  const requests: FakeEndpoint["requests"] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", async () => {
      const payload = JSON.parse(body) as Call | Call[];
      requests.push({ batch: Array.isArray(payload), methods: (Array.isArray(payload) ? payload : [payload]).map((call) => call.method) });
      const answer = await reply(payload);
      if (answer === "hang") return;
      response.writeHead(answer.status ?? 200, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: async () => undefined };
}

/** Answers each call of a request (a batch call by call) with `answer`; eth_blockNumber after `slowMs`. */
function callByCall(answer: (call: Call) => object, slowMs = 0) {
  return async (payload: Call | Call[]): Promise<Reply> => {
    const calls = Array.isArray(payload) ? payload : [payload];
    if (calls.some((call) => call.method === "eth_blockNumber")) await new Promise((resolve) => setTimeout(resolve, slowMs));
    const answers = calls.map((call) => ({ jsonrpc: "2.0", id: call.id, ...answer(call) }));
    return { body: Array.isArray(payload) ? answers : answers[0] };
  };
}

const signer = Wallet.createRandom();
async function rawTransactions(count: number): Promise<{ raw: string; hash: string }[]> {
  const signed = [];
  for (let nonce = 0; nonce < count; nonce++) {
    const raw = await signer.signTransaction({ type: 2, chainId: 31337n, nonce, to: signer.address, gasLimit: 21_000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n });
    signed.push({ raw, hash: keccak256(raw) });
  }
  return signed;
}

const NONCE_TOO_LOW = { error: { code: -32000, message: "nonce too low" } };

function providerOver(urls: string[], timeoutMs = 5_000) {
  const refusals: { reason: string; calls: unknown }[] = [];
  const endpoints = createEndpoints({ rpcUrls: urls, timeoutMs, maxInFlight: 4 });
  const set = endpointSetOf(endpoints, 31337n, 5);
  for (const endpoint of endpoints) set.markOnTheChain(endpoint);
  const provider = createRpcProvider(set, urls[0], { maxCalls: 20, onRefused: (reason, calls) => refusals.push({ reason, calls }) });
  return { provider, endpoints, refusals, labels: endpoints.map((endpoint) => endpoint.label) };
}

// The raw transactions sent in one turn while a (slow) read is under way at every endpoint, so none goes alone.
async function broadcastTogether(rpc: ReturnType<typeof providerOver>, raws: string[]): Promise<PromiseSettledResult<unknown>[]> {
  const underWay = rpc.endpoints.map((endpoint) => endpoint.call({ jsonrpc: "2.0", id: 0, method: "eth_blockNumber", params: [] }));
  const sent = await Promise.allSettled(raws.map((raw) => rpc.provider.send("eth_sendRawTransaction", [raw])));
  await Promise.all(underWay);
  return sent;
}

const sentRequests = (endpoint: FakeEndpoint) => endpoint.requests.filter((request) => request.methods.includes("eth_sendRawTransaction"));

describe("raw transactions broadcast at the same moment", () => {
  it("go to the endpoint in one request, and each gets the endpoint's own answer to it: taken, or refused in its words", async () => {
    const transactions = await rawTransactions(3);
    const refusedRaw = transactions[1].raw;
    const endpoint = await fakeEndpoint(
      callByCall((call) => (call.method === "eth_blockNumber" ? { result: "0x10" } : call.params[0] === refusedRaw ? NONCE_TOO_LOW : { result: transactions.find((each) => each.raw === call.params[0])?.hash }), 100),
    );
    const rpc = providerOver([endpoint.url]);
    const { provider } = rpc;
    const [first, refused, third] = await broadcastTogether(rpc, transactions.map((each) => each.raw));

    expect(sentRequests(endpoint)).toEqual([{ batch: true, methods: Array(3).fill("eth_sendRawTransaction") }]);
    expect(first).toEqual({ status: "fulfilled", value: transactions[0].hash });
    expect(third).toEqual({ status: "fulfilled", value: transactions[2].hash });
    // The same error, read the same way, as the transaction alone gets.
    const alone = await provider.send("eth_sendRawTransaction", [refusedRaw]).catch((error: unknown) => error);
    expect(refused.status).toBe("rejected");
    const inBatch = (refused as PromiseRejectedResult).reason;
    expect(isError(inBatch, "NONCE_EXPIRED")).toBe(true);
    expect(readNodeAnswer(inBatch)).toEqual(readNodeAnswer(alone));
    expect(sentRequests(endpoint).at(-1)).toEqual({ batch: false, methods: ["eth_sendRawTransaction"] });
  });

  it("go alone when nothing else is under way at the endpoint: a lone transfer does not wait for the turn's end", async () => {
    const [transaction] = await rawTransactions(1);
    const endpoint = await fakeEndpoint(callByCall(() => ({ result: transaction.hash })));
    const { provider } = providerOver([endpoint.url]);
    expect(await provider.send("eth_sendRawTransaction", [transaction.raw])).toBe(transaction.hash);
    expect(endpoint.requests).toEqual([{ batch: false, methods: ["eth_sendRawTransaction"] }]);
  });

  it("go to each of several endpoints as a batch, and a transaction is taken when any endpoint took it; refused only when all refused it", async () => {
    const transactions = await rawTransactions(3);
    const [takenByFirst, takenBySecond] = transactions;
    const first = await fakeEndpoint(
      callByCall((call) => (call.method === "eth_blockNumber" ? { result: "0x10" } : call.params[0] === takenByFirst.raw ? { result: takenByFirst.hash } : NONCE_TOO_LOW), 100),
    );
    const second = await fakeEndpoint(
      callByCall((call) => (call.method === "eth_blockNumber" ? { result: "0x10" } : call.params[0] === takenBySecond.raw ? { result: takenBySecond.hash } : NONCE_TOO_LOW), 100),
    );
    const outcomes = await broadcastTogether(
      providerOver([first.url, second.url]),
      transactions.map((each) => each.raw),
    );

    for (const endpoint of [first, second]) expect(sentRequests(endpoint)).toEqual([{ batch: true, methods: Array(3).fill("eth_sendRawTransaction") }]);
    expect(outcomes[0]).toEqual({ status: "fulfilled", value: takenByFirst.hash });
    expect(outcomes[1]).toEqual({ status: "fulfilled", value: takenBySecond.hash });
    expect(outcomes[2].status).toBe("rejected");
    expect(readNodeAnswer((outcomes[2] as PromiseRejectedResult).reason).meaning).toBe("nonce-too-low");
  });

  it("are sent alone, and from then on only alone, to an endpoint that refuses a batch (HTTP 400), with one warning naming it; the other endpoint keeps its batches", async () => {
    const transactions = await rawTransactions(4);
    const answerFor = (call: Call) => (call.method === "eth_sendRawTransaction" ? { result: transactions.find((each) => each.raw === call.params[0])?.hash } : { result: "0x10" });
    const refusing = await fakeEndpoint(async (payload) => {
      if (Array.isArray(payload)) return { status: 400, body: { jsonrpc: "2.0", id: null, error: { code: -32600, message: "batch requests are not supported on this plan" } } };
      return callByCall(answerFor, 100)(payload);
    });
    const taking = await fakeEndpoint(callByCall(answerFor, 100));
    const rpc = providerOver([refusing.url, taking.url]);
    for (const pair of [transactions.slice(0, 2), transactions.slice(2)]) {
      const outcomes = await broadcastTogether(
        rpc,
        pair.map((each) => each.raw),
      );
      expect(outcomes).toEqual(pair.map((each) => ({ status: "fulfilled", value: each.hash })));
    }

    expect(sentRequests(refusing)).toEqual([
      { batch: true, methods: ["eth_sendRawTransaction", "eth_sendRawTransaction"] },
      ...Array(4).fill({ batch: false, methods: ["eth_sendRawTransaction"] }),
    ]);
    expect(sentRequests(taking)).toEqual(Array(2).fill({ batch: true, methods: ["eth_sendRawTransaction", "eth_sendRawTransaction"] }));
    expect(rpc.refusals).toEqual([{ reason: "the endpoint refused a batch of 2 calls with HTTP 400", calls: { kind: "broadcasts", endpoint: rpc.labels[0] } }]);
  });

  it("are sent again one by one when their batch got no answer (HTTP 502): the same bytes, which a node that took them answers as known", async () => {
    const transactions = await rawTransactions(2);
    let batches = 0;
    const endpoint = await fakeEndpoint(async (payload) => {
      if (Array.isArray(payload)) return (batches++, { status: 502, body: "bad gateway" });
      return callByCall((call) => (call.method === "eth_blockNumber" ? { result: "0x10" } : { error: { code: -32000, message: "already known" } }), 100)(payload);
    });
    const outcomes = await broadcastTogether(
      providerOver([endpoint.url]),
      transactions.map((each) => each.raw),
    );
    expect(batches).toBe(1);
    expect(sentRequests(endpoint).map((request) => request.batch)).toEqual([true, false, false]);
    for (const outcome of outcomes) expect(readNodeAnswer((outcome as PromiseRejectedResult).reason).meaning).toBe("already-known");
  });

  it("are never taken for refused on what a resend alone meets after their batch got no answer: a node that took the batch and went down refuses the connection", async () => {
    const transactions = await rawTransactions(2);
    let downAfterBatch: (() => void) | undefined;
    const endpoint = await fakeEndpoint(async (payload) => {
      if (!Array.isArray(payload)) return callByCall(() => ({ result: "0x10" }), 100)(payload);
      // The node takes the batch and dies before it answers: the reply is cut off, the port then closed.
      downAfterBatch?.();
      return "hang";
    });
    const server = servers.at(-1) as Server;
    downAfterBatch = () => {
      server.close();
      server.closeAllConnections();
    };
    const rpc = providerOver([endpoint.url]);
    const underWay = rpc.endpoints.map((each) => each.call({ jsonrpc: "2.0", id: 0, method: "eth_blockNumber", params: [] }));
    // The slow read is answered before the batch brings the node down.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await Promise.all(underWay);
    const sideBySide = rpc.endpoints.map((each) => each.call({ jsonrpc: "2.0", id: 0, method: "eth_blockNumber", params: [] }));
    const outcomes = await Promise.allSettled(transactions.map((each) => rpc.provider.send("eth_sendRawTransaction", [each.raw])));
    await Promise.allSettled(sideBySide);

    expect(sentRequests(endpoint)).toEqual([{ batch: true, methods: ["eth_sendRawTransaction", "eth_sendRawTransaction"] }]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      const { meaning } = readNodeAnswer((outcome as PromiseRejectedResult).reason);
      expect(meaning).toBe("no-answer");
      expect(provesNotTaken(meaning)).toBe(false);
    }
  });

  it("sent alone again after a batch answered for only some of them, are taken when the node says so, and a refusal in words is no proof then", async () => {
    const transactions = await rawTransactions(3);
    const endpoint = await fakeEndpoint(async (payload) => {
      if (Array.isArray(payload)) {
        const [first] = payload;
        return { body: [{ jsonrpc: "2.0", id: first.id, result: transactions[0].hash }] };
      }
      return callByCall((call) => {
        if (call.method === "eth_blockNumber") return { result: "0x10" };
        if (call.params[0] === transactions[0].raw) return { error: { code: -32000, message: "already known" } };
        if (call.params[0] === transactions[1].raw) return { result: transactions[1].hash };
        return { error: { code: -32000, message: "insufficient funds for gas * price + value" } };
      }, 100)(payload);
    });
    const rpc = providerOver([endpoint.url]);
    const [first, second, third] = await broadcastTogether(
      rpc,
      transactions.map((each) => each.raw),
    );
    expect(sentRequests(endpoint).map((request) => request.batch)).toEqual([true, false, false, false]);
    expect(readNodeAnswer((first as PromiseRejectedResult).reason).meaning).toBe("already-known");
    expect(second).toEqual({ status: "fulfilled", value: transactions[1].hash });
    // Alone, these words prove it was not taken; after a batch the endpoint half answered, they do not.
    const alone = await rpc.provider.send("eth_sendRawTransaction", [transactions[2].raw]).catch((error: unknown) => error);
    expect(provesNotTaken(readNodeAnswer(alone).meaning)).toBe(true);
    expect(readNodeAnswer((third as PromiseRejectedResult).reason).meaning).toBe("no-answer");
    expect(rpc.refusals).toEqual([{ reason: "the endpoint answered 1 of a batch of 3 calls", calls: { kind: "broadcasts", endpoint: rpc.labels[0] } }]);
  });

  it("are not all given one call's rate-limit error when the endpoint answered only that call: the others were left unanswered", async () => {
    const transactions = await rawTransactions(2);
    const endpoint = await fakeEndpoint(async (payload) => {
      if (Array.isArray(payload)) return { body: [{ jsonrpc: "2.0", id: payload[0].id, error: { code: -32005, message: "rate limit exceeded" } }] };
      return callByCall((call) => (call.method === "eth_blockNumber" ? { result: "0x10" } : { error: { code: -32000, message: "insufficient funds for gas * price + value" } }), 100)(payload);
    });
    const rpc = providerOver([endpoint.url]);
    const outcomes = await broadcastTogether(
      rpc,
      transactions.map((each) => each.raw),
    );
    // Not call by call: each is sent again alone, and what the resend meets is no proof.
    expect(sentRequests(endpoint).map((request) => request.batch)).toEqual([true, false, false]);
    for (const outcome of outcomes) expect(readNodeAnswer((outcome as PromiseRejectedResult).reason).meaning).toBe("no-answer");
  });

  it("each stay unknown, never refused, when their batch times out, and are not sent again from here (the caller holds them)", async () => {
    const transactions = await rawTransactions(2);
    const endpoint = await fakeEndpoint(async (payload) => (Array.isArray(payload) ? "hang" : callByCall(() => ({ result: "0x10" }), 100)(payload)));
    const outcomes = await broadcastTogether(
      providerOver([endpoint.url], 1_000),
      transactions.map((each) => each.raw),
    );
    for (const outcome of outcomes) {
      expect(outcome.status).toBe("rejected");
      const { meaning } = readNodeAnswer((outcome as PromiseRejectedResult).reason);
      expect(meaning).toBe("no-answer");
      expect(provesNotTaken(meaning)).toBe(false);
    }
    expect(sentRequests(endpoint)).toEqual([{ batch: true, methods: ["eth_sendRawTransaction", "eth_sendRawTransaction"] }]);
  });
});
