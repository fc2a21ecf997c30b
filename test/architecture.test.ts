/**
 * The import picture: each part of src/ imports only parts below it, so there is no circle, and a part can
 * be changed knowing what it may affect. A new part gets its place here.
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
});
