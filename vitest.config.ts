import { defineConfig } from "vitest/config";
import { SlowFilesFirst } from "./test/helpers/slow-files-first.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Installs (as root) or reports the system packages some tests need; compiles the service for the
    // tests that start it as a process. See the files.
    globalSetup: ["test/system-packages.ts", "test/service-build-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file starts its own anvil; two cores run two files at a time comfortably.
    maxWorkers: 2,
    // Concurrent cases and suites run three at a time: the simulation's seeds, as npm run simulate runs them
    // on this machine, and the end-to-end suites side by side (test/helpers/suites-side-by-side.ts); each
    // mostly waits for blocks.
    maxConcurrency: 3,
    sequence: { sequencer: SlowFilesFirst },
  },
});
