/**
 * Retention (JOURNAL_RETENTION_DAYS): transfers whose story is over, older than the retention, leave the
 * journal, so its size, the startup read, a new leader's takeover read and every query stay bounded however
 * long the service runs. Each is first archived with all its rows: appended to a JSON Lines file and the
 * file synced (a journal of its own), or inserted into the shared database's transfers_archive table
 * (several replicas); only then is it deleted. A crash between the two leaves it in both places, and the
 * next pass archives it again: a file may hold a transfer twice (its `transfer.id` tells; the table keeps
 * one), never lose one.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { steadyWallClockNow } from "../clock.js";
import type { TransferJournal } from "./transfer-journal.js";

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

/** Runs a pass now and every hour; `report` hears of each pass that archived something, and of failures. */
export function startJournalRetention(
  journal: TransferJournal,
  settings: RetentionSettings,
  report: { archived: (pass: ArchivePass) => void; failed: (error: unknown) => void },
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const pass = () => {
    if (running || journal.failure) return;
    running = archiveOldTransfers(journal, settings)
      .then((done) => (done.archived > 0 ? report.archived(done) : undefined), report.failed)
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

function appendDurably(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  const descriptor = openSync(path, "a", 0o600);
  try {
    writeSync(descriptor, text);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}
