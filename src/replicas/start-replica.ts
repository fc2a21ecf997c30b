/**
 * One of several replicas of the service on one PostgreSQL database (DATABASE_URL). Every replica
 * listens and looks transactions up; the one that holds the leader's lock also sends transfers and runs
 * the background work (reconciliation, re-sending, re-pricing, webhooks), with its journal written
 * through to the database. The others forward what only the leader may do, and keep trying the lock:
 * when the leader dies, one of them takes over within seconds, from what the database holds.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import pg from "pg";
import type { Logger } from "pino";
import { ApiKeyRing } from "../auth/api-keys.js";
import { type LeadingReplica, type RunningService, composeService } from "../compose.js";
import type { DeploymentConfig } from "../config.js";
import { auditKeyOf } from "../journal/audit/audit-chain.js";
import { postgresJournalReader } from "../journal/postgres-journal-reader.js";
import type { JournalElsewhere } from "../journal/journal-records.js";
import { migrateDatabase, openPostgresJournal, postgresOptions } from "../journal/postgres-journal-store.js";
import { ChainHeadTracker, readLatestBlock } from "../lookup/chain-head.js";
import { TransactionLookup } from "../lookup/transaction-lookup.js";
import { ServiceMetrics } from "../metrics.js";
import { type ChainConnection, checkNode, closeChain, connectChain, rpcWatchers } from "../node/connect-chain.js";
import { buildFollowerApp } from "./follower-app.js";
import { namesNetwork } from "../network-settings/network-choice.js";
import { type LeaderRecord, type LeaderSession, readLeader, waitToLead } from "./leadership.js";

/** A follower tries the lock, and a leader checks its session, this often: takeover well within 10 s. */
const LEADERSHIP_INTERVAL_MS = 1_000;
/** A follower reads who leads at most this often (and again after the leader failed to answer). */
const LEADER_CACHE_MS = 1_000;

export interface RunningReplica {
  server: Server;
  replicaId: string;
  leads(): boolean;
  close(): Promise<void>;
}

export interface ReplicaOptions {
  port: number;
  host: string;
  /** Called when this replica led and lost its database session: it must stop at once (exit and restart). */
  onLeadershipLost(error: Error): void;
}

export async function startReplica(config: DeploymentConfig & { databaseUrl: string }, logger: Logger, options: ReplicaOptions): Promise<RunningReplica> {
  const replicaId = config.replicaId ?? `${hostname()}-${process.pid}`;
  const log = logger.child({ replica: replicaId });
  const pool = await openMigratedPool(config.databaseUrl, log);

  const metrics = new ServiceMetrics();
  const chain = await connectChain(config, rpcWatchers(logger, metrics.observeRpc));
  let leading: { service: RunningService; lead: LeaderSession } | undefined;
  metrics.watchReplica(replicaId, () => leading !== undefined);
  metrics.watchEndpoints(() => [{ network: chain.network.name, reports: chain.endpoints.reports() }]);
  const head = new ChainHeadTracker(() => readLatestBlock(chain.provider), config.headMaxAgeMs);
  const lookup = new TransactionLookup(chain.provider, head, config.transactionCacheSize);
  const leaders = cachedLeader(pool);
  const reader = postgresJournalReader(pool);
  const follower = buildFollowerApp(config, {
    replicaId,
    logger: log,
    metrics,
    apiKeys: config.authDisabled ? undefined : ApiKeyRing.parse(config.apiKeys ?? ""),
    network: chain.network,
    isAnotherNetworks: config.otherNetworks?.length ? isAnotherNetworksOf(chain, reader) : undefined,
    lookup,
    attempts: reader,
    leaders,
    endpointStates: () => chain.endpoints.states(),
    readinessChecks: {
      node: () => checkNode(chain.endpoints, head),
      database: async () => pool.query("SELECT 1").then(() => undefined, () => "the database did not answer"),
      leader: async () => ((await leaders.current().catch(() => undefined)) ? undefined : "no replica leads: transfers cannot be sent until one takes over"),
    },
  });
  await follower.ready();

  let active: { routing(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse): void } = follower;
  const server = createServer((req, res) => active.routing(req, res));
  const port = await listen(server, options);
  const replicaUrl = config.replicaUrl ?? `http://${options.host === "0.0.0.0" || options.host === "::" ? hostname() : options.host}:${port}`;
  log.info({ replicaUrl }, `Server listening at http://${options.host}:${port} as a replica; trying to lead`);

  let stopped = false;
  const lead = async () => {
    while (!stopped) {
      const session = await waitToLead({ databaseUrl: config.databaseUrl, replicaId, replicaUrl, intervalMs: LEADERSHIP_INTERVAL_MS }, () => stopped);
      if (!session) return;
      try {
        const service = await composeService(config, log, leadingReplica(config, replicaId, session, reader));
        await service.app.ready();
        leading = { service, lead: session };
        active = service.app;
        leaders.forget();
        log.info({ epoch: session.epoch }, "this replica leads: it sends transfers and runs the background work");
        watchLeadership(service, session, () => stopped, options.onLeadershipLost);
        return;
      } catch (error) {
        log.error({ err: error }, "could not start leading; giving the lead up and trying again");
        await session.release();
        await new Promise((resolve) => setTimeout(resolve, LEADERSHIP_INTERVAL_MS));
      }
    }
  };
  const leadership = lead();

  return {
    server,
    replicaId,
    leads: () => leading !== undefined,
    async close() {
      stopped = true;
      await leadership;
      await closeServer(server);
      if (leading) {
        await leading.service.close();
        await leading.lead.release();
      }
      await follower.close();
      await pool.end();
      await closeChain(chain);
    },
  };
}

/** The pool of database connections, with the database migrated to this version's schema. */
async function openMigratedPool(databaseUrl: string, log: Logger): Promise<pg.Pool> {
  const pool = new pg.Pool({ ...postgresOptions(databaseUrl), max: 4 });
  // An idle connection that breaks is emitted as an error (unheard, it would end the process); the pool
  // replaces it, and /ready's database check says whether queries work.
  pool.on("error", (error) => log.warn({ err: error }, "a database connection of the pool broke"));
  const migrationClient = await pool.connect();
  try {
    const applied = await migrateDatabase(migrationClient);
    if (applied.length > 0) log.info({ versions: applied }, "database migrated");
  } finally {
    migrationClient.release();
  }
  return pool;
}

/** Who leads, read from the database at most every LEADER_CACHE_MS; forgotten when the leader did not answer or this replica took over. */
function cachedLeader(pool: pg.Pool) {
  let knownLeader: { record: LeaderRecord | undefined; readAt: number } | undefined;
  return {
    async current() {
      if (!knownLeader || Date.now() - knownLeader.readAt > LEADER_CACHE_MS) knownLeader = { record: await readLeader(pool), readAt: Date.now() };
      return knownLeader.record;
    },
    forget: () => (knownLeader = undefined),
  };
}

/** Several networks: another network's lookups are the leader's, which is connected to every one. */
function isAnotherNetworksOf(chain: ChainConnection, reader: JournalElsewhere) {
  return async ({ Tx, network }: { Tx: string; network?: string | number }) => {
    if (network !== undefined) return !namesNetwork(chain.network, network);
    const known = await reader.findByHash(Tx.toLowerCase());
    return known !== undefined && BigInt(known.chainId) !== chain.chainId;
  };
}

/** Listens; a port in use is a startup error like any other ("cannot start: listen EADDRINUSE ..."), not a crash. */
async function listen(server: Server, { port, host }: Pick<ReplicaOptions, "port" | "host">): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** Stops listening, closing idle keep-alive connections, and resolves once every connection has closed. */
function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** What the leader's service runs on: the journal written through its database session, checked by /ready. */
function leadingReplica(config: DeploymentConfig & { databaseUrl: string }, replicaId: string, session: LeaderSession, reader: JournalElsewhere): LeadingReplica {
  return {
    id: replicaId,
    openJournal: (owner, { notify }) =>
      openPostgresJournal(session.session, owner, {
        reads: reader,
        notify,
        connectAgain: () => new pg.Client(postgresOptions(config.databaseUrl)),
        auditKey: auditKeyOf(config.auditKey),
      }),
    checkDatabase: async () => session.session.query("SELECT 1").then(() => undefined, () => "the leader's database session is lost"),
  };
}

/** The leader stops at once when its session is lost, or its journal cannot write to the database: a replica that can should lead. */
function watchLeadership(service: RunningService, session: LeaderSession, stopped: () => boolean, onLeadershipLost: (error: Error) => void): void {
  const journalCheck = setInterval(() => {
    const failure = service.services.journal.failure;
    if (failure && !stopped()) onLeadershipLost(failure);
  }, LEADERSHIP_INTERVAL_MS);
  journalCheck.unref();
  void session.lost.then((error) => {
    clearInterval(journalCheck);
    if (!stopped()) onLeadershipLost(error);
  });
}
