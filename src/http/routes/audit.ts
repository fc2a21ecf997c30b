/**
 * GET /audit: the tamper-evident audit log (admin), oldest first in pages after a cursor, or newest first
 * (what an operator looking into what just happened wants) in pages before one; or either as one CSV export
 * (`Accept: text/csv`) streamed a page at a time. `npm run audit:verify` checks its hash chain.
 */
import { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { csvLine } from "../../domain/csv.js";
import { ServiceError } from "../../errors.js";
import type { AuditRow } from "../../journal/audit/audit-chain.js";
import type { AuditCursor, TransferJournal } from "../../journal/transfer-journal.js";
import { wantsCsv } from "../csv-request.js";
import { errorReplies } from "../schemas.js";

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1_000;
/** Entries read per step of a CSV export: memory stays bounded, and the event loop gets a turn between steps. */
const CSV_PAGE = 500;

const AuditEntrySchema = Type.Object({
  seq: Type.Integer({ description: "its place in the log; pages continue after the last one (nextAfter), or before it newest first (nextBefore)" }),
  at: Type.String({ description: "when it happened (ISO time)" }),
  kind: Type.String({
    description:
      "transfer.<state> (made, or changed to that state), attempt.<kind> (a transaction signed for it), operator.<action> (cancel, reprice, reprice_refused, delivery_retry, resume_signing), " +
      "wallet.signing_paused, service.started (the settings a process started with, secrets only as set)",
  }),
  transferId: Type.Union([Type.Integer(), Type.Null()], { description: "the transfer it is about (GET /transfers lists it); null for none" }),
  actor: Type.Union([Type.String(), Type.Null()], { description: "the API key (its id) that did it, or expiry; null for the service itself" }),
  detail: Type.Record(Type.String(), Type.Unknown(), { description: "the facts of the change" }),
  prevHash: Type.String({ description: "the hash of the entry before it (64 zeros for the first)" }),
  hash: Type.String({ description: "SHA-256 of prevHash and this entry's fields: changing any entry breaks every hash after it" }),
});

const COLUMNS = ["seq", "at", "kind", "transferId", "actor", "detail", "prevHash", "hash"] as const;

export interface AuditRouteOptions {
  journal: Pick<TransferJournal, "auditEntries">;
}

export const auditRoute: FastifyPluginAsyncTypebox<AuditRouteOptions> = async (app, { journal }) => {
  app.get(
    "/audit",
    {
      schema: {
        summary: "The tamper-evident audit log",
        description:
          "Every state change of every transfer, every transaction signed for one, every operator action and the settings each process started with, " +
          "oldest first, each entry carrying the hash of the one before it (npm run audit:verify checks the chain); with JOURNAL_RETENTION_DAYS, entries older than that are in the archive. Pages continue after nextAfter " +
          "until it is null. With order=newest, the latest first, and pages continue before nextBefore. With `Accept: text/csv`, every entry from " +
          "the cursor on (or `limit` of them), in the same order, as one CSV export, streamed.",
        tags: ["operations"],
        operationId: "getAudit",
        querystring: Type.Object(
          {
            order: Type.Optional(Type.Union([Type.Literal("oldest"), Type.Literal("newest")], { description: "oldest first (the default), or newest first" })),
            after: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$", description: "oldest first: entries after this seq (nextAfter of the previous page); default: from the first" })),
            before: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$", description: "order=newest: entries before this seq (nextBefore of the previous page); default: from the latest" })),
            limit: Type.Optional(Type.String({ pattern: "^([1-9][0-9]{0,2}|1000)$", description: `at most this many (1 to ${MAX_PAGE}; default ${DEFAULT_PAGE}, a CSV export: all)` })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: {
            description: "a page of the log, or with Accept: text/csv the CSV export",
            content: {
              "application/json": {
                schema: Type.Object({
                  entries: Type.Array(AuditEntrySchema),
                  nextAfter: Type.Union([Type.String(), Type.Null()], { description: "oldest first: the next page's after; null when this page is not full, and newest first" }),
                  nextBefore: Type.Union([Type.String(), Type.Null()], { description: "order=newest: the next page's before; null when this page is not full, and oldest first" }),
                }),
              },
              "text/csv": { schema: Type.String({ description: `columns: ${COLUMNS.join(", ")}; detail as JSON` }) },
            },
          },
          ...errorReplies(400, 401, 403, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const cursor = cursorOf(request.query);
      const limit = request.query.limit === undefined ? undefined : Number(request.query.limit);
      if (wantsCsv(request.headers.accept)) {
        const stamp = new Date().toISOString().replaceAll(":", "-").slice(0, 19);
        return reply
          .type("text/csv; charset=utf-8")
          .header("content-disposition", `attachment; filename="audit-${stamp}.csv"`)
          .send(Readable.from(auditCsv(journal, cursor, limit)) as unknown as string);
      }
      const rows = await journal.auditEntries(cursor, limit ?? DEFAULT_PAGE);
      const next = rows.length === (limit ?? DEFAULT_PAGE) ? String(rows[rows.length - 1].seq) : null;
      return { entries: rows.map(asListed), nextAfter: "after" in cursor ? next : null, nextBefore: "before" in cursor ? next : null };
    },
  );
};

// Where the page starts: a cursor of the other order is refused, not ignored (the page would not be the one asked for).
function cursorOf(query: { order?: "oldest" | "newest"; after?: string; before?: string }): AuditCursor {
  if (query.order === "newest") {
    if (query.after !== undefined) throw new ServiceError("INVALID_QUERY", "after pages oldest first; with order=newest, page with before (nextBefore)");
    return { before: query.before === undefined ? Number.MAX_SAFE_INTEGER : Number(query.before) };
  }
  if (query.before !== undefined) throw new ServiceError("INVALID_QUERY", "before pages newest first: add order=newest");
  return { after: query.after === undefined ? 0 : Number(query.after) };
}

// The cursor of the page that follows the one ending at `seq`, in the same order.
function cursorAfterPage(cursor: AuditCursor, seq: number): AuditCursor {
  return "after" in cursor ? { after: seq } : { before: seq };
}

function asListed(row: AuditRow) {
  return {
    seq: row.seq,
    at: new Date(row.at).toISOString(),
    kind: row.kind,
    transferId: row.transfer_id,
    actor: row.actor,
    detail: JSON.parse(row.detail) as Record<string, unknown>,
    prevHash: row.prev_hash ?? "",
    hash: row.hash ?? "",
  };
}

async function* auditCsv(journal: AuditRouteOptions["journal"], from: AuditCursor, limit: number | undefined): AsyncGenerator<string> {
  yield csvLine(COLUMNS);
  let left = limit ?? Number.POSITIVE_INFINITY;
  let cursor = from;
  while (left > 0) {
    const rows = await journal.auditEntries(cursor, Math.min(CSV_PAGE, left));
    if (rows.length === 0) return;
    yield rows.map((row) => csvLine([row.seq, new Date(row.at).toISOString(), row.kind, row.transfer_id, row.actor, row.detail, row.prev_hash, row.hash])).join("");
    left -= rows.length;
    cursor = cursorAfterPage(cursor, rows[rows.length - 1].seq);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
