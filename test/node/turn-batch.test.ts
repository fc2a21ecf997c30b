/**
 * The estimates of one turn sent as one batch (turn-batch.ts): which calls go together, and what each caller
 * gets when the endpoint answers the batch call by call, refuses it, is busy, or does not answer. The endpoint
 * here is a fake at the send boundary; test/node/turn-batch-node.test.ts sends through real nodes.
 */
import { type JsonRpcPayload, type JsonRpcResult, makeError } from "ethers";
import { describe, expect, it } from "vitest";
import { type SendCalls, TurnBatch } from "../../src/node/turn-batch.js";

type Answer = JsonRpcResult | { id: number; error: { code: number; message: string } };

/** An endpoint that answers each call with `answer`, the calls of a batch in reverse order; records every request. */
function fakeEndpoint(answer: (payload: JsonRpcPayload) => Answer = (payload) => ({ id: payload.id, result: `0x${payload.id.toString(16)}` })) {
  const requests: (JsonRpcPayload | JsonRpcPayload[])[] = [];
  let batchReply: ((payloads: JsonRpcPayload[]) => Answer[] | Error) | undefined;
  const send: SendCalls = async (payload) => {
    requests.push(payload);
    await Promise.resolve();
    if (!Array.isArray(payload)) return [answer(payload)] as JsonRpcResult[];
    const reply = batchReply?.(payload) ?? payload.map(answer).reverse();
    if (reply instanceof Error) throw reply;
    return reply as JsonRpcResult[];
  };
  return {
    send,
    requests,
    answerBatchesWith(reply: typeof batchReply) {
      batchReply = reply;
    },
  };
}

const estimate = (id: number): JsonRpcPayload => ({ jsonrpc: "2.0", id, method: "eth_estimateGas", params: [{ to: "0x" }, "latest"] });
const ids = (request: JsonRpcPayload | JsonRpcPayload[]) => (Array.isArray(request) ? request.map((payload) => payload.id) : request.id);

function batchOf(endpoint: ReturnType<typeof fakeEndpoint>, maxCalls = 20) {
  const refusals: string[] = [];
  return { turn: new TurnBatch(endpoint.send, maxCalls, (reason) => refusals.push(reason)), refusals };
}

describe("calls made in one turn", () => {
  it("go as one batch, and each caller gets the answer to its own call", async () => {
    const endpoint = fakeEndpoint();
    const { turn } = batchOf(endpoint);
    const answers = await Promise.all([1, 2, 3].map((id) => turn.call(estimate(id))));
    expect(endpoint.requests.map(ids)).toEqual([[1, 2, 3]]);
    expect(answers).toEqual([[{ id: 1, result: "0x1" }], [{ id: 2, result: "0x2" }], [{ id: 3, result: "0x3" }]]);
  });

  it("go alone when alone, and calls of later turns go in later requests", async () => {
    const endpoint = fakeEndpoint();
    const { turn } = batchOf(endpoint);
    expect(await turn.call(estimate(1))).toEqual([{ id: 1, result: "0x1" }]);
    await Promise.all([turn.call(estimate(2)), turn.call(estimate(3))]);
    expect(endpoint.requests.map(ids)).toEqual([1, [2, 3]]);
  });

  it("go together also when made after awaits within the turn, as the requests read from the sockets in one turn are", async () => {
    const endpoint = fakeEndpoint();
    const { turn } = batchOf(endpoint);
    const first = turn.call(estimate(1));
    await Promise.resolve();
    await Promise.resolve();
    const second = turn.call(estimate(2));
    await Promise.all([first, second]);
    expect(endpoint.requests.map(ids)).toEqual([[1, 2]]);
  });

  it("leave at once, alone, while no request to the endpoint is under way; those made meanwhile go together", async () => {
    const endpoint = fakeEndpoint();
    let underWay = 0;
    const counted: SendCalls = async (payload) => {
      underWay++;
      try {
        return await endpoint.send(payload);
      } finally {
        underWay--;
      }
    };
    const turn = new TurnBatch(counted, 20, () => undefined, () => underWay === 0);
    const first = turn.call(estimate(1));
    // Sent before this turn goes on (a commit's fsync later in the turn does not hold it back).
    expect(endpoint.requests.map(ids)).toEqual([1]);
    await Promise.all([first, turn.call(estimate(2)), turn.call(estimate(3))]);
    expect(endpoint.requests.map(ids)).toEqual([1, [2, 3]]);
    await turn.call(estimate(4));
    expect(endpoint.requests.map(ids)).toEqual([1, [2, 3], 4]);
  });

  it("go in batches of at most RPC_BATCH_MAX_CALLS, and each alone when it is 1", async () => {
    const endpoint = fakeEndpoint();
    const { turn: inTwos } = batchOf(endpoint, 2);
    await Promise.all([1, 2, 3, 4, 5].map((id) => inTwos.call(estimate(id))));
    expect(endpoint.requests.map(ids)).toEqual([[1, 2], [3, 4], 5]);

    const alone = fakeEndpoint();
    const { turn } = batchOf(alone, 1);
    await Promise.all([1, 2, 3].map((id) => turn.call(estimate(id))));
    expect(alone.requests.map(ids)).toEqual([1, 2, 3]);
  });

  it("each keep their own error: a revert of one is not the others'", async () => {
    const endpoint = fakeEndpoint((payload) => (payload.id === 2 ? { id: 2, error: { code: 3, message: "execution reverted: ERC20: transfer amount exceeds balance" } } : { id: payload.id, result: "0x5208" }));
    const { turn } = batchOf(endpoint);
    const answers = await Promise.all([1, 2, 3].map((id) => turn.call(estimate(id))));
    expect(answers.map(([answer]) => answer)).toEqual([
      { id: 1, result: "0x5208" },
      { id: 2, error: { code: 3, message: "execution reverted: ERC20: transfer amount exceeds balance" } },
      { id: 3, result: "0x5208" },
    ]);
  });
});

describe("an endpoint that does not answer a batch call by call", () => {
  it("gets each call of it again alone, and no batch from then on, said once", async () => {
    const endpoint = fakeEndpoint();
    endpoint.answerBatchesWith(() => [{ id: null as unknown as number, error: { code: -32600, message: "batch requests are not supported on this plan" } }]);
    const { turn, refusals } = batchOf(endpoint);
    const answers = await Promise.all([1, 2].map((id) => turn.call(estimate(id))));
    expect(answers).toEqual([[{ id: 1, result: "0x1" }], [{ id: 2, result: "0x2" }]]);
    await Promise.all([3, 4].map((id) => turn.call(estimate(id))));
    expect(endpoint.requests.map(ids)).toEqual([[1, 2], 1, 2, 3, 4]);
    expect(refusals).toEqual(["the endpoint answered 1 of a batch of 2 calls: batch requests are not supported on this plan"]);
  });

  it("that answered only some calls counts as refusing batches too", async () => {
    const endpoint = fakeEndpoint();
    endpoint.answerBatchesWith((payloads) => [{ id: payloads[0].id, result: "0x1" }]);
    const { turn, refusals } = batchOf(endpoint);
    const answers = await Promise.all([1, 2, 3].map((id) => turn.call(estimate(id))));
    expect(answers.map(([answer]) => answer)).toEqual([{ id: 1, result: "0x1" }, { id: 2, result: "0x2" }, { id: 3, result: "0x3" }]);
    expect(refusals).toEqual(["the endpoint answered 1 of a batch of 3 calls"]);
  });

  it("that refuses its size in a rate limit's code (Besu's -32005) refuses batches: each call alone, and no batch from then on", async () => {
    const endpoint = fakeEndpoint();
    endpoint.answerBatchesWith(() => [{ id: null as unknown as number, error: { code: -32005, message: "Number of requests exceeds max batch size" } }]);
    const { turn, refusals } = batchOf(endpoint);
    expect(await Promise.all([1, 2].map((id) => turn.call(estimate(id))))).toEqual([[{ id: 1, result: "0x1" }], [{ id: 2, result: "0x2" }]]);
    expect(refusals).toEqual(["the endpoint answered 1 of a batch of 2 calls: Number of requests exceeds max batch size"]);
  });

  it("that says it is busy gives that answer to every call of the batch, asks nothing again, and keeps batching", async () => {
    const endpoint = fakeEndpoint();
    endpoint.answerBatchesWith(() => [{ id: null as unknown as number, error: { code: -32005, message: "daily request count exceeded, request rate limited" } }]);
    const { turn, refusals } = batchOf(endpoint);
    const answers = await Promise.all([1, 2].map((id) => turn.call(estimate(id))));
    expect(answers).toEqual([1, 2].map((id) => [{ id, error: { code: -32005, message: "daily request count exceeded, request rate limited" } }]));
    expect(endpoint.requests.map(ids)).toEqual([[1, 2]]);
    endpoint.answerBatchesWith(undefined);
    await Promise.all([3, 4].map((id) => turn.call(estimate(id))));
    expect(endpoint.requests.map(ids)).toEqual([[1, 2], [3, 4]]);
    expect(refusals).toEqual([]);
  });
});

describe("a batch that got no answer", () => {
  it("after a time-out, a refused connection or a rate limit: every call gets that error, nothing is asked again", async () => {
    for (const error of [makeError("request timeout", "TIMEOUT"), Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }), rateLimited()]) {
      const endpoint = fakeEndpoint();
      endpoint.answerBatchesWith(() => error);
      const { turn, refusals } = batchOf(endpoint);
      const settled = await Promise.allSettled([1, 2].map((id) => turn.call(estimate(id))));
      expect(settled).toEqual([{ status: "rejected", reason: error }, { status: "rejected", reason: error }]);
      expect(endpoint.requests.map(ids)).toEqual([[1, 2]]);
      expect(refusals).toEqual([]);
    }
  });

  it("after an HTTP 4xx (a batch too large, or none taken on this plan): its calls alone are asked, and no batch from then on", async () => {
    for (const status of [400, 413]) {
      const endpoint = fakeEndpoint();
      const { turn, refusals } = batchOf(endpoint);
      endpoint.answerBatchesWith(() => httpError(status));
      expect(await Promise.all([1, 2].map((id) => turn.call(estimate(id))))).toEqual([[{ id: 1, result: "0x1" }], [{ id: 2, result: "0x2" }]]);
      await Promise.all([3, 4].map((id) => turn.call(estimate(id))));
      expect(endpoint.requests.map(ids)).toEqual([[1, 2], 1, 2, 3, 4]);
      expect(refusals).toEqual([`the endpoint refused a batch of 2 calls with HTTP ${status}`]);
    }
  });

  it("after an HTTP 5xx: its calls alone are asked; batches are given up after three in a row failed where their calls did not", async () => {
    const endpoint = fakeEndpoint();
    const { turn, refusals } = batchOf(endpoint);
    endpoint.answerBatchesWith(() => httpError(500));
    // Settles once the calls are answered and the batch's failure is counted (just after the last answer).
    const turnOfTwo = async (first: number) => {
      const answers = await Promise.all([first, first + 1].map((id) => turn.call(estimate(id))));
      await new Promise(setImmediate);
      return answers;
    };
    expect(await turnOfTwo(1)).toEqual([[{ id: 1, result: "0x1" }], [{ id: 2, result: "0x2" }]]);
    await turnOfTwo(3);
    // A batch answered in between starts the count again.
    endpoint.answerBatchesWith(undefined);
    await turnOfTwo(5);
    endpoint.answerBatchesWith(() => httpError(500));
    await turnOfTwo(7);
    await turnOfTwo(9);
    expect(refusals).toEqual([]);
    await turnOfTwo(11);
    expect(refusals).toEqual(["3 batches in a row got no answer where their calls alone did"]);
    await turnOfTwo(13);
    expect(endpoint.requests.map(ids).slice(-5)).toEqual([[11, 12], 11, 12, 13, 14]);
  });

  it("after an HTTP error that its calls alone meet too: the endpoint is down, not refusing batches", async () => {
    const endpoint = fakeEndpoint();
    const refusals: string[] = [];
    endpoint.answerBatchesWith(() => httpError(502));
    const failingAlone = new TurnBatch(
      async (payload) => {
        if (Array.isArray(payload)) return endpoint.send(payload);
        throw httpError(502);
      },
      20,
      (reason) => refusals.push(reason),
    );
    for (let round = 0; round < 4; round++) {
      const settled = await Promise.allSettled([1, 2].map((id) => failingAlone.call(estimate(id))));
      expect(settled.map((each) => each.status)).toEqual(["rejected", "rejected"]);
    }
    expect(refusals).toEqual([]);
    expect(endpoint.requests.map(ids)).toEqual([[1, 2], [1, 2], [1, 2], [1, 2]]);
  });
});

function httpError(status: number): Error {
  return makeError(`server response ${status}`, "SERVER_ERROR", { request: {} as never, response: { statusCode: status } as never });
}

function rateLimited(): Error {
  return makeError("server response 429 Too Many Requests", "SERVER_ERROR", { request: {} as never, response: { statusCode: 429 } as never });
}
