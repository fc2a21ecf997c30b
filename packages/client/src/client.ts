/**
 * The service's client. Every route is typed from its OpenAPI document (api-types.ts); a transfer or payout
 * always carries an Idempotency-Key (the caller's, or one made here and kept for its retries), and a request
 * is tried again only where docs/api.md says it may be (retry-rules.ts), so a retry never pays twice.
 */
import { randomUUID } from "node:crypto";
import type { ErrorReply, Operations } from "./api-types.js";
import { NoAnswerError, ServiceError, TransferNotPaidError, WaitTimeoutError } from "./errors.js";
import { type RequestKind, connectionFailureOf, retriesAnswer, retriesWithoutAnswer, retryDelayMs } from "./retry-rules.js";

export type OperationName = keyof Operations;
type Input<Name extends OperationName> = Partial<Pick<Operations[Name], "params" | "query" | "headers">> & { body?: Operations[Name]["body"] };
type Replies<Name extends OperationName> = Operations[Name]["replies"];

/** A 2xx answer: its status and body, typed by the route's schema for that status. */
export type Answer<Name extends OperationName> = {
  [Status in keyof Replies<Name>]: { statusCode: Status; body: Replies<Name>[Status]; headers: Headers };
}[keyof Replies<Name>];

export type TransferRequest = Operations["POST /transfer"]["body"];
export type TransferRecord = Operations["POST /transfer"]["replies"][200]["result"];
export type AwaitingApproval = Operations["POST /transfer"]["replies"][202];
export type PayoutRequest = Operations["POST /payouts"]["body"];
export type TransactionStatus = Operations["GET /transactions/{hash}"]["replies"][200];
export type LookupRecord = Operations["POST /getTransaction"]["replies"][200]["result"];

/** A transfer's or payout's answer, with the key that makes its repeat safe. */
export type KeyedAnswer<Sent, Waiting> =
  | { kind: "sent"; body: Sent; idempotencyKey: string; replayed: boolean }
  /** Above APPROVAL_ABOVE: nothing is signed until an admin approves; repeat with the same key to learn what became of it. */
  | { kind: "awaiting-approval"; approval: Waiting; idempotencyKey: string; replayed: boolean };

export interface ClientOptions {
  /** The service's URL, e.g. http://127.0.0.1:3000 */
  baseUrl: string;
  apiKey: string;
  /** Attempts of one request, the first included (default 10: about 30 s of retries at most). */
  attempts?: number;
  /** How long one attempt may wait for its answer (default 30 s); then it counts as one without an answer. */
  requestTimeoutMs?: number;
  /** The Idempotency-Key given to a transfer or payout made without one (default: a random UUID). */
  newIdempotencyKey?: () => string;
  /** Waits between attempts (tests). */
  sleep?: (ms: number) => Promise<void>;
}

export interface WaitOptions {
  /** How long to wait in all (default 2 minutes for a confirmation, 1 hour for finality). */
  timeoutMs?: number;
  /** How often to look (default 1 s for a confirmation, 5 s for finality). */
  pollMs?: number;
}

/** States of a transfer's status document that end it unpaid (docs/api.md, GET /transactions/:hash). */
const ENDED_UNPAID = new Set(["failed", "cancelled", "rejected", "replaced"]);

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class TransferServiceClient {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #attempts: number;
  readonly #requestTimeoutMs: number;
  readonly #newKey: () => string;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: ClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#apiKey = options.apiKey;
    this.#attempts = Math.max(1, options.attempts ?? 10);
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#newKey = options.newIdempotencyKey ?? randomUUID;
    this.#sleep = options.sleep ?? sleepFor;
  }

  /**
   * Sends tokens (POST /transfer). Give your own `idempotencyKey` (an order id) to make a repeat safe
   * across your process's restarts too; without one, a key is made and kept for this call's retries.
   * Throws ServiceError for a refusal (417: nothing was or will be sent), NoAnswerError when no answer
   * came (repeat with its idempotencyKey).
   */
  async transfer(body: TransferRequest, options: { idempotencyKey?: string } & Operations["POST /transfer"]["query"] = {}): Promise<KeyedAnswer<TransferRecord, AwaitingApproval>> {
    const { idempotencyKey = this.#newKey(), ...query } = options;
    const answer = await this.#request("POST /transfer", { body, query, headers: { "idempotency-key": idempotencyKey } }, "keyed", idempotencyKey);
    const replayed = answer.headers.get("idempotent-replayed") === "true";
    if (answer.statusCode === 202) return { kind: "awaiting-approval", approval: answer.body as AwaitingApproval, idempotencyKey, replayed };
    return { kind: "sent", body: (answer.body as Operations["POST /transfer"]["replies"][200]).result, idempotencyKey, replayed };
  }

  /** Pays many recipients in one transaction (POST /payouts), keyed as a transfer is. */
  async payout(body: PayoutRequest, options: { idempotencyKey?: string } = {}): Promise<KeyedAnswer<Operations["POST /payouts"]["replies"][200], Operations["POST /payouts"]["replies"][202]>> {
    const idempotencyKey = options.idempotencyKey ?? this.#newKey();
    const answer = await this.#request("POST /payouts", { body, headers: { "idempotency-key": idempotencyKey } }, "keyed", idempotencyKey);
    const replayed = answer.headers.get("idempotent-replayed") === "true";
    if (answer.statusCode === 202) return { kind: "awaiting-approval", approval: answer.body as Operations["POST /payouts"]["replies"][202], idempotencyKey, replayed };
    return { kind: "sent", body: answer.body as Operations["POST /payouts"]["replies"][200], idempotencyKey, replayed };
  }

  /** The transaction as ethers v5 described it, with its confirmations (POST /getTransaction). */
  async getTransaction(hash: string): Promise<LookupRecord> {
    const answer = await this.#request("POST /getTransaction", { body: { Tx: hash } }, "read");
    return (answer.body as Operations["POST /getTransaction"]["replies"][200]).result;
  }

  /** A transaction's or transfer's status document (GET /transactions/{hash}). */
  async status(hash: string): Promise<TransactionStatus> {
    return (await this.#request("GET /transactions/{hash}", { params: { hash } }, "read")).body as TransactionStatus;
  }

  /**
   * Waits until the transfer (any of its hashes) is mined and paid with `confirmations` (default 1).
   * Throws TransferNotPaidError if it ends unpaid, WaitTimeoutError when the time runs out (it goes on).
   * A confirmed transfer can still be undone by a reorganisation: waitForFinal says it cannot.
   */
  async waitForConfirmation(hash: string, options: WaitOptions & { confirmations?: number } = {}): Promise<TransactionStatus> {
    const wanted = options.confirmations ?? 1;
    return this.#waitFor(hash, options.timeoutMs ?? 120_000, options.pollMs ?? 1_000, `${wanted} confirmation(s)`, (status) => {
      if (status.state === "confirmed" && status.confirmations >= wanted) return true;
      // Ended unpaid only once the service says so; a failed outcome may yet be undone with its block.
      if (ENDED_UNPAID.has(status.state) && (status.state !== "failed" || status.finalized === true)) throw new TransferNotPaidError(hash, status.state, status);
      return false;
    });
  }

  /** Waits until the transfer's outcome is final (no reorganisation can undo it) and paid. */
  async waitForFinal(hash: string, options: WaitOptions = {}): Promise<TransactionStatus> {
    return this.#waitFor(hash, options.timeoutMs ?? 3_600_000, options.pollMs ?? 5_000, "finality", (status) => {
      if (status.finalized !== true) return false;
      if (status.state === "confirmed") return true;
      throw new TransferNotPaidError(hash, status.state, status);
    });
  }

  /**
   * Any route, typed by its OpenAPI schema. Reads (GET, POST /getTransaction) are tried again like the
   * lookups above; other actions (approve, cancel, resume, …) carry no key and are tried again only when
   * they never reached the service, or were refused for the rate limit.
   */
  async call<Name extends OperationName>(operation: Name, input: Input<Name> = {}): Promise<Answer<Name>> {
    const kind: RequestKind = operation.startsWith("GET ") || operation === "POST /getTransaction" ? "read" : "action";
    return this.#request(operation, input, kind);
  }

  async #waitFor(hash: string, timeoutMs: number, pollMs: number, what: string, done: (status: TransactionStatus) => boolean): Promise<TransactionStatus> {
    const deadline = Date.now() + timeoutMs;
    let last: TransactionStatus | undefined;
    for (;;) {
      try {
        last = await this.status(hash);
        if (done(last)) return last;
      } catch (error) {
        // A service that is restarting, or a replica that does not know the hash yet, is asked again.
        if (!(error instanceof NoAnswerError) && !(error instanceof ServiceError && (error.code === "TRANSACTION_NOT_FOUND" || error.statusCode >= 500))) throw error;
      }
      if (Date.now() + pollMs > deadline) throw new WaitTimeoutError(`transfer ${hash}: no ${what} within ${timeoutMs} ms`, last);
      await this.#sleep(pollMs);
    }
  }

  async #request<Name extends OperationName>(operation: Name, input: Input<Name>, kind: RequestKind, idempotencyKey?: string): Promise<Answer<Name>> {
    const [method, template] = operation.split(" ") as [string, string];
    const params = (input.params ?? {}) as Record<string, string>;
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries((input.query ?? {}) as Record<string, unknown>)) if (value !== undefined) query.set(name, String(value));
    const url = `${this.#baseUrl}${path}${query.size > 0 ? `?${query}` : ""}`;
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, ...((input.headers ?? {}) as Record<string, string>) };
    if (input.body !== undefined) headers["content-type"] = "application/json";
    const body = input.body === undefined ? undefined : JSON.stringify(input.body);
    let lastError: unknown;
    // The wait before the next attempt: what Retry-After said, else doubling.
    let retryAfterSeconds: number | undefined;
    for (let attempt = 1; attempt <= this.#attempts; attempt++) {
      if (attempt > 1) await this.#sleep(retryDelayMs(attempt - 1, retryAfterSeconds));
      retryAfterSeconds = undefined;
      let response: Response;
      let text: string;
      try {
        response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.#requestTimeoutMs) });
        // An answer cut off part way is no answer.
        text = await response.text();
      } catch (error) {
        lastError = error;
        if (retriesWithoutAnswer(kind, connectionFailureOf(error))) continue;
        break;
      }
      const parsed = parse(text, response.headers.get("content-type"));
      if (response.status < 400) return { statusCode: response.status, body: parsed, headers: response.headers } as Answer<Name>;
      const reply = asErrorReply(parsed, response.status, text);
      if (attempt === this.#attempts || !retriesAnswer(kind, response.status, reply.code)) throw new ServiceError(reply, idempotencyKey);
      const retryAfter = response.headers.get("retry-after");
      if (retryAfter !== null) retryAfterSeconds = Number(retryAfter);
      lastError = new ServiceError(reply, idempotencyKey);
    }
    if (lastError instanceof ServiceError) throw lastError;
    const repeat = idempotencyKey === undefined ? "" : `: repeat it with Idempotency-Key ${idempotencyKey}, which answers what was done`;
    throw new NoAnswerError(`${operation}: no answer from ${this.#baseUrl}${repeat}`, this.#attempts, idempotencyKey, lastError);
  }
}

function parse(text: string, contentType: string | null): unknown {
  if (!contentType?.includes("json")) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// Every refusal comes in the service's envelope; anything else (a proxy's page) is described as one.
function asErrorReply(parsed: unknown, statusCode: number, text: string): ErrorReply {
  const envelope = parsed as Partial<ErrorReply> | undefined;
  if (envelope && typeof envelope === "object" && typeof envelope.code === "string") return envelope as ErrorReply;
  return { statusCode, code: `HTTP_${statusCode}`, error: "", message: text.slice(0, 200) } as ErrorReply;
}
