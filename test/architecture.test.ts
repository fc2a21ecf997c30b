/**
 * The import picture: each part of src/ imports only parts below it, and no file imports a file that
 * imports it back (directly or around a longer circle), so a part can be changed knowing what it may affect.
 * A new part gets its place here.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");

/** Lowest first: a part may import the parts of lower layers only (and its own files). */
const LAYERS: string[][] = [
  // console: the browser's script, which imports nothing of the server.
  ["clock", "errors", "logger", "console"],
  ["domain", "auth", "signers"],
  ["config"],
  ["network-settings"],
  ["secret-files"],
  ["node", "journal", "dev"],
  ["send-path", "metrics"],
  ["lookup", "finality", "webhooks", "outflows"],
  // Two-person approval: journals and sends through the send path, with its webhook events.
  ["wire", "approvals"],
  ["lanes"],
  // A network is made of lanes, and a lane of its send path.
  ["network"],
  // The journal, every network, and what works on the journal as a whole.
  ["chain-services"],
  ["http"],
  ["app"],
  ["compose"],
  ["replicas"],
  // Entry points: the service, and the audit log's check.
  ["server", "audit-verify"],
];
const RANK = new Map(LAYERS.flatMap((parts, rank) => parts.map((part) => [part, rank] as const)));

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

// The part of src/ a file belongs to: its folder, or its own name for a file at the top.
function partOf(file: string): string {
  const [first, second] = relative(SRC, file).split("/");
  return second === undefined ? first.replace(/\.ts$/, "") : first;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/from\s+"(\.[^"]+)"/g)].map(([, target]) => normalize(join(dirname(file), target.replace(/\.js$/, ".ts"))));
}

describe("the import picture of src/", () => {
  const files = sourceFiles(SRC);

  it("places every part in a layer", () => {
    expect([...new Set(files.map(partOf))].filter((part) => !RANK.has(part))).toEqual([]);
  });

  it("has no import from a part to one of its own layer or a higher one", () => {
    const upward: string[] = [];
    for (const file of files) {
      for (const target of importsOf(file)) {
        if (!target.startsWith(SRC)) continue;
        const [from, to] = [partOf(file), partOf(target)];
        if (from !== to && (RANK.get(to) as number) >= (RANK.get(from) as number)) upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it("has no import circle between its files, type imports included", () => {
    const importsByFile = new Map(files.map((file) => [file, importsOf(file).filter((target) => target.startsWith(SRC))]));
    expect(importCircles(importsByFile).map((circle) => circle.map((file) => relative(SRC, file)).join(" -> "))).toEqual([]);
  });
});

/** Each circle of imports, as the files on it (the first again at the end); a depth-first walk that reports a file met again on its own path. */
function importCircles(importsByFile: ReadonlyMap<string, readonly string[]>): string[][] {
  const circles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): void => {
    const onPath = path.indexOf(file);
    if (onPath !== -1) {
      circles.push([...path.slice(onPath), file]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const target of importsByFile.get(file) ?? []) visit(target);
    path.pop();
    done.add(file);
  };
  for (const file of importsByFile.keys()) visit(file);
  return circles;
}
