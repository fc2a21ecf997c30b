/**
 * `describe` and `it` for a file whose suites are independent of each other (each starts its own chain and
 * service) and spend most of their time waiting for blocks and for the service's timers: the suites run
 * side by side, up to vitest's maxConcurrency at a time, while each suite's cases run in order, one at a
 * time, as they are written (a case may build on the one before it, and the hooks still run per suite).
 * Only for such files: a file whose suites share a chain, a service or module state keeps vitest's own.
 * As in any concurrent case, `expect.poll`, `.rejects`/`.resolves`, snapshots and counted assertions must
 * use the case's own `expect` (from its context); plain `expect(...)` assertions fail their own case.
 */
import { describe as vitestDescribe, it as vitestIt } from "vitest";

const sideBySide = vitestDescribe.concurrent;
const inOrder = vitestIt.sequential;

// skipIf and runIf as vitest's own: a suite or case left out is left out the same way. `alone`: a suite
// that counts the node calls of a round of blocks runs by itself (vitest runs it before or after the
// suites side by side): beside them, its service may read two blocks at once and make one round of them.
export const describe = Object.assign(sideBySide, {
  skipIf: (condition: unknown) => (condition ? vitestDescribe.skip : sideBySide),
  alone: vitestDescribe,
});
export const it = Object.assign(inOrder, {
  skipIf: (condition: unknown) => (condition ? vitestIt.skip : inOrder),
  runIf: (condition: unknown) => (condition ? inOrder : vitestIt.skip),
});
