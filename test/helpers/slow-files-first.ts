import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Test files that take minutes, longest first. Without a results cache (a clean clone, as CI runs) vitest
 * orders files by size, and the simulation's file is small: it started last and ran alone on one of the two
 * workers for its last few minutes. Started first, the long files overlap the many short ones.
 */
const SLOW_FILES = [
  "test/simulation/simulation.test.ts",
  "test/e2e/replicas.test.ts",
  "test/e2e/two-networks.test.ts",
  "test/e2e/stuck-transfers.test.ts",
  "test/journal/history-reads.test.ts",
];

/** Vitest's order, with the known slow files moved to the front. */
export class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = SLOW_FILES.findIndex((slow) => file.moduleId.endsWith(slow));
      return index === -1 ? SLOW_FILES.length : index;
    };
    return sorted
      .map((file, position) => ({ file, position }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.position - b.position)
      .map(({ file }) => file);
  }
}
