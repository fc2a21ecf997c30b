/**
 * How the service's provider sends one call (rpc-provider.ts): at once, with no timer between the call and
 * the node, and answered as ethers' own send answers it (the node's error read by ethers, a missing answer,
 * the debug event the benchmarks count calls by). A JSON-RPC server on 127.0.0.1 stands in for the node.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { isError } from "ethers";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createEndpoints, createRpcProvider, endpointSetOf } from "../../src/node/rpc-provider.js";

type Answer = (call: { id: number; method: string }) => unknown;
let answer: Answer = (call) => ({ jsonrpc: "2.0", id: call.id, result: "0x7a69" });
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify(answer(JSON.parse(body) as { id: number; method: string })));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => vi.useRealTimers());

function provider() {
  const endpoints = createEndpoints({ rpcUrls: [url], timeoutMs: 5_000, maxInFlight: 4 });
  const set = endpointSetOf(endpoints, 31337n, 5);
  for (const endpoint of endpoints) set.markOnTheChain(endpoint);
  return createRpcProvider(set, url, { maxCalls: 20, onRefused: () => undefined });
}

describe("a call through the service's provider", () => {
  it("leaves at once: it is answered while no timer ever fires", async () => {
    const rpc = provider();
    // ethers' own queue sends a call only from a timer; with timers stopped, such a call would never leave.
    vi.useFakeTimers({ toFake: ["setTimeout", "setInterval"] });
    expect(await rpc.send("eth_chainId", [])).toBe("0x7a69");
    expect(await rpc.send("eth_estimateGas", [{ to: "0x" + "11".repeat(20) }, "latest"])).toBe("0x7a69");
  }, 5_000);

  it("throws the node's error as ethers reads it: a revert is a call exception with the revert's data", async () => {
    answer = (call) => ({ jsonrpc: "2.0", id: call.id, error: { code: 3, message: "execution reverted: no", data: "0x08c379a0" } });
    const rpc = provider();
    const error = await rpc.send("eth_call", [{ to: "0x" + "11".repeat(20), data: "0x" }, "latest"]).catch((thrown: unknown) => thrown);
    expect(isError(error, "CALL_EXCEPTION")).toBe(true);
    expect((error as { data?: unknown }).data).toBe("0x08c379a0");
  });

  it("throws BAD_DATA when the reply holds no answer to the call", async () => {
    answer = (call) => ({ jsonrpc: "2.0", id: call.id + 1000, result: "0x1" });
    const error = await provider().send("eth_blockNumber", []).catch((thrown: unknown) => thrown);
    expect(isError(error, "BAD_DATA")).toBe(true);
    expect((error as Error).message).toMatch(/missing response for request/);
  });

  it("tells each call it sends as ethers does (the benchmarks count calls by it)", async () => {
    answer = (call) => ({ jsonrpc: "2.0", id: call.id, result: "0x1" });
    const rpc = provider();
    const sent: string[] = [];
    await rpc.on("debug", (event: { action: string; payload?: { method: string } }) => {
      if (event.action === "sendRpcPayload" && event.payload) sent.push(event.payload.method);
    });
    await rpc.send("eth_blockNumber", []);
    await rpc.send("eth_chainId", []);
    expect(sent).toEqual(["eth_blockNumber", "eth_chainId"]);
  });

  it("refuses calls once destroyed, as ethers does, also those gathered for a batch before", async () => {
    const received: string[] = [];
    answer = (call) => (received.push(call.method), { jsonrpc: "2.0", id: call.id, result: "0x1" });
    const rpc = provider();
    // Under way, so that the estimates below wait for the turn's end to go as a batch.
    const underWay = rpc.send("eth_blockNumber", []);
    const gathered = [1, 2].map(() => rpc.send("eth_estimateGas", [{ to: "0x" + "11".repeat(20) }, "latest"]).catch((thrown: unknown) => thrown));
    rpc.destroy();
    for (const error of await Promise.all(gathered)) expect(isError(error, "UNSUPPORTED_OPERATION")).toBe(true);
    await underWay.catch(() => undefined);
    expect(received).not.toContain("eth_estimateGas");
    const error = await rpc.send("eth_blockNumber", []).catch((thrown: unknown) => thrown);
    expect(isError(error, "UNSUPPORTED_OPERATION")).toBe(true);
  });
});
