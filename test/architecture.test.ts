/**
 * The import picture: each part of src/ imports only parts below it, and no file imports a file that
 * imports it back (directly or around a longer circle), so a part can be changed knowing what it may affect.
 * A new part gets its place here. And the size of what a reader takes in at once: a function reads in one
 * screen, a file in one sitting.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");

/** Lowest first: a part may import the parts of lower layers only (and its own files). */
const LAYERS: string[][] = [
  // console: the browser's script, which imports nothing of the server.
  ["clock", "errors", "logger", "console"],
  ["domain", "auth", "signers"],
  // Every part's settings.ts (what it reads from the environment) counts here, with src/settings: config
  // gathers them (a settings file imports only what is below it, so the signers, below, do not read theirs).
  ["settings"],
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
/** The most lines a function of src/ spans, its signature and closing brace included (a nested function counts in its own right and in its outer one). */
const MOST_LINES_PER_FUNCTION = 80;

/** The most lines a file of src/ holds. */
const MOST_LINES_PER_FILE = 500;

const RANK = new Map(LAYERS.flatMap((parts, rank) => parts.map((part) => [part, rank] as const)));

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

// The part of src/ a file belongs to: its folder, or its own name for a file at the top; a part's settings.ts
// belongs to the settings.
function partOf(file: string): string {
  const [first, second] = relative(SRC, file).split("/");
  if (second === "settings.ts") return "settings";
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

describe("the size of src/", () => {
  const files = sourceFiles(SRC);

  it(`has no function over ${MOST_LINES_PER_FUNCTION} lines`, () => {
    expect(files.flatMap((file) => longFunctionsOf(file, MOST_LINES_PER_FUNCTION))).toEqual([]);
  });

  it(`has no file over ${MOST_LINES_PER_FILE} lines`, () => {
    const over = files.map((file) => [relative(SRC, file), linesOf(readFileSync(file, "utf8"))] as const).filter(([, lines]) => lines > MOST_LINES_PER_FILE);
    expect(over.map(([file, lines]) => `${file}: ${lines} lines`)).toEqual([]);
  });

  it("finds a long function and names it, nested or not (the check itself)", () => {
    const body = Array.from({ length: 4 }, (_, index) => `  step(${index});`).join("\n");
    const source = `export function outer() {\n  const inner = () => {\n${body}\n  };\n}\nclass Lane {\n  start() {\n${body}\n  }\n}\n`;
    expect(longFunctionsIn("sample.ts", source, 5)).toEqual(["sample.ts:1 outer: 8 lines", "sample.ts:2 inner: 6 lines", "sample.ts:10 start: 6 lines"]);
    expect(longFunctionsIn("sample.ts", source, 8)).toEqual([]);
  });

  it("reads a class made inside a function (a mixin) as a class: its methods count, each on its own, not the function that makes it (the check itself)", () => {
    const body = Array.from({ length: 4 }, (_, index) => `      step(${index});`).join("\n");
    const source = `export function withRecords(base) {\n  return class extends base {\n    one() {\n${body}\n    }\n    two() {\n      step();\n    }\n  };\n}\n`;
    expect(longFunctionsIn("sample.ts", source, 5)).toEqual(["sample.ts:3 one: 6 lines"]);
    expect(longFunctionsIn("sample.ts", source, 6)).toEqual([]);
  });
});

function linesOf(text: string): number {
  return text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
}

function longFunctionsOf(file: string, most: number): string[] {
  return longFunctionsIn(relative(SRC, file), readFileSync(file, "utf8"), most);
}

/**
 * Every function of `text` (declarations, methods, arrows, accessors) longer than `most` lines, as
 * "file:line name: N lines". A class made inside a function (a mixin's) is left out of the function's lines:
 * it is read as a class, and its methods are measured each on its own.
 */
function longFunctionsIn(name: string, text: string, most: number): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const long: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - first + 1 - classLinesIn(node.body, source);
      const named = node.name?.getText(source) ?? (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent) ? node.parent.name.getText(source) : "(anonymous)");
      if (lines > most) long.push(`${name}:${first + 1} ${named}: ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return long;
}

// The lines of the classes a function's body makes (not those of classes nested in them: counted once).
function classLinesIn(body: ts.Node, source: ts.SourceFile): number {
  let lines = 0;
  const visit = (node: ts.Node): void => {
    if (ts.isClassLike(node)) {
      lines += source.getLineAndCharacterOfPosition(node.getEnd()).line - source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      return;
    }
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(body, visit);
  return lines;
}

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
