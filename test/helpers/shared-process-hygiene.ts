/**
 * The setup file of the test files that share a process (vitest.config.ts, project "shared"): a file that
 * leaves fake timers on would hand them to the next file in the same process, whose waits would then never
 * end or end at once. It fails the file that left them, not the one that meets them.
 */
import { afterAll, vi } from "vitest";

afterAll(() => {
  if (vi.isFakeTimers()) {
    vi.useRealTimers();
    throw new Error("this file left fake timers on: restore them (vi.useRealTimers) in an afterEach");
  }
});
