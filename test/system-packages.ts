/**
 * vitest's global setup: the system packages some tests need (Chromium for the console, SoftHSM2 for the
 * PKCS#11 signer, moto_server for AWS KMS), each for the test files of this run that need it: a run of one
 * file that needs none installs and reports nothing. A missing Debian package is installed where this
 * process can (as root, with apt-get), said first; one still missing is reported here, with the command
 * that installs it, and its tests say NOT RUN. With CI=true a missing package fails the run: CI must run
 * everything.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { chromiumMissing } from "./helpers/chromium.js";
import { motoMissing } from "./helpers/moto-kms.js";
import { softHsmMissing } from "./helpers/softhsm.js";

interface SystemPackage {
  /** Why it cannot be used here, or undefined. */
  missing: () => string | undefined;
  /** The Debian package that provides it; undefined when it is not one. */
  debian?: string;
  install: string;
  /** The helper its tests import (test/helpers/<name>.ts): the test files that need it are those that do. */
  helper: string;
}

const PACKAGES: SystemPackage[] = [
  { missing: chromiumMissing, debian: "chromium", install: "apt-get install chromium", helper: "chromium" },
  { missing: softHsmMissing, debian: "softhsm2", install: "apt-get install softhsm2", helper: "softhsm" },
  { missing: motoMissing, install: "pip install 'moto[server]'", helper: "moto-kms" },
];

const TEST_ROOT = import.meta.dirname;

export default function setup(): void {
  const needed = neededBySelectedTests();
  if (needed.length === 0) return;
  const installable = needed.filter(({ wanted }) => wanted.debian && wanted.missing()).map(({ wanted }) => wanted.debian as string);
  if (installable.length > 0 && process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    console.log(`the selected tests need system packages that are missing; installing ${installable.join(", ")} first (apt-get, as root)`);
    try {
      execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
      execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...installable], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    } catch (error) {
      console.log(`could not install them: ${(error as Error).message}`);
    }
  }
  const stillMissing = needed.flatMap(({ wanted, files }) => {
    const why = wanted.missing();
    return why ? [`${why}; ${files.join(", ")} NOT RUN. Install: ${wanted.install}`] : [];
  });
  if (stillMissing.length === 0) return;
  const report = `tests that need a system package will not run:\n  ${stillMissing.join("\n  ")}`;
  if (process.env.CI === "true") throw new Error(`CI=true and ${report}`);
  console.log(report);
}

/**
 * The packages the files of this run need, with those files. The run's files are those the command line
 * names (vitest's filters: parts of a path), or every test file when it names none (or only words that are
 * in no test file's path, such as an option's value).
 */
function neededBySelectedTests(): { wanted: SystemPackage; files: string[] }[] {
  const all = testFiles(TEST_ROOT).map((path) => relative(process.cwd(), path));
  const filters = commandLineFilters().filter((arg) => all.some((file) => file.includes(arg)));
  const selected = filters.length === 0 ? all : all.filter((file) => filters.some((filter) => file.includes(filter)));
  return PACKAGES.flatMap((wanted) => {
    const imports = new RegExp(`helpers/${wanted.helper}\\.js"`);
    const files = selected.filter((file) => imports.test(readFileSync(file, "utf8")));
    return files.length > 0 ? [{ wanted, files }] : [];
  });
}

// Options whose value is the next argument: `--exclude test/x.test.ts` names a file it leaves out, not one it runs.
const OPTIONS_WITH_VALUES = new Set(["--exclude", "-t", "--testNamePattern", "--reporter", "--project", "-c", "--config", "--shard", "--maxWorkers", "--outputFile", "-r", "--root", "--dir"]);

// The command line's file filters: its words that are neither options nor their values.
function commandLineFilters(): string[] {
  const args = process.argv.slice(2);
  return args.filter((arg, index) => !arg.startsWith("-") && arg !== "run" && !OPTIONS_WITH_VALUES.has(args[index - 1] ?? ""));
}

function testFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : testFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}
