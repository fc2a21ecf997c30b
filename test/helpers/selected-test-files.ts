/**
 * The test files a vitest command runs, as its global setup can tell them: those the command line names
 * (vitest's filters: parts of a path), or every test file when it names none (or only words that are in no
 * test file's path, such as an option's value).
 */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

const TEST_ROOT = join(import.meta.dirname, "..");

// Options whose value is the next argument: `--exclude test/x.test.ts` names a file it leaves out, not one it runs.
const OPTIONS_WITH_VALUES = new Set(["--exclude", "-t", "--testNamePattern", "--reporter", "--project", "-c", "--config", "--shard", "--maxWorkers", "--outputFile", "-r", "--root", "--dir"]);

/** The run's test files, relative to the working folder. */
export function selectedTestFiles(): string[] {
  const all = testFiles(TEST_ROOT).map((path) => relative(process.cwd(), path));
  const filters = commandLineFilters().filter((arg) => all.some((file) => file.includes(arg)));
  return filters.length === 0 ? all : all.filter((file) => filters.some((filter) => file.includes(filter)));
}

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
