/**
 * vitest's global setup: compiles the service (test/helpers/service-build.ts) when a file of this run starts
 * it as a process, and in watch mode again before each rerun that has such a file (whatever the first run
 * selected), so that no test runs a build older than the sources. A run of files that only compose the
 * service in process builds nothing.
 */
import { readFileSync } from "node:fs";
import type { TestProject } from "vitest/node";
import { buildService } from "./helpers/service-build.js";
import { selectedTestFiles } from "./helpers/selected-test-files.js";

// The helpers that start the service's process: the files that import them need the build.
const STARTS_THE_SERVICE = /(helpers\/server-process|simulation\/simulator|\.\/simulator)\.js"/;
const startsTheService = (file: string) => STARTS_THE_SERVICE.test(readFileSync(file, "utf8"));

export default async function setup(project: TestProject): Promise<void> {
  project.onTestsRerun(async (specifications) => {
    if (specifications.some((specification) => startsTheService(specification.moduleId))) await buildService();
  });
  if (selectedTestFiles().some(startsTheService)) await buildService();
}
