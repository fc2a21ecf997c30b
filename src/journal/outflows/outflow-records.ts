/** The journal's records: spends out of the wallets the service did not make, how far the watch has read each chain, and the signing pause they start. */
import type { OutflowWatchProgress, StoredOutflow, StoredSigningPause } from "../journal-records.js";

export interface OutflowRecords {
  /**
   * Journals an unexpected outflow; false when it was journaled before (a restart, or a new leader, found it
   * again): it is reported once. A working copy holds every one (see readHot).
   */
  recordOutflow(outflow: StoredOutflow): boolean;
  /** The head of this view's network when the outflow watch first checked it (what came before is not judged); undefined before. */
  outflowWatchStart(): number | undefined;
  /** Journals that head, once per network (a second call keeps the first). */
  recordOutflowWatchStart(block: number): void;
  /** Where this network's outflow watch got to (see OutflowWatchProgress); undefined before its first check. */
  outflowWatchProgress(): OutflowWatchProgress | undefined;
  recordOutflowWatchProgress(progress: OutflowWatchProgress): void;
  /** The pause of signing no admin has ended (a new leader's working copy holds it too); undefined while the service signs. */
  signingPause(): StoredSigningPause | undefined;
  /** Journals a pause of signing (PAUSE_ON_UNEXPECTED_OUTFLOW), or another outflow during the current one, committed with this turn's writes. */
  recordSigningPaused(pause: StoredSigningPause): void;
  /** Journals that the admin key `by` ended the pause at `at` (ms, wall clock). */
  recordSigningResumed(by: string, at: number): void;
}
