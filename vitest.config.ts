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
    // Only the seeded fault simulation has concurrent cases: three seeds at a time, as npm run simulate runs
    // them on this machine (each mostly waits for blocks).
    maxConcurrency: 3,
    sequence: { sequencer: SlowFilesFirst },
  },
});
