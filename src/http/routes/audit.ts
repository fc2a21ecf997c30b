/**
 * GET /audit: the tamper-evident audit log (admin), oldest first, in pages after a cursor, or as one CSV
 * export (`Accept: text/csv`) streamed a page at a time. `npm run audit:verify` checks its hash chain.
 */
import { Readable } from "node:stream";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { csvLine } from "../../domain/csv.js";
import type { AuditRow } from "../../journal/audit-chain.js";
import type { TransferJournal } from "../../journal/transfer-journal.js";
import { wantsCsv } from "../csv-request.js";
import { errorReplies } from "../schemas.js";

const DEFAULT_PAGE = 100;
const MAX_PAGE = 1_000;
/** Entries read per step of a CSV export: memory stays bounded, and the event loop gets a turn between steps. */
const CSV_PAGE = 500;

const AuditEntrySchema = Type.Object({
  seq: Type.Integer({ description: "its place in the log; pages continue after the last one (nextAfter)" }),
  at: Type.String({ description: "when it happened (ISO time)" }),
  kind: Type.String({
    description:
      "transfer.<state> (made, or changed to that state), attempt.<kind> (a transaction signed for it), operator.<action> (cancel, reprice, delivery_retry, resume_signing), " +
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
          "oldest first, each entry carrying the hash of the one before it (npm run audit:verify checks the chain). Pages continue after nextAfter " +
          "until it is null. With `Accept: text/csv`, every entry after `after` (or `limit` of them) as one CSV export, streamed.",
        tags: ["operations"],
        operationId: "getAudit",
        querystring: Type.Object(
          {
            after: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$", description: "entries after this seq (nextAfter of the previous page); default: from the first" })),
            limit: Type.Optional(Type.String({ pattern: "^([1-9][0-9]{0,2}|1000)$", description: `at most this many (1 to ${MAX_PAGE}; default ${DEFAULT_PAGE}, a CSV export: all)` })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: {
            description: "a page of the log, or with Accept: text/csv the CSV export",
            content: {
              "application/json": { schema: Type.Object({ entries: Type.Array(AuditEntrySchema), nextAfter: Type.Union([Type.String(), Type.Null()]) }) },
              "text/csv": { schema: Type.String({ description: `columns: ${COLUMNS.join(", ")}; detail as JSON` }) },
            },
          },
          ...errorReplies(400, 401, 403, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const after = request.query.after === undefined ? 0 : Number(request.query.after);
      const limit = request.query.limit === undefined ? undefined : Number(request.query.limit);
      if (wantsCsv(request.headers.accept)) {
        const stamp = new Date().toISOString().replaceAll(":", "-").slice(0, 19);
        return reply
          .type("text/csv; charset=utf-8")
          .header("content-disposition", `attachment; filename="audit-${stamp}.csv"`)
          .send(Readable.from(auditCsv(journal, after, limit)) as unknown as string);
      }
      const rows = await journal.auditEntries(after, limit ?? DEFAULT_PAGE);
      const full = rows.length === (limit ?? DEFAULT_PAGE);
      return { entries: rows.map(asListed), nextAfter: full ? String(rows[rows.length - 1].seq) : null };
    },
  );
};

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

async function* auditCsv(journal: AuditRouteOptions["journal"], after: number, limit: number | undefined): AsyncGenerator<string> {
  yield csvLine(COLUMNS);
  let left = limit ?? Number.POSITIVE_INFINITY;
  let cursor = after;
  while (left > 0) {
    const rows = await journal.auditEntries(cursor, Math.min(CSV_PAGE, left));
    if (rows.length === 0) return;
    yield rows.map((row) => csvLine([row.seq, new Date(row.at).toISOString(), row.kind, row.transfer_id, row.actor, row.detail, row.prev_hash, row.hash])).join("");
    left -= rows.length;
    cursor = rows[rows.length - 1].seq;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
