/**
 * A follower's answer to everything that sends, cancels or reads the journal: the leader's answer. The
 * request goes to the leader as it came (method, path, the client's headers, the body's very bytes), and
 * the leader's status, headers and body come back unchanged, so a client cannot tell which replica it
 * reached. While no leader takes connections (a takeover), the request waits for the next one.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { request } from "undici";
import { ERROR_CODES } from "../errors.js";
import { envelope } from "../http/error-handler.js";
import { readNodeAnswer } from "../node/node-answers.js";
import type { LeaderRecord } from "./leadership.js";

// Hop-by-hop headers, and those undici sets itself.
const NOT_FORWARDED = new Set(["host", "connection", "keep-alive", "transfer-encoding", "content-length", "upgrade", "te", "trailer", "proxy-connection"]);

/** How long a forwarded request may take: a transfer that waits for confirmations can take minutes. */
const FORWARD_TIMEOUT_MS = 15 * 60_000;

/** Marks a forwarded request, so that a follower never forwards one again (it answers MISDIRECTED). */
export const FORWARDED_MARK = "x-forwarded-by-replica";
const MISDIRECTED = 421;

/**
 * A follower's answer to a request another follower forwarded to it, taking it for the leader: 421, which
 * the forwarding follower reads as "not delivered" and asks the next leader.
 */
export function refuseForwarded(reply: FastifyReply): FastifyReply {
  return reply
    .status(MISDIRECTED)
    .header(FORWARDED_MARK, "1")
    .send(envelope(MISDIRECTED, "LEADER_UNAVAILABLE", "this replica does not lead; the request was not acted on"));
}

/** Where the leader is: `current` as last recorded (cached briefly), `forget` after it refused a connection. */
export interface LeaderDirectory {
  current(): Promise<LeaderRecord | undefined>;
  forget(): void;
}

/** A leader refused connections or none is recorded: it never got the request, and another takes over within seconds. */
const WAIT_FOR_LEADER_MS = 10_000;
const LEADER_POLL_MS = 250;

/**
 * Where a request goes on the leader: the leader's origin, and the request's path and query, never taken
 * as an authority. `new URL("//other-host/x", leader)` or `"/\\other-host/x"` (the URL standard reads a
 * backslash as a slash) would leave the leader's host, and a request line may even carry an absolute URL:
 * leading slashes and backslashes fold to one slash, so whatever the client wrote is a path on the leader.
 */
export function leaderTarget(leaderUrl: string, requestUrl: string): URL {
  const origin = new URL(leaderUrl).origin;
  const target = new URL(`/${requestUrl.replace(/^[/\\]+/, "")}`, origin);
  if (target.origin !== origin) throw new Error(`refusing to forward ${JSON.stringify(requestUrl)} outside the leader's origin`);
  return target;
}

/** Sends the leader's answer to `req`; `rewrite` may change a 200 body (a follower's own facts in it). */
export async function forwardToLeader(
  req: FastifyRequest & { rawBody?: string },
  reply: FastifyReply,
  leaders: LeaderDirectory,
  rewrite?: (body: string) => string,
): Promise<FastifyReply> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !NOT_FORWARDED.has(name)) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  headers["x-forwarded-for"] = [req.headers["x-forwarded-for"], req.ip].filter(Boolean).join(", ");
  headers[FORWARDED_MARK] = "1";
  const deadline = Date.now() + WAIT_FOR_LEADER_MS;
  for (;;) {
    const leader = await leaders.current().catch(() => undefined);
    let answer;
    let body: string;
    try {
      if (!leader) throw Object.assign(new Error("no leader recorded"), { code: "ECONNREFUSED" });
      answer = await request(leaderTarget(leader.url, req.url), {
        method: req.method as "GET",
        headers,
        body: req.rawBody,
        headersTimeout: FORWARD_TIMEOUT_MS,
        bodyTimeout: FORWARD_TIMEOUT_MS,
      });
      // Read here: a leader that dies after its headers leaves the outcome as unknown as one that never answered.
      body = await answer.body.text();
    } catch (error) {
      // A refused connection (a dead leader's port) never carried the request: wait for the next leader.
      if ((error as { code?: string }).code === "ECONNREFUSED" && Date.now() < deadline) {
        leaders.forget();
        await new Promise((resolve) => setTimeout(resolve, LEADER_POLL_MS));
        continue;
      }
      // Whether the leader received it is unknown: a retry with the same Idempotency-Key is safe either way.
      // Without a key, a transfer's retry is a new transfer: the client is told what a lone service tells it
      // when it cannot say whether it sent one.
      if (leader && !neverDelivered(error) && isKeylessTransfer(req, leader.url)) {
        const { statusCode } = ERROR_CODES.TRANSFER_OUTCOME_UNKNOWN;
        return reply
          .status(statusCode)
          .send(
            envelope(
              statusCode,
              "TRANSFER_OUTCOME_UNKNOWN",
              `the leading replica ${leader.replicaId} got this transfer and stopped answering: whether it sent it is not known. The request has no Idempotency-Key, so sending it again may pay twice: look it up first (GET /transfers?recipient=...)`,
            ),
          );
      }
      const { statusCode, description } = ERROR_CODES.LEADER_UNAVAILABLE;
      return reply.status(statusCode).send(envelope(statusCode, "LEADER_UNAVAILABLE", leader ? `the leading replica ${leader.replicaId} did not answer; ${description.split("; ").at(-1)}` : description));
    }
    // The recorded leader is a follower now (it restarted at the same address): it did nothing with it.
    if (answer.statusCode === MISDIRECTED && answer.headers[FORWARDED_MARK] && Date.now() < deadline) {
      leaders.forget();
      await new Promise((resolve) => setTimeout(resolve, LEADER_POLL_MS));
      continue;
    }
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !NOT_FORWARDED.has(name) && name !== "x-request-id") reply.header(name, value);
    }
    return reply.status(answer.statusCode).send(rewrite && answer.statusCode === 200 ? rewrite(body) : body);
  }
}

// Failures to connect (the table that reads a node's answers, and undici's connect time-out): the request
// never left this replica.
function neverDelivered(error: unknown): boolean {
  return readNodeAnswer(error).meaning === "connection-refused" || (error as { code?: unknown } | null)?.code === "UND_ERR_CONNECT_TIMEOUT";
}

// POST /transfer without an Idempotency-Key (every other route that sends money requires one), by the path
// the leader routes: leading slashes folded, dot segments resolved, escapes decoded. Unreadable: taken for one.
function isKeylessTransfer(req: FastifyRequest, leaderUrl: string): boolean {
  if (req.method !== "POST" || req.headers["idempotency-key"] !== undefined) return false;
  try {
    return decodeURIComponent(leaderTarget(leaderUrl, req.url).pathname) === "/transfer";
  } catch {
    return true;
  }
}
