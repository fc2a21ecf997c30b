/**
 * Keeps a leader's working copy of a PostgreSQL journal to about what a new leader would hold (see
 * HOT_TRANSFERS): every minute it walks, a slice at a time, the transfers made before the window the rules
 * need and forgets those settled for good, which stay in PostgreSQL and are read there on demand. Without it
 * the copy, in memory, grows with everything made during a leadership, however long it lasts. A journal of
 * its own forgets nothing.
 */
import { steadyWallClockNow } from "../clock.js";
import { HELD_WINDOW_MS } from "./postgres-journal-store.js";
import type { TransferJournal } from "./transfer-journal.js";

export interface EvictionSettings {
  intervalMs: number;
  /** Transfers looked at per slice (one commit): the work one turn of the event loop does. */
  sliceSize: number;
  /** Slices per pass at most: a pass behind a long leadership catches up over several minutes. */
  maxSlices: number;
}

const DEFAULTS: EvictionSettings = { intervalMs: 60_000, sliceSize: 500, maxSlices: 20 };

/** Starts the passes; `forgotten` is told each pass that forgot something, `failed` each that failed. */
export function startWorkingCopyEviction(
  journal: Pick<TransferJournal, "forgetSettledForGood" | "flushed">,
  report: { forgotten: (count: number) => void; failed: (error: unknown) => void },
  settings: EvictionSettings = DEFAULTS,
): { stop(): Promise<void> } {
  let passing: Promise<void> | undefined;
  let stopped = false;
  const pass = async () => {
    let forgotten = 0;
    for (let slice = 0; slice < settings.maxSlices && !stopped; slice++) {
      // Each slice in a turn of its own, from a timer (timers run before the turn's I/O): then no write of the
      // turn waits to be shipped, which would hold the slice back.
      await new Promise((resolve) => setTimeout(resolve, 0));
      const done = journal.forgetSettledForGood(steadyWallClockNow() - HELD_WINDOW_MS, settings.sliceSize);
      if (done === undefined) continue;
      forgotten += done.forgotten;
      await journal.flushed();
      if (done.examined < settings.sliceSize) break;
    }
    if (forgotten > 0) report.forgotten(forgotten);
  };
  const timer = setInterval(() => {
    passing ??= pass()
      .catch(report.failed)
      .finally(() => (passing = undefined));
  }, settings.intervalMs).unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await passing;
    },
  };
}
