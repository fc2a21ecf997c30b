import Database from "better-sqlite3";

/**
 * Every connection and statement ever opened, kept for the life of the process. better-sqlite3 12 builds
 * them on node::ObjectWrap, and Node 24.19+ aborts the process when such an object is finalised by a
 * garbage collection that runs outside a JS context (an idle GC, or the last one at exit:
 * "RemoveEnvironmentCleanupHook: (env) != nullptr", SIGABRT). better-sqlite3 13 (N-API) fixes it but needs
 * Node 22: on Node 20, still the machine Node here, it crashes opening a database. A service opens one
 * journal, so this holds what it holds anyway; tests that open many journals keep them all (a few
 * kilobytes each) instead of losing a worker now and then.
 */
const NEVER_COLLECTED: unknown[] = [];

/**
 * Opens a better-sqlite3 database that, with every statement it prepares, is never garbage collected (see
 * NEVER_COLLECTED). The only way this project opens one: a guard test refuses `new Database(` elsewhere.
 * (`pragma()` prepares through the native object and is not covered: use exec() for settings. Nor is a
 * statement's iterate(), whose iterator is a native object of its own: read in pages with all().)
 */
export function openKeptDatabase(path: string, options?: Database.Options): Database.Database {
  const db = new Database(path, options);
  NEVER_COLLECTED.push(db);
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    NEVER_COLLECTED.push(statement);
    return statement;
  }) as Database.Database["prepare"];
  return db;
}
