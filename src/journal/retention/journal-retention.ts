/**
 * Retention (JOURNAL_RETENTION_DAYS): transfers whose story is over, older than the retention, leave the
 * journal, so its size, the startup read, a new leader's takeover read and every query stay bounded however
 * long the service runs. Each is first archived with all its rows: appended to a JSON Lines file and the
 * file synced (a journal of its own), or inserted into the shared database's transfers_archive table
 * (several replicas); only then is it deleted. A crash between the two leaves it in both places, and the
 * next pass archives it again: a file may hold a transfer twice (its `transfer.id` tells; the table keeps
 * one), never lose one.
 *
 * The audit log's entries older than the retention follow the same way (never the last: the next entry
 * chains on from its hash), to an audit file of their own or the database's audit_archive table; the
 * commit that deletes them enters a journal.audit_archived entry naming the last one archived and its hash,
 * so that the chain verifies from where the log now starts, and from entry 1 with the archive.
 */
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { steadyWallClockNow } from "../../clock.js";
import { AUDIT_ARCHIVED_KIND, AUDIT_ARCHIVE_BATCH, type AuditArchivedDetail, type AuditRow } from "../audit/audit-chain.js";
import type { TransferJournal } from "../transfer-journal.js";

const DAY_MS = 86_400_000;
/** Transfers archived per step: one file append, one fsync and one commit each. */
const BATCH = 1_000;
/** A pass runs at startup and then this often. */
const PASS_INTERVAL_MS = 3_600_000;

export interface RetentionSettings {
  /** JOURNAL_RETENTION_DAYS (at least one day, and at least the Idempotency-Key TTL: checked by the config). */
  days: number;
  /** JOURNAL_ARCHIVE_DIR (unused when the journal lives in a shared database). */
  archiveDir: string;
}

/** What one pass did. */
export interface ArchivePass {
  archived: number;
  /** Where the pass archived to (a file, or the database's table); undefined when nothing was old enough. */
  into: string | undefined;
}

/**
 * One pass: every transfer retention may move out, oldest first, into the archive (the shared database's,
 * or today's file), then out of the journal.
 */
export async function archiveOldTransfers(journal: TransferJournal, settings: RetentionSettings, now = steadyWallClockNow()): Promise<ArchivePass> {
  const before = now - settings.days * DAY_MS;
  const file = join(settings.archiveDir, `transfers-${new Date(now).toISOString().slice(0, 10)}.jsonl`);
  const { databaseArchive } = journal;
  let archived = 0;
  for (;;) {
    const batch = journal.archivable(before, BATCH);
    if (batch.length === 0) break;
    if (databaseArchive) await databaseArchive(batch);
    else appendDurably(file, batch.map((transfer) => `${JSON.stringify(transfer)}\n`).join(""));
    const ids = batch.map((transfer) => transfer.transfer.id as number);
    journal.forgetArchived(ids);
    // In the commit that deletes them: which transfers left the journal, and where they went.
    journal.recordAudit({ kind: "journal.archived", actor: null, detail: { transfers: ids, into: databaseArchive ? "transfers_archive" : file } });
    await journal.flushed();
    archived += batch.length;
    // Other work runs between batches: a first pass over a long history does not hold the service up.
    await new Promise((resolve) => setImmediate(resolve));
  }
  const elsewhere = await journal.archiveSettledElsewhere(before);
  if (elsewhere > 0) {
    // Archived within the shared database itself (transfers this working copy never held): how many, and made before when.
    journal.recordAudit({ kind: "journal.archived", actor: null, detail: { count: elsewhere, madeBefore: new Date(before).toISOString(), into: "transfers_archive" } });
    await journal.flushed();
  }
  archived += elsewhere;
  return { archived, into: archived === 0 ? undefined : databaseArchive ? "the database's transfers_archive table" : file };
}

/**
 * One pass over the audit log: its entries entered before the retention, oldest first, into today's audit
 * file (a journal of its own) or the shared database's audit_archive table, then out of the log.
 */
export async function archiveOldAuditEntries(journal: TransferJournal, settings: RetentionSettings, now = steadyWallClockNow()): Promise<ArchivePass> {
  const before = now - settings.days * DAY_MS;
  const file = join(settings.archiveDir, `audit-${new Date(now).toISOString().slice(0, 10)}.jsonl`);
  let archived = 0;
  for (;;) {
    const batch = journal.archivableAudit(before, AUDIT_ARCHIVE_BATCH);
    if (batch.length === 0) break;
    appendDurably(file, batch.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
    const last = batch[batch.length - 1];
    journal.forgetArchivedAudit(last.seq);
    // In the commit that deletes them.
    recordArchivedThrough(journal, last, file);
    await journal.flushed();
    archived += batch.length;
    // A short batch reached the entries still young (or the log's last): the entry just made is one of them.
    if (batch.length < AUDIT_ARCHIVE_BATCH) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const elsewhere = await journal.archiveAuditElsewhere(before);
  if (elsewhere) {
    recordArchivedThrough(journal, elsewhere.last, "audit_archive");
    await journal.flushed();
    return { archived: elsewhere.count, into: "the database's audit_archive table" };
  }
  return { archived, into: archived === 0 ? undefined : file };
}

/** Enters that the audit log now starts after `last` (archived `into`), which hashed to what the next entry points back to. */
function recordArchivedThrough(journal: TransferJournal, last: AuditRow, into: string): void {
  journal.recordAudit({ kind: AUDIT_ARCHIVED_KIND, actor: null, detail: { throughSeq: last.seq, lastHash: last.hash as string, into } satisfies AuditArchivedDetail });
}

/** What a retention pass moved: transfers, and audit entries. */
export interface RetentionPass {
  transfers: ArchivePass;
  auditEntries: ArchivePass;
}

/** Runs a pass now and every hour; `report` hears of each pass that archived something, and of failures. */
export function startJournalRetention(
  journal: TransferJournal,
  settings: RetentionSettings,
  report: { archived: (pass: RetentionPass) => void; failed: (error: unknown) => void },
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const retain = async (): Promise<RetentionPass> => {
    const now = steadyWallClockNow();
    const transfers = await archiveOldTransfers(journal, settings, now);
    return { transfers, auditEntries: await archiveOldAuditEntries(journal, settings, now) };
  };
  const pass = () => {
    if (running || journal.failure) return;
    running = retain()
      .then((done) => (done.transfers.archived > 0 || done.auditEntries.archived > 0 ? report.archived(done) : undefined), report.failed)
      .finally(() => (running = undefined));
  };
  pass();
  const timer = setInterval(pass, PASS_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Appends `text` to the file at `path` and makes it durable before anything is deleted: every byte written (a
 * write may take only part of them), a line a power loss left torn ended first (the new lines then parse on
 * their own), the file synced, and the directories that name it and any directory made here.
 */
function appendDurably(path: string, text: string): void {
  const dir = dirname(path);
  const madeDirectory = mkdirSync(dir, { recursive: true, mode: 0o700 });
  const descriptor = openSync(path, "a+", 0o600);
  try {
    let bytes = Buffer.from(text);
    const { size } = fstatSync(descriptor);
    if (size > 0) {
      const lastByte = Buffer.alloc(1);
      readSync(descriptor, lastByte, 0, 1, size - 1);
      if (lastByte[0] !== NEWLINE) bytes = Buffer.concat([Buffer.from([NEWLINE]), bytes]);
    }
    for (let written = 0; written < bytes.length; ) written += writeSync(descriptor, bytes, written, bytes.length - written);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  // Every directory made here, from the top, is named in its parent; the file in its own (always: one made by
  // a pass cut off before this point exists now, and one more sync a batch costs little).
  if (madeDirectory !== undefined) {
    for (let made = dir; ; made = dirname(made)) {
      syncDirectory(dirname(made));
      if (made === madeDirectory || dirname(made) === made) break;
    }
  }
  syncDirectory(dir);
}

const NEWLINE = 0x0a;

function syncDirectory(dir: string): void {
  const descriptor = openSync(dir, "r");
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
