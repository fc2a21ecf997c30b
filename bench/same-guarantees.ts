/**
 * The floor of what POST /transfer promises, for bench/transfer-bench.ts: the least work that keeps every
 * guarantee the service gives. Each transfer is estimated by the node first (a transfer the token would
 * refuse is refused before anything is signed), signed, written durably with an audit entry chained on the
 * one before, and only then broadcast: nothing reaches the node that a crash could lose.
 *
 * The write is grouped as a careful hand would group it, without waiting for company: SQLite (WAL,
 * synchronous FULL) commits once per turn of the event loop every write of that turn, as the service's
 * journal does; PostgreSQL (synchronous_commit on) sends at once when no commit is in flight, and what
 * arrives meanwhile goes in the next one, as one statement.
 */
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import pg from "pg";
import { openKeptDatabase } from "../src/journal/sqlite-keep-alive.js";

/** The signed bytes of one transfer, as kept before its broadcast. */
export interface SignedTransfer {
  nonce: number;
  hash: string;
  rawTransaction: string;
}

/** Where the signed bytes are kept: write() resolves once they are durable. */
export interface DurableRecord {
  write(transfer: SignedTransfer): Promise<void>;
  close(): Promise<void>;
}

const GENESIS = "0".repeat(64);

/** The audit entry of a signed transfer: its fields, and the hash chaining it to the entry before. */
function auditEntry(previousHash: string, transfer: SignedTransfer): { detail: string; hash: string } {
  const detail = JSON.stringify({ nonce: transfer.nonce, hash: transfer.hash });
  return { detail, hash: createHash("sha256").update(`${previousHash}|transfer.signed|${detail}`).digest("hex") };
}

/** A journal file of its own (WAL, synchronous FULL), removed at close. */
export function sqliteRecord(path: string): DurableRecord {
  // As the service opens its journal (see sqlite-keep-alive.ts), with the pragmas it sets.
  const db = openKeptDatabase(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("CREATE TABLE transfers (nonce INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, raw TEXT NOT NULL)");
  db.exec("CREATE TABLE audit (seq INTEGER PRIMARY KEY, detail TEXT NOT NULL, hash TEXT NOT NULL)");
  const insertTransfer = db.prepare("INSERT INTO transfers (nonce, hash, raw) VALUES (?, ?, ?)");
  const insertAudit = db.prepare("INSERT INTO audit (detail, hash) VALUES (?, ?)");
  const lastKeptHash = db.prepare("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1").pluck();
  let lastHash = GENESIS;
  let pending: Promise<void> | undefined;
  return {
    write(transfer) {
      if (!pending) {
        db.exec("BEGIN IMMEDIATE");
        pending = new Promise<void>((resolve, reject) =>
          setImmediate(() => {
            pending = undefined;
            try {
              db.exec("COMMIT");
              resolve();
            } catch (error) {
              // Nothing of the turn was kept: the next write begins afresh, chained on the last entry kept.
              if (db.inTransaction) db.exec("ROLLBACK");
              lastHash = (lastKeptHash.get() as string | undefined) ?? GENESIS;
              reject(error);
            }
          }),
        );
      }
      // Both rows or neither: a savepoint undoes this write alone, and the rest of the turn's group commits.
      db.exec("SAVEPOINT one");
      try {
        insertTransfer.run(transfer.nonce, transfer.hash, transfer.rawTransaction);
        const entry = auditEntry(lastHash, transfer);
        insertAudit.run(entry.detail, entry.hash);
        db.exec("RELEASE one");
        lastHash = entry.hash;
      } catch (error) {
        db.exec("ROLLBACK TO one");
        db.exec("RELEASE one");
        return Promise.reject(error);
      }
      return pending;
    },
    async close() {
      await pending;
      db.close();
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    },
  };
}

/** The two tables in a new database of the server `url` names, one connection. */
export async function postgresRecord(url: string): Promise<DurableRecord> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("CREATE TABLE transfers (nonce integer PRIMARY KEY, hash text NOT NULL UNIQUE, raw text NOT NULL)");
  await client.query("CREATE TABLE audit (seq bigserial PRIMARY KEY, detail text NOT NULL, hash text NOT NULL)");
  let lastHash = GENESIS;
  const waiting: { transfer: SignedTransfer; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let committing: Promise<void> | undefined;

  // One statement per group: the transfers and their audit entries commit together, or neither.
  async function commitWaiting(): Promise<void> {
    while (waiting.length > 0) {
      const group = waiting.splice(0);
      const chainedOn = lastHash;
      const entries = group.map(({ transfer }) => {
        const entry = auditEntry(lastHash, transfer);
        lastHash = entry.hash;
        return entry;
      });
      try {
        await client.query(
          `WITH kept AS (INSERT INTO transfers (nonce, hash, raw) SELECT * FROM unnest($1::integer[], $2::text[], $3::text[]))
           INSERT INTO audit (detail, hash) SELECT * FROM unnest($4::text[], $5::text[])`,
          [
            group.map(({ transfer }) => transfer.nonce),
            group.map(({ transfer }) => transfer.hash),
            group.map(({ transfer }) => transfer.rawTransaction),
            entries.map((entry) => entry.detail),
            entries.map((entry) => entry.hash),
          ],
        );
        for (const { resolve } of group) resolve();
      } catch (error) {
        // Nothing of the group was kept: the next entry chains on the last one that was.
        lastHash = chainedOn;
        for (const { reject } of group) reject(error);
      }
    }
    committing = undefined;
  }

  return {
    write(transfer) {
      const durable = new Promise<void>((resolve, reject) => waiting.push({ transfer, resolve, reject }));
      committing ??= commitWaiting();
      return durable;
    },
    async close() {
      await committing;
      await client.end();
    },
  };
}
