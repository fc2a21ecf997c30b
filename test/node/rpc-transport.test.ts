/**
 * The HTTP transport of every JSON-RPC call (rpc-transport.ts), against plain HTTP servers on 127.0.0.1:
 * what it sends, and that each way a request can fail reads as it did through ethers' FetchRequest
 * (node-answers.ts decides from that whether a broadcast was surely not taken).
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { isError } from "ethers";
import { afterEach, describe, expect, it } from "vitest";
import { httpStatusOf, readNodeAnswer } from "../../src/node/node-answers.js";
import { RpcTransport } from "../../src/node/rpc-transport.js";
import { freePort } from "../helpers/free-port.js";

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Seen {
  url: string;
  authorization: string | undefined;
  body: string;
}

/** A server answering each request with `handle`; records what it got. */
async function serve(handle: (request: IncomingMessage, response: ServerResponse, seen: Seen[]) => void): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server: Server = createServer(async (request, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    seen.push({ url: request.url ?? "", authorization: request.headers.authorization, body });
    handle(request, response, seen);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function transport(url: string, options: { timeoutMs?: number; retry?: boolean } = {}): RpcTransport {
  const made = new RpcTransport(url, options.timeoutMs ?? 5_000, 4, options.retry ? { maxAttempts: 4, slotInterval: 10 } : undefined);
  closers.push(() => made.close());
  return made;
}

const failure = (promise: Promise<unknown>) => promise.then(() => expect.fail("it should have failed"), (error: unknown) => error);

describe("the JSON-RPC transport", () => {
  it("posts the body to the URL's path and query, with the URL's credentials as Basic authentication, and answers the reply's bytes", async () => {
    const node = await serve((_request, response) => response.writeHead(200, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":"0x1"}'));
    const url = new URL(`${node.origin}/v3/secret-key?x=1`);
    url.username = "user";
    url.password = "p@ss";
    const reply = await transport(url.href).post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
    expect(reply.toString()).toBe('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
    expect(node.seen).toEqual([{ url: "/v3/secret-key?x=1", authorization: `Basic ${Buffer.from("user:p@ss").toString("base64")}`, body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' }]);
  });

  it("throws SERVER_ERROR with the status for a reply other than 2xx, without the URL (it can hold a provider's key)", async () => {
    const node = await serve((_request, response) => response.writeHead(502).end("bad gateway"));
    const error = await failure(transport(`${node.origin}/v3/secret-key`).post("{}"));
    expect(isError(error, "SERVER_ERROR")).toBe(true);
    expect(httpStatusOf(error)).toBe(502);
    expect(readNodeAnswer(error).meaning).toBe("no-answer");
    expect(String((error as Error).message)).not.toMatch(/secret-key|127\.0\.0\.1/);
  });

  it("asks a lone endpoint again after HTTP 429, four tries in all; one of several at once reads as a rate limit", async () => {
    const node = await serve((_request, response) => response.writeHead(429).end());
    const lone = await failure(transport(node.origin, { retry: true }).post("{}"));
    expect(node.seen).toHaveLength(4);
    expect(readNodeAnswer(lone).meaning).toBe("rate-limited");
    const another = await failure(transport(node.origin).post("{}"));
    expect(node.seen).toHaveLength(5);
    expect(readNodeAnswer(another).meaning).toBe("rate-limited");
  });

  it("gets past a 429 that does not last", async () => {
    const node = await serve((_request, response, seen) => (seen.length < 3 ? response.writeHead(429).end() : response.writeHead(200).end("{}")));
    expect((await transport(node.origin, { retry: true }).post("{}")).toString()).toBe("{}");
    expect(node.seen).toHaveLength(3);
  });

  it("throws TIMEOUT when no reply comes in time", async () => {
    const node = await serve(() => undefined);
    const error = await failure(transport(node.origin, { timeoutMs: 300 }).post("{}"));
    expect(isError(error, "TIMEOUT")).toBe(true);
    expect(readNodeAnswer(error).meaning).toBe("no-answer");
    expect(node.seen).toHaveLength(1);
  });

  it("reads a refused connection as refused (nothing reached the node), and a reply cut short as no answer (the node got the request)", async () => {
    const refused = await failure(transport(`http://127.0.0.1:${await freePort()}`).post("{}"));
    expect(readNodeAnswer(refused).meaning).toBe("connection-refused");
    const node = await serve((request, response) => {
      response.writeHead(200, { "content-length": "100" }).write('{"jsonrpc":');
      request.socket.destroy();
    });
    const cut = await failure(transport(node.origin).post("{}"));
    expect(readNodeAnswer(cut).meaning).toBe("no-answer");
  });

  it("follows a redirect with the same POST, as ethers did, leaving the credentials behind", async () => {
    const target = await serve((_request, response) => response.writeHead(200).end('{"moved":true}'));
    const node = await serve((_request, response) => response.writeHead(308, { location: `${target.origin}/new` }).end());
    const url = new URL(node.origin);
    url.username = "user";
    url.password = "secret";
    expect((await transport(url.href).post('{"a":1}')).toString()).toBe('{"moved":true}');
    expect(target.seen).toEqual([{ url: "/new", authorization: undefined, body: '{"a":1}' }]);
  });
});
