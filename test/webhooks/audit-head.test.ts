/**
 * The audit log's head published outside the database: a log line with the --expect argument, the
 * audit_head_* metrics and the webhook audit.head (as its schema says), each time the log grew; and what it
 * publishes is what audit:verify --expect checks.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { afterEach, describe, expect, it } from "vitest";
import { AuditChainCheck, auditKeyOf, findAuditBreak } from "../../src/journal/audit/audit-chain.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "../../src/journal/transfer-journal.js";
import { ServiceMetrics } from "../../src/metrics.js";
import { AuditHeadPublisher } from "../../src/webhooks/audit-head.js";
import { eventSchema } from "../../src/webhooks/webhook-openapi.js";
import { createLogger } from "../../src/logger.js";
import { Writable } from "node:stream";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const ENDPOINT = "https://hooks.example/audit";

describe("the audit log's head, published", () => {
  let dir: string | undefined;
  let journal: TransferJournal | undefined;
  afterEach(() => {
    journal?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("in a log line, the metrics and the webhook audit.head each time the log grew, and audit:verify --expect holds against it", async () => {
    dir = mkdtempSync(join(tmpdir(), "audit-head-"));
    const key = "audit-key-for-the-head-test-0123456789";
    journal = openSqliteJournal(join(dir, "transfers.sqlite"), OWNER, { auditKey: auditKeyOf(key) });
    const lines: string[] = [];
    const log = createLogger("info", {}, new Writable({ write: (chunk, _encoding, done) => (lines.push(chunk.toString()), done()) }));
    let woken = 0;
    const publisher = new AuditHeadPublisher(journal, { intervalMs: 60_000, keyed: true, endpoints: [ENDPOINT], onEvent: () => woken++, log });
    const metrics = new ServiceMetrics();
    metrics.watchAuditHead(() => publisher.published);

    journal.recordAudit({ kind: "operator.cancel", actor: "key_a", detail: { index: 1 } });
    await journal.flushed();
    await publisher.publish();
    await journal.flushed();
    // Nothing new: nothing published again.
    await publisher.publish();
    journal.recordAudit({ kind: "operator.cancel", actor: "key_a", detail: { index: 2 } });
    await journal.flushed();
    await publisher.publish();
    await journal.flushed();

    const events = journal.dueDeliveries(Date.now() + 60_000, 10, new Set()).map((delivery) => JSON.parse(delivery.body));
    expect(events).toHaveLength(2);
    expect(woken).toBe(2);
    for (const event of events) expect(Value.Errors(eventSchema("audit.head"), event).First()).toBeUndefined();
    const [first, second] = events.map((event) => event.data);
    expect(second.seq).toBeGreaterThan(first.seq);
    expect(second).toMatchObject({ keyed: true, expect: `${second.seq}:${second.hash}` });
    const logged = lines.map((line) => JSON.parse(line)).filter((line) => line.auditHead);
    expect(logged.map((line) => line.msg)).toEqual([first, second].map((head) => `audit log head (keep it outside the database): npm run audit:verify -- --expect ${head.expect}`));
    const scraped = await metrics.registry.metrics();
    expect(scraped).toContain(`audit_head_seq{hash="${second.hash}",keyed="true"} ${second.seq}`);
    expect(scraped).not.toContain(first.hash);

    // What was published is what the chain holds at that entry, checked with the key.
    const rows = await journal.auditEntries({ after: 0 }, 1_000);
    const check = new AuditChainCheck({ key: auditKeyOf(key) });
    expect(findAuditBreak(rows, check) ?? check.finish()).toBeUndefined();
    expect(rows.find((row) => row.seq === first.seq)?.hash).toBe(first.hash);
  });
});
