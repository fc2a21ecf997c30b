/**
 * Which endpoint a call goes to (endpoint-set.ts, call-blocks.ts) and what a broadcast that no endpoint
 * took reports (broadcast-answers.ts). No call is sent here: the endpoints' health is set by hand.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { makeError } from "ethers";
import { describe, expect, it } from "vitest";
import { broadcastOutcomeToReport } from "../../src/node/broadcast-answers.js";
import { blockNumberReadAt, headIn, readsHead } from "../../src/node/call-blocks.js";
import { PROBE_AFTER_MS } from "../../src/node/endpoint-health.js";
import { EndpointSet } from "../../src/node/endpoint-set.js";
import { type CallOutcome, RpcEndpoint, faultOf, refusedAsBatch } from "../../src/node/rpc-endpoint.js";

function endpointSet(count: number, ask: ConstructorParameters<typeof EndpointSet>[3] = async () => undefined, clock = { now: 0 }) {
  const endpoints = Array.from(
    { length: count },
    (_, index) => new RpcEndpoint(`http://127.0.0.1:${9000 + index}/key`, `e${index + 1}`, { timeoutMs: 1000, maxInFlight: 4, alone: count === 1, now: () => clock.now }),
  );
  const set = new EndpointSet(endpoints, 5, 1n, ask);
  for (const endpoint of endpoints) set.markOnTheChain(endpoint);
  return { set, endpoints };
}
const labels = (endpoints: RpcEndpoint[]) => endpoints.map((endpoint) => endpoint.label);

describe("the choice of endpoint", () => {
  it("reads from the first configured endpoint near the head, the rest in order after it", () => {
    const { set, endpoints } = endpointSet(3);
    set.recordHead(endpoints[1], 100);
    set.recordHead(endpoints[2], 100);
    set.recordHead(endpoints[0], 97);
    expect(labels(set.readOrder())).toEqual(["e2", "e3", "e1"]);
  });

  it("sends a read at a block number first to an endpoint known to have reached it", () => {
    const { set, endpoints } = endpointSet(3);
    set.recordHead(endpoints[0], 100);
    set.recordHead(endpoints[1], 100);
    set.recordHead(endpoints[2], 101);
    expect(labels(set.readOrder(101))).toEqual(["e3", "e1", "e2"]);
    expect(labels(set.readOrder(100))).toEqual(["e1", "e2", "e3"]);
  });

  it("leaves an endpoint more than RPC_MAX_LAG_BLOCKS behind out of reads (last resort only) and broadcasts", () => {
    const { set, endpoints } = endpointSet(3);
    set.recordHead(endpoints[1], 110);
    set.recordHead(endpoints[2], 110);
    set.recordHead(endpoints[0], 100);
    expect(endpoints[0].health.state).toBe("lagging");
    expect(labels(set.readOrder())).toEqual(["e2", "e3", "e1"]);
    expect(labels(set.broadcastTargets())).toEqual(["e2", "e3"]);
    expect(labels(set.headReadOrder()).at(-1)).toBe("e1");
  });

  it("measures lag against the heads the endpoints show now, which follow a reorganisation down", () => {
    const { set, endpoints } = endpointSet(2);
    set.recordHead(endpoints[0], 100);
    set.recordHead(endpoints[1], 100);
    // The first to show the lower height is behind the other's last head, until it shows its head again.
    set.recordHead(endpoints[0], 90);
    set.recordHead(endpoints[1], 90);
    expect(set.highestHead).toBe(90);
    expect(endpoints.map((endpoint) => endpoint.health.state)).toEqual(["lagging", "in"]);
    set.recordHead(endpoints[0], 91);
    expect(endpoints.map((endpoint) => endpoint.health.state)).toEqual(["in", "in"]);
  });

  it("brings a failing endpoint back when it answers while none is in rotation", () => {
    const { set, endpoints } = endpointSet(2);
    for (const endpoint of endpoints) endpoint.health.recordFault("rate-limited", 1);
    set.recordAnsweredWhileNoneIn(endpoints[1]);
    expect(labels(set.healthy)).toEqual(["e2"]);
    set.recordAnsweredWhileNoneIn(endpoints[0]);
    expect(labels(set.healthy)).toEqual(["e2"]);
  });

  it("lets the endpoints in rotation take turns reading the head", () => {
    const { set } = endpointSet(3);
    expect([0, 1, 2, 3].map(() => set.headReadOrder()[0].label)).toEqual(["e1", "e2", "e3", "e1"]);
  });

  it("broadcasts to all endpoints when none is in rotation, and says which are out", () => {
    const { set, endpoints } = endpointSet(2);
    for (const endpoint of endpoints) endpoint.health.recordFault("rate-limited", 1);
    expect(labels(set.broadcastTargets())).toEqual(["e1", "e2"]);
    expect(set.states()).toEqual({ e1: "left out, failing: rate-limited (HTTP 429, or a rate limit in JSON-RPC words)", e2: "left out, failing: rate-limited (HTTP 429, or a rate limit in JSON-RPC words)" });
  });

  it("brings a left-out endpoint back only after a probe, due 30 s on, finds it on the chain and near the head", async () => {
    const answers: Record<string, bigint> = { eth_chainId: 2n, eth_blockNumber: 100n };
    const asked: string[] = [];
    const clock = { now: 0 };
    const endpoints = [0, 1].map((index) => new RpcEndpoint(`http://127.0.0.1:${9000 + index}/key`, `e${index + 1}`, { timeoutMs: 1000, maxInFlight: 4, alone: false, now: () => clock.now }));
    const set = new EndpointSet(endpoints, 5, 1n, async (endpoint, method) => (asked.push(`${endpoint.label} ${method}`), answers[method]));
    set.markOnTheChain(endpoints[0]);
    set.recordHead(endpoints[0], 100);
    endpoints[1].health.leaveOut("did not answer eth_chainId at startup");
    // Unchecked, it is used for nothing, not even as a last resort.
    expect(labels(set.readOrder())).toEqual(["e1"]);
    expect(labels(set.headReadOrder())).toEqual(["e1"]);
    expect(labels(set.otherThan(set.broadcastTargets()))).toEqual([]);
    await set.probeDue();
    expect(asked).toEqual([]);
    clock.now += PROBE_AFTER_MS;
    await set.probeDue();
    expect(endpoints[1].health.report()).toMatchObject({ state: "failing", reason: "serves chain 2" });
    set.recordHead(endpoints[1], 10_000_000);
    expect(set.highestHead).toBe(100);
    answers.eth_chainId = 1n;
    clock.now += PROBE_AFTER_MS;
    await set.probeDue();
    expect(endpoints[1].health.state).toBe("in");
    expect(asked).toEqual(["e2 eth_chainId", "e2 eth_chainId", "e2 eth_blockNumber"]);
  });
});

describe("a read waiting for its turn at an endpoint that hangs", () => {
  it("is not sent when its turn comes after the endpoint was left out: it fails then, so the next endpoint is asked", async () => {
    let received = 0;
    const server = createServer((request) => {
      received++;
      request.resume();
      // Never answers: an endpoint that hangs.
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const endpoint = new RpcEndpoint(url, "hangs", { timeoutMs: 60_000, maxInFlight: 1, alone: false });
      const payload = { jsonrpc: "2.0" as const, id: 1, method: "eth_chainId", params: [] };
      void endpoint.call(payload, true);
      const queued = endpoint.call(payload, true);
      await new Promise((resolve) => setTimeout(resolve, 100));
      endpoint.health.leaveOut("3 faults in 60 s");
      const started = Date.now();
      server.closeAllConnections();
      const outcome = await queued;
      expect("thrown" in outcome && String((outcome.thrown as Error).message)).toContain("was left out before this request's turn");
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(received).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("the blocks a call names", () => {
  it("finds the block number a read is made at, and none for a tag", () => {
    expect(blockNumberReadAt("eth_getTransactionCount", ["0xabc", "0x10"])).toBe(16);
    expect(blockNumberReadAt("eth_getTransactionCount", ["0xabc", "latest"])).toBeUndefined();
    expect(blockNumberReadAt("eth_getBlockByNumber", ["0x20", false])).toBe(32);
    expect(blockNumberReadAt("eth_getLogs", [{ fromBlock: "0x1", toBlock: "0x30" }])).toBe(48);
    expect(blockNumberReadAt("eth_getTransactionReceipt", ["0x10"])).toBeUndefined();
  });

  it("reads the head from eth_blockNumber and the latest block", () => {
    expect(readsHead("eth_getBlockByNumber", ["latest", false])).toBe(true);
    expect(readsHead("eth_getBlockByNumber", ["finalized", false])).toBe(false);
    expect(headIn("eth_blockNumber", "0x64")).toBe(100);
    expect(headIn("eth_getBlockByNumber", { number: "0x65", hash: "0x.." })).toBe(101);
    expect(headIn("eth_getBlockByNumber", null)).toBeUndefined();
  });
});

describe("what a broadcast no endpoint took reports", () => {
  const answer = (message: string): CallOutcome => ({ results: [{ id: 1, error: { code: -32000, message } } as never] });
  const timeOut: CallOutcome = { thrown: makeError("request timeout", "TIMEOUT") };
  const refused: CallOutcome = { thrown: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) };

  it("an endpoint that already holds it, over every other answer", () => {
    expect(broadcastOutcomeToReport([answer("nonce too low"), timeOut, answer("already known")])).toEqual(answer("already known"));
  });

  it("words that may mean a backend holds or mined it, over any refusal, whichever endpoint came first", () => {
    expect(broadcastOutcomeToReport([answer("insufficient funds for gas * price + value"), answer("nonce too low")])).toEqual(answer("nonce too low"));
    expect(broadcastOutcomeToReport([answer("max fee per gas less than block base fee"), answer("replacement transaction underpriced")])).toEqual(answer("replacement transaction underpriced"));
    expect(broadcastOutcomeToReport([refused, timeOut, answer("nonce too low")])).toEqual(answer("nonce too low"));
  });

  it("no answer over a refusal: the transaction may have been taken", () => {
    expect(broadcastOutcomeToReport([answer("insufficient funds for gas * price + value"), timeOut])).toBe(timeOut);
    expect(broadcastOutcomeToReport([answer("insufficient funds for gas * price + value"), answer("some words we do not know")])).toEqual(answer("some words we do not know"));
  });

  it("a node's refusal in words over a connection nobody took", () => {
    expect(broadcastOutcomeToReport([refused, answer("insufficient funds for gas * price + value")])).toEqual(answer("insufficient funds for gas * price + value"));
    expect(broadcastOutcomeToReport([refused])).toBe(refused);
  });
});

describe("what an endpoint's HTTP 200 carries", () => {
  // One answer per request, in order: a body and the bytes the request carried are kept.
  async function answering(bodies: (string | Buffer)[], run: (endpoint: RpcEndpoint, received: { body: Buffer; contentType?: string }[]) => Promise<void>): Promise<void> {
    const received: { body: Buffer; contentType?: string }[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        received.push({ body: Buffer.concat(chunks), contentType: request.headers["content-type"] });
        response.writeHead(200, { "content-type": "application/json" }).end(bodies.shift());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      await run(new RpcEndpoint(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "e1", { timeoutMs: 5_000, maxInFlight: 4, alone: false }), received);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it("is read as UTF-8 JSON, several bytes a character too, and the request goes as the JSON of its payload", async () => {
    const message = "exécution annulée: 送金 🚫";
    const answer = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 7, error: { code: 3, message } }));
    await answering([answer], async (endpoint, received) => {
      const payload = { jsonrpc: "2.0" as const, id: 7, method: "eth_call", params: [{ data: "0x" }, "latest"] };
      const outcome = await endpoint.call(payload);
      expect(outcome).toEqual({ results: [{ jsonrpc: "2.0", id: 7, error: { code: 3, message } }] });
      expect(JSON.parse(received[0].body.toString("utf8"))).toEqual(payload);
      expect(received[0].contentType).toBe("application/json");
    });
  });

  it("is no answer when it is not UTF-8, not JSON (a gateway's page) or not JSON-RPC (a bare value): the endpoint's fault", async () => {
    // A node's refusal in words, with one byte that is no UTF-8: not read as the node's words.
    const badByte = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"nonce too low'), Buffer.from([0xff]), Buffer.from('"}}')]);
    await answering([badByte, "<html><body>502 Bad Gateway</body></html>", "42"], async (endpoint) => {
      const payload = { jsonrpc: "2.0" as const, id: 1, method: "eth_blockNumber", params: [] };
      for (const expected of ["not valid UTF-8", "not valid JSON", "not a JSON-RPC answer"]) {
        const outcome = await endpoint.call(payload);
        expect("thrown" in outcome && String((outcome.thrown as Error).message)).toContain(expected);
        expect(faultOf(outcome)).toBe("no-answer");
      }
    });
  });
});

describe("a batch an endpoint refuses for what it is", () => {
  it("(HTTP 413, or one error about batches in a rate limit's code) is no fault of the endpoint: it stays in rotation; an HTTP 500 is one", async () => {
    const answers: [number, string][] = [];
    const server = createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        const [status, body] = answers.shift() as [number, string];
        response.writeHead(status, { "content-type": "application/json" }).end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const endpoint = new RpcEndpoint(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "e1", { timeoutMs: 5_000, maxInFlight: 4, alone: false });
      const batch = [1, 2].map((id) => ({ jsonrpc: "2.0" as const, id, method: "eth_estimateGas", params: [{}, "latest"] }));
      const tooLarge = JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32005, message: "Number of requests exceeds max batch size" } });
      for (let round = 0; round < 3; round++) answers.push([413, "request entity too large"], [200, tooLarge]);
      for (let call = 0; call < 6; call++) expect(refusedAsBatch(await endpoint.call(batch))).toBe(true);
      expect(endpoint.health.state).toBe("in");
      for (let round = 0; round < 3; round++) answers.push([500, "internal error"]);
      for (let call = 0; call < 3; call++) expect(refusedAsBatch(await endpoint.call(batch))).toBe(false);
      expect(endpoint.health.state).not.toBe("in");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
