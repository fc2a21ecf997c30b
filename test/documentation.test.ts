/**
 * The README is the front door and docs/ holds the rest: every page is reachable and read by the example
 * tests, every link lands, and every command and source file a page names exists.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { ApiKeyRing } from "../src/auth/api-keys.js";
import { ERROR_CODES } from "../src/errors.js";
import { ROUTE_ROLES } from "../src/http/auth.js";
import { DOCUMENTS } from "./helpers/documentation.js";

const SCRIPTS = Object.keys((JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts);

// The anchors GitHub makes of a page's headings.
function anchorsOf(path: string): Set<string> {
  const headings = readFileSync(path, "utf8").match(/^#+ .+$/gm) ?? [];
  return new Set(headings.map((heading) => heading.replace(/^#+ /, "").toLowerCase().replace(/[^\w\- ]/g, "").replaceAll(" ", "-")));
}

describe("the documentation", () => {
  it("gives an API_KEYS recipe (api.md) that shows each key it makes, and makes keys the service takes in their roles", () => {
    const fence = /```sh\n((?:#[^\n]*\n)?TRANSFER_KEY=[\s\S]*?API_KEYS=[^\n]+)\n```/.exec(readFileSync("docs/api.md", "utf8"))?.[1];
    expect(fence).toBeDefined();
    const printed = execFileSync("bash", ["-c", `set -eu\n${fence}\necho "API_KEYS=$API_KEYS"`], { encoding: "utf8" });
    const shown = Object.fromEntries([...printed.matchAll(/^(transfer|read|admin): (\S+)$/gm)].map(([, role, key]) => [role, key]));
    const ring = ApiKeyRing.parse((/^API_KEYS=(.+)$/m.exec(printed) as RegExpExecArray)[1]);
    expect(Object.fromEntries(Object.entries(shown).map(([role, key]) => [role, ring.identify(key)?.role]))).toEqual({ transfer: "transfer", read: "read", admin: "admin" });
  });

  it("is a README under 250 lines and the pages of docs/, each of them read by the example tests", () => {
    expect(readFileSync("README.md", "utf8").split("\n").length).toBeLessThan(250);
    expect(readdirSync("docs").filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`).sort()).toEqual(DOCUMENTS.filter((path) => path !== "README.md").sort());
  });

  it("names, in api.md's roles table, every route each role may call, and every error code in its error table", () => {
    const api = readFileSync("docs/api.md", "utf8");
    const rowOf = (role: string) => api.split("\n").find((line) => line.startsWith(`| \`${role}\``)) ?? "";
    // The admin row says "everything: also" and names the routes only an admin may call.
    const named = (route: string, role: string, roles: readonly string[]) => (role === "admin" && roles.length > 1) || rowOf(role).includes(`\`${route}\``);
    const missing = Object.entries(ROUTE_ROLES).flatMap(([route, roles]) => roles.filter((role) => !named(route, role, roles)).map((role) => `${route} (${role})`));
    expect(missing).toEqual([]);
    const errorRows = api.split("\n").filter((line) => /^\| \d{3} \|/.test(line)).join("\n");
    expect(Object.keys(ERROR_CODES).filter((code) => !errorRows.includes(`\`${code}\``))).toEqual([]);
  });

  it("links only to pages, headings and files that exist", () => {
    const broken: string[] = [];
    for (const path of DOCUMENTS) {
      for (const [, target] of readFileSync(path, "utf8").matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^https?:/.test(target)) continue;
        const [file, anchor] = target.split("#");
        const linked = file === "" ? path : normalize(join(dirname(path), file));
        if (!existsSync(linked)) broken.push(`${path}: ${target}`);
        else if (anchor !== undefined && linked.endsWith(".md") && !anchorsOf(linked).has(anchor)) broken.push(`${path}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("names only npm scripts and source files that exist", () => {
    const missing: string[] = [];
    for (const path of DOCUMENTS) {
      const text = readFileSync(path, "utf8");
      for (const [, script] of text.matchAll(/npm run ([\w:-]+)/g)) if (!SCRIPTS.includes(script)) missing.push(`${path}: npm run ${script}`);
      for (const [, source] of text.matchAll(/`((?:src|test|scripts|deploy)\/[\w./-]+)`/g)) {
        const candidates = [source, `src/${source}`];
        if (!candidates.some((candidate) => existsSync(candidate.replace(/\/$/, "")))) missing.push(`${path}: ${source}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("names, in docs/architecture.md, source files that exist under src/", () => {
    const text = readFileSync("docs/architecture.md", "utf8");
    const named = [...text.matchAll(/`((?:[\w-]+\/)+[\w.-]+\.ts)`/g)].map(([, path]) => path);
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((path) => !existsSync(join("src", path)) && !existsSync(path))).toEqual([]);
  });
});
