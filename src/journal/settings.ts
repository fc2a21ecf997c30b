/** Where transfers are journaled (a SQLite file, or PostgreSQL shared by replicas), how long they are kept, and the audit log's key. */
import { Type } from "@sinclair/typebox";
import { type RawSettings, settingsPart } from "../settings/settings-part.js";

export const JOURNAL_SETTINGS = settingsPart({
  schema: {
    journalPath: Type.String({ minLength: 1, default: "./data/transfers.sqlite", description: "SQLite journal of every transfer" }),
    journalSynchronous: Type.Union([Type.Literal("FULL"), Type.Literal("NORMAL")], { default: "FULL" }),
    journalRetentionDays: Type.Integer({
      minimum: 0,
      maximum: 36_500,
      default: 0,
      description: "settled, final transfers older than this many days move from the journal to the archive files; 0 keeps them forever",
    }),
    journalArchiveDir: Type.Optional(Type.String({ minLength: 1, description: "where retention writes its archive files; default: archive/ next to JOURNAL_PATH" })),
    databaseUrl: Type.Optional(Type.String({ pattern: "^postgres(ql)?://", description: "PostgreSQL journal shared by several replicas; JOURNAL_PATH is then unused" })),
    auditKey: Type.Optional(
      Type.String({ minLength: 32, description: "a secret of at least 32 characters kept outside the database (AUDIT_KEY_FILE): every audit entry's hash is then an HMAC with it" }),
    ),
    auditHeadIntervalMs: Type.Integer({
      minimum: 0,
      maximum: 86_400_000,
      default: 600_000,
      description: "how often the leader publishes the audit log's head (its last entry and hash) outside the database: a log line, a metric and the webhook audit.head; 0: never",
    }),
  },
  variables: {
    journalPath: "JOURNAL_PATH",
    journalSynchronous: "JOURNAL_SYNCHRONOUS",
    journalRetentionDays: "JOURNAL_RETENTION_DAYS",
    journalArchiveDir: "JOURNAL_ARCHIVE_DIR",
    databaseUrl: "DATABASE_URL",
    auditKey: "AUDIT_KEY",
    auditHeadIntervalMs: "AUDIT_HEAD_INTERVAL_MS",
  },
  expectations: { journalSynchronous: "must be FULL or NORMAL" },
  secrets: ["auditKey"],
  urls: { databaseUrl: "one" },
  check: checkRetention,
});

/**
 * Retention keeps a transfer at least as long as its Idempotency-Key (a repeat must find its first answer)
 * and a day (the per-key daily cap counts the last 24 h).
 */
function checkRetention(raw: RawSettings, problems: string[]): void {
  if (typeof raw.journalRetentionDays !== "string" || !/^[0-9]+$/.test(raw.journalRetentionDays)) return;
  const days = Number(raw.journalRetentionDays);
  if (days === 0) return;
  const keyTtlHours = typeof raw.idempotencyKeyTtlHours === "string" ? Number(raw.idempotencyKeyTtlHours) : 24;
  if (days * 24 < keyTtlHours) {
    problems.push(`JOURNAL_RETENTION_DAYS: ${days} days is shorter than IDEMPOTENCY_KEY_TTL_HOURS (${keyTtlHours} h): a repeat of a key must still find its transfer`);
  }
}
