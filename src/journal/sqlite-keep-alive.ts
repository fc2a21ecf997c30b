/**
 * Every connection and statement ever opened, kept for the life of the process. better-sqlite3 12 builds
 * them on node::ObjectWrap, and Node 24.19+ aborts the process when such an object is finalised by a
 * garbage collection that runs outside a JS context (an idle GC: "RemoveEnvironmentCleanupHook: (env) !=
 * nullptr"). better-sqlite3 13 (N-API) fixes it but needs Node 22, and Node 20 is still the machine
 * Node here. A service opens one journal, so this holds what it holds anyway; tests that open many
 * journals keep them all (a few kilobytes each) instead of crashing a worker now and then.
 */
const NEVER_COLLECTED: unknown[] = [];

/** Keeps a better-sqlite3 object for the life of the process (see NEVER_COLLECTED). */
export function keepForever(object: unknown): void {
  NEVER_COLLECTED.push(object);
}
