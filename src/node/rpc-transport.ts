/**
 * HTTP POSTs of JSON-RPC bodies to one endpoint, over connections kept alive (undici). Its errors have the
 * shapes ethers' own FetchRequest gave, which node-answers.ts reads: TIMEOUT for no answer in time,
 * SERVER_ERROR with `response.statusCode` for an HTTP status other than 2xx, and Node's socket errors
 * (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET) as they are. No error carries the URL: it can hold a
 * provider's key. ethers' FetchRequest over `node:http` took about twice the CPU a call.
 */
import { type FetchResponse, makeError } from "ethers";
import { type Dispatcher, Pool, request } from "undici";

/**
 * How a rate-limited request (HTTP 429) is tried again, when it is: a random wait below a bound that
 * doubles each try, as ethers waits (a Retry-After is not waited for: the client is not held that long).
 */
export interface RateLimitRetry {
  maxAttempts: number;
  /** The first wait's bound, in ms. */
  slotInterval: number;
}

// undici's own time-outs: the connection, the reply's headers, the gap between two pieces of its body.
const TIMED_OUT = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

// A redirect is followed (the same POST, as ethers did) at most this many times in a row.
const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 307, 308]);

export class RpcTransport {
  readonly #pool: Pool;
  readonly #path: string;
  readonly #headers: Record<string, string>;
  readonly #retry: RateLimitRetry | undefined;
  readonly #timeoutMs: number;
  readonly #secure: boolean;
  readonly #origin: string;

  /** `retry`: a 429 is asked again (a lone endpoint); without it, a 429 is answered at once (another endpoint is asked). */
  constructor(url: string, timeoutMs: number, connections: number, retry?: RateLimitRetry) {
    const parsed = new URL(url);
    this.#path = `${parsed.pathname}${parsed.search}`;
    this.#headers = { "content-type": "application/json" };
    // Credentials in the URL go as Basic authentication, as Node's http.request sent them.
    if (parsed.username || parsed.password) {
      const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
      this.#headers.authorization = `Basic ${Buffer.from(credentials).toString("base64")}`;
    }
    this.#pool = new Pool(parsed.origin, { connections, connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    this.#retry = retry;
    this.#timeoutMs = timeoutMs;
    this.#secure = parsed.protocol === "https:";
    this.#origin = parsed.origin;
  }

  /** The reply's body to `body`, once its status is 2xx; throws as described above. */
  async post(body: string): Promise<Buffer> {
    for (let attempt = 0; ; attempt++) {
      const response = await this.#request(body);
      const retry = this.#retry;
      if (response.statusCode === 429 && retry && attempt + 1 < retry.maxAttempts) {
        await bodyOf(response.body);
        await new Promise((resolve) => setTimeout(resolve, retry.slotInterval * Math.trunc(Math.random() * 2 ** attempt)));
        continue;
      }
      return this.#settle(response, body, this.#origin, 0);
    }
  }

  // The reply's bytes when 2xx; a redirect followed (the same POST, as ethers did); else SERVER_ERROR.
  async #settle(response: Dispatcher.ResponseData, body: string, from: string, hops: number): Promise<Buffer> {
    const { statusCode, headers } = response;
    const bytes = await bodyOf(response.body);
    if (statusCode >= 200 && statusCode < 300) return bytes;
    if (!REDIRECTS.has(statusCode) || typeof headers.location !== "string") throw serverError(statusCode);
    // Absolute or relative http(s) locations, never from https down to http, at most MAX_REDIRECTS in a row;
    // the URL's credentials are not sent on.
    const target = URL.canParse(headers.location, from) ? new URL(headers.location, from) : undefined;
    if (!target || !["http:", "https:"].includes(target.protocol) || (this.#secure && target.protocol === "http:") || hops >= MAX_REDIRECTS) {
      throw makeError("unsupported redirect", "UNSUPPORTED_OPERATION", { operation: "redirect" });
    }
    let redirected: Dispatcher.ResponseData;
    try {
      redirected = await request(target, { method: "POST", headers: { "content-type": "application/json" }, body, headersTimeout: this.#timeoutMs, bodyTimeout: this.#timeoutMs });
    } catch (error) {
      throw timedOutOr(error);
    }
    return this.#settle(redirected, body, target.href, hops + 1);
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  async #request(body: string): Promise<Dispatcher.ResponseData> {
    try {
      return await this.#pool.request({ path: this.#path, method: "POST", headers: this.#headers, body });
    } catch (error) {
      throw timedOutOr(error);
    }
  }
}

function timedOutOr(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && TIMED_OUT.has(code) ? makeError("request timeout", "TIMEOUT") : error;
}

async function bodyOf(reply: { arrayBuffer(): Promise<ArrayBuffer> }): Promise<Buffer> {
  try {
    return Buffer.from(await reply.arrayBuffer());
  } catch (error) {
    throw timedOutOr(error);
  }
}

// Only the status is read from it (httpStatusOf): the rest of ethers' FetchResponse is not needed.
function serverError(statusCode: number): Error {
  return makeError(`server response ${statusCode}`, "SERVER_ERROR", { request: "POST", response: { statusCode } as unknown as FetchResponse });
}
