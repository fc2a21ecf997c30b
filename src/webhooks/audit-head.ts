/**
 * Publishes the audit log's head (its last entry's number and hash) outside the database, every
 * AUDIT_HEAD_INTERVAL_MS while the log grows: a log line, the audit_head_* metrics and the webhook
 * `audit.head`. A copy kept elsewhere is what catches a log someone with the database shortened or rewrote
 * whole: `npm run audit:verify -- --expect <seq>:<hash>` checks the log still holds that entry with that hash.
 */
import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import { steadyWallClockNow } from "../clock.js";
import type { TransferJournal, WebhookEventRecord } from "../journal/transfer-journal.js";

/** The head last published, for the metrics. */
export interface PublishedAuditHead {
  seq: number;
  hash: string;
  keyed: boolean;
  /** ms, wall clock. */
  publishedAt: number;
}

export interface AuditHeadOptions {
  intervalMs: number;
  /** Whether the log is sealed with AUDIT_KEY_FILE's key. */
  keyed: boolean;
  /** The webhook endpoints (none: no event). */
  endpoints: readonly string[];
  /** Told that an event was journaled: the dispatcher looks for due deliveries at once. */
  onEvent: () => void;
  log: FastifyBaseLogger;
}

export class AuditHeadPublisher {
  #published: PublishedAuditHead | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly journal: Pick<TransferJournal, "auditHead" | "recordEvent" | "flushed">,
    private readonly options: AuditHeadOptions,
  ) {}

  get published(): PublishedAuditHead | undefined {
    return this.#published;
  }

  /** Publishes now, then every interval (none when the interval is 0). */
  start(): void {
    if (this.options.intervalMs <= 0) return;
    const publish = () => void this.publish().catch((error: unknown) => this.options.log.warn({ err: error }, "could not publish the audit log's head; the next interval tries again"));
    publish();
    this.#timer = setInterval(publish, this.options.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /**
   * Publishes the head when it moved since the last publication, once it is durable (a leader's commit is
   * shipped to the shared database first): a head a crash then loses would read as a rewritten log. Throws
   * when the journal takes no writes (nothing is published).
   */
  async publish(): Promise<void> {
    const head = this.journal.auditHead();
    if (!head || head.hash === null || head.seq === this.#published?.seq) return;
    await this.journal.flushed();
    if (head.seq <= (this.#published?.seq ?? 0)) return;
    const { keyed, endpoints, onEvent, log } = this.options;
    const expect = `${head.seq}:${head.hash}`;
    this.#published = { seq: head.seq, hash: head.hash, keyed, publishedAt: steadyWallClockNow() };
    log.info({ auditHead: { seq: head.seq, hash: head.hash, keyed } }, `audit log head (keep it outside the database): npm run audit:verify -- --expect ${expect}`);
    if (endpoints.length === 0) return;
    try {
      this.journal.recordEvent(auditHeadEvent({ seq: head.seq, hash: head.hash, at: head.at, keyed, expect }), endpoints);
      onEvent();
    } catch (error) {
      log.error({ err: error }, "could not journal the audit.head webhook event; the head stands in this log line and the metrics");
    }
  }
}

function auditHeadEvent(data: { seq: number; hash: string; at: number; keyed: boolean; expect: string }): WebhookEventRecord {
  const type = "audit.head";
  const body = JSON.stringify({ type, timestamp: new Date(steadyWallClockNow()).toISOString(), data: { ...data, at: new Date(data.at).toISOString() } });
  return { id: `msg_${randomUUID().replaceAll("-", "")}`, type, entryId: null, body };
}
