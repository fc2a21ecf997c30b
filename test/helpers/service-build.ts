/**
 * The service compiled as `npm run build` compiles it (tsc: dist/src, and the console's modules in
 * dist/console; only what changed since the last build): what startServerProcess runs, as `npm start` and
 * the Docker image do. Built once before the tests that start the service as a process (test/service-build-
 * setup.ts) and before `npm run simulate`: a process started from the TypeScript sources through tsx took
 * 1.4 s to load the service on this machine, the compiled one 0.7 s, and a whole run starts well over a
 * hundred.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const REPOSITORY = join(import.meta.dirname, "..", "..");
const TSC = join(REPOSITORY, "node_modules", "typescript", "bin", "tsc");

/** The tsc projects `npm run build` compiles, read from package.json's script: one list, not a copy of it. */
function buildProjects(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(REPOSITORY, "package.json"), "utf8")) as { scripts: { build: string } };
  const projects = [...scripts.build.matchAll(/tsc -p (\S+)/g)].map((match) => match[1]);
  if (projects.length === 0) throw new Error(`package.json's build script names no tsc project: ${scripts.build}`);
  return projects;
}

/** The compiled entry point, relative to the repository (startServerProcess's working folder). */
export const SERVER_ENTRY = "dist/src/server.js";

// tsc's exit status when it found type errors and still wrote every output (noEmitOnError is off).
const WROTE_DESPITE_TYPE_ERRORS = 2;

/**
 * Compiles npm run build's projects (side by side: their outputs do not overlap). Type errors are reported and the
 * tests run on what tsc wrote, as they ran through tsx before (npm run typecheck is what fails on them);
 * any other failure stops the run with tsc's own report.
 */
export async function buildService(): Promise<void> {
  await Promise.all(
    buildProjects().map((project) =>
      promisify(execFile)(process.execPath, [TSC, "-p", project], { cwd: REPOSITORY }).catch((error: { code?: number; stdout?: string; stderr?: string }) => {
        const report = `${error.stdout ?? ""}${error.stderr ?? ""}`;
        if (error.code !== WROTE_DESPITE_TYPE_ERRORS) throw new Error(`the build the tests run (tsc -p ${project}) failed:\n${report}`);
        console.warn(`tsc -p ${project} found type errors (the tests run on its output):\n${report}`);
      }),
    ),
  );
}
