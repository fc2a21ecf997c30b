import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Test files that take 12 s or more, longest first, as a whole run measured them (the table in
 * docs/development.md; measure again and reorder when it changes). Without a results cache (a clean clone,
 * as CI runs) vitest orders files by size, and the simulation's file is small: it started last and ran alone
 * on one of the two workers for its last few minutes. Longest first, the long files overlap each other and
 * the many short ones, and the run ends on files of a second or less, not on one of half a minute.
 */
const SLOW_FILES = [
  "test/simulation/simulation.test.ts",
  "test/e2e/replicas.test.ts",
  "test/e2e/stuck-transfers.test.ts",
  "test/e2e/several-endpoints.test.ts",
  "test/journal/history-reads.test.ts",
  "test/e2e/dev-start.test.ts",
  "test/e2e/two-networks.test.ts",
  "test/e2e/rollup.test.ts",
  "test/e2e/third-node.test.ts",
  "test/http/concurrency.test.ts",
  "test/e2e/readme-recipes.test.ts",
  "test/e2e/dev-replicas.test.ts",
  "test/e2e/crash-recovery.test.ts",
  "test/e2e/wallet-pool.test.ts",
  "test/e2e/unexpected-outflows.test.ts",
  "test/e2e/burst-crash-replay.test.ts",
  "test/http/node-faults.test.ts",
  "test/client/client.test.ts",
  "test/e2e/kms-signer.test.ts",
  "test/e2e/payouts.test.ts",
  "test/e2e/wallet-sequence.test.ts",
  "test/e2e/webhooks.test.ts",
  "test/e2e/wallet-in-flight-limit.test.ts",
  "test/journal/journal-retention.test.ts",
  "test/e2e/dev-networks.test.ts",
  "test/e2e/finality.test.ts",
  "test/signers/pkcs11-signer.test.ts",
  "test/journal/transfer-journal-contract.test.ts",
  "test/e2e/networks-file.test.ts",
  "test/e2e/console.test.ts",
  "test/e2e/facts-over-words.test.ts",
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
