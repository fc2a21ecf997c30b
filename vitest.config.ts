import { defineConfig } from "vitest/config";
import { SlowFilesFirst } from "./test/helpers/slow-files-first.js";

// Both projects' case options: a project does not take them from the root.
const CASES = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // Concurrent cases and suites run three at a time: the simulation's seeds, as npm run simulate runs them
  // on this machine, and the end-to-end suites side by side (test/helpers/suites-side-by-side.ts); each
  // mostly waits for blocks.
  maxConcurrency: 3,
};

// Each in a process of its own: the end-to-end files and the simulation, which would gain little from a
// shared one (their imports take a second, their cases tens) and leave the most in it (child processes,
// listeners), and a file that mocks a module (vi.mock holds only for a file that loads the module afresh).
const ISOLATED = ["test/e2e/**/*.test.ts", "test/simulation/**/*.test.ts", "test/journal/journal-commit-failure.test.ts"];

export default defineConfig({
  test: {
    // Installs (as root) or reports the system packages some tests need; compiles the service for the
    // tests that start it as a process. See the files. Here, at the root, they run once for both projects.
    globalSetup: ["test/system-packages.ts", "test/service-build-setup.ts"],
    // Three files at a time on two cores: most end-to-end files wait for blocks and timers more than they
    // compute, and with two at a time the machine was a third idle (907 s of CPU in a 627 s run).
    maxWorkers: 3,
    sequence: { sequencer: SlowFilesFirst },
    projects: [
      {
        // The other files share a worker's process and its loaded modules, file after file: a fresh process
        // and its imports cost more than most of these files' cases (113 files: 146 s instead of 196). The
        // setup file fails a file that leaves fake timers on for the next.
        test: { ...CASES, name: "shared", include: ["test/**/*.test.ts"], exclude: ISOLATED, isolate: false, setupFiles: ["test/helpers/shared-process-hygiene.ts"] },
      },
      { test: { ...CASES, name: "isolated", include: ISOLATED } },
    ],
  },
});
