/**
 * better-sqlite3 12 objects that a garbage collection finalises outside a JS context abort Node 24
 * (sqlite-keep-alive.ts). Kept alive they never are; this holds the project to opening them one way.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { openKeptDatabase } from "../../src/journal/sqlite-keep-alive.js";

const ROOT = join(import.meta.dirname, "..", "..");
const KEEPER = join("src", "journal", "sqlite-keep-alive.ts");

function typescriptFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? typescriptFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("better-sqlite3 connections and statements", () => {
  it("are opened through openKeptDatabase only, and neither pragma() (which prepares past it) nor iterate() (an iterator it cannot keep) is used", () => {
    const files = ["src", "test", "bench", "scripts"].flatMap((folder) => typescriptFiles(join(ROOT, folder)));
    const offenders = files
      .map((path) => relative(ROOT, path))
      .filter((path) => path !== KEEPER && path !== relative(ROOT, import.meta.filename))
      .filter((path) => /new Database\(|\.pragma\(|\.iterate\(/.test(readFileSync(join(ROOT, path), "utf8")));
    expect(offenders).toEqual([]);
  });

  it("open a working database whose prepared statements run as better-sqlite3's own", () => {
    const dir = mkdtempSync(join(tmpdir(), "keep-alive-test-"));
    try {
      const db = openKeptDatabase(join(dir, "kept.sqlite"));
      db.exec("CREATE TABLE t (a INTEGER)");
      db.prepare("INSERT INTO t (a) VALUES (?)").run(7);
      expect(db.prepare("SELECT a FROM t").pluck().get()).toBe(7);
      db.close();
      expect(openKeptDatabase(join(dir, "kept.sqlite"), { readonly: true }).prepare("SELECT COUNT(*) FROM t").pluck().get()).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
