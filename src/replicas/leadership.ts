/**
 * Which replica leads: the one holding a PostgreSQL advisory lock on its own database session. The lock
 * goes with the session, so a leader that dies (or loses the database) frees it at once, and the journal
 * is written on that same session: a replica that lost the lock cannot write anything. The leader
 * records itself (id, the URL the others forward to, a new epoch) in the `leadership` row.
 */
import pg from "pg";
import { postgresOptions } from "../journal/postgres-journal-store.js";

/** The advisory lock key of the wallet's leader (one database serves one wallet: see journal_owner). */
const LEADER_LOCK_KEY = 7_310_002;

/** Who leads now, as recorded by the leader. */
export interface LeaderRecord {
  replicaId: string;
  url: string;
  epoch: number;
}

export interface LeadershipOptions {
  databaseUrl: string;
  replicaId: string;
  /** How the other replicas reach this one. */
  replicaUrl: string;
  /** How often a follower tries the lock, and the leader checks its session. */
  intervalMs: number;
}

/** A leader's session: the journal writes on it; `lost` resolves if the session (and so the lock) is gone. */
export interface LeaderSession {
  session: pg.Client;
  epoch: number;
  lost: Promise<Error>;
  /** Gives the lead up (on shutdown): ends the session, which frees the lock. */
  release(): Promise<void>;
}

/**
 * Tries the lock every `intervalMs` until it is held, then records this replica as the leader. A dead
 * leader's session is closed by PostgreSQL when its connection drops; the keepalive settings below make
 * the server notice a peer that vanished without closing it within seconds, not hours.
 */
export async function waitToLead(options: LeadershipOptions, stopped: () => boolean): Promise<LeaderSession | undefined> {
  while (!stopped()) {
    const session = new pg.Client(postgresOptions(options.databaseUrl));
    // A connection error between queries is emitted, not thrown: unheard, it would end the process. The
    // next query fails and a new session is made.
    session.on("error", () => undefined);
    try {
      await session.connect();
      await session.query("SET tcp_keepalives_idle = 2; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3");
      for (;;) {
        if (stopped()) {
          await session.end();
          return undefined;
        }
        const { rows } = await session.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [LEADER_LOCK_KEY]);
        if (rows[0].locked) return await recordLeader(session, options);
        await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
      }
    } catch {
      // The database is unreachable for now: try again with a new session.
      await session.end().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    }
  }
  return undefined;
}

async function recordLeader(session: pg.Client, options: LeadershipOptions): Promise<LeaderSession> {
  const { rows } = await session.query<{ epoch: number; pid: number }>(
    "UPDATE leadership SET epoch = epoch + 1, replica_id = $1, url = $2, since = $3 WHERE id = 1 RETURNING epoch, pg_backend_pid() AS pid",
    [options.replicaId, options.replicaUrl, Date.now()],
  );
  let ended = false;
  let resolveLost!: (error: Error) => void;
  const lost = new Promise<Error>((resolve) => (resolveLost = resolve));
  session.on("error", (error) => resolveLost(error));
  session.on("end", () => resolveLost(new Error("the database session ended")));
  const monitor = await watchLock(options, rows[0].pid, resolveLost);
  void lost.then(() => monitor.end().catch(() => undefined));
  return {
    session,
    epoch: rows[0].epoch,
    lost: lost.then((error) => (ended ? new Error("released") : error)),
    async release() {
      ended = true;
      await monitor.end().catch(() => undefined);
      await session.end().catch(() => undefined);
    },
  };
}

/**
 * Checks the leader's lock on a connection of its own: the leader's session also writes the journal, and
 * a health check queued behind its bulk work (a takeover copying a long history, a large shipment) would
 * call a busy session dead. The lock is looked up in pg_locks by the session's backend: it is there as long
 * as PostgreSQL keeps the session, whatever the session is doing. The monitor must answer within a few
 * intervals, or this replica counts as cut off from the database (a partition takes both connections).
 */
async function watchLock(options: LeadershipOptions, leaderPid: number, onLost: (error: Error) => void): Promise<pg.Client> {
  const monitor = new pg.Client(postgresOptions(options.databaseUrl));
  monitor.on("error", (error) => onLost(error));
  await monitor.connect();
  let stopped = false;
  monitor.on("end", () => {
    stopped = true;
  });
  const check = setInterval(() => {
    const timeout = setTimeout(() => onLost(new Error("the database stopped answering the leader's health check")), 3 * options.intervalMs);
    timeout.unref();
    monitor
      .query<{ held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $1 AND classid = 0 AND objid = $2 AND objsubid = 1
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())) AS held`,
        [leaderPid, LEADER_LOCK_KEY],
      )
      .then(
        ({ rows }) => {
          clearTimeout(timeout);
          if (!rows[0].held) onLost(new Error("the database no longer holds this replica's leader lock"));
        },
        (error: Error) => {
          clearTimeout(timeout);
          if (!stopped) onLost(error);
        },
      );
  }, options.intervalMs);
  check.unref();
  monitor.on("end", () => clearInterval(check));
  return monitor;
}

/** The leader as recorded, read by followers to forward to it. */
export async function readLeader(pool: pg.Pool): Promise<LeaderRecord | undefined> {
  const { rows } = await pool.query<{ replica_id: string | null; url: string | null; epoch: number }>("SELECT replica_id, url, epoch FROM leadership WHERE id = 1");
  const row = rows[0];
  return row?.replica_id && row.url ? { replicaId: row.replica_id, url: row.url, epoch: row.epoch } : undefined;
}
