/**
 * Runs a network's outflow watch until stopped: every interval while the service sends, every
 * IDLE_CHECKS_SLOWER_BY intervals while it sends nothing, so that an idle service's reads are paced by time,
 * not by the chain's blocks (on a chain making four blocks a second, every check finds the head moved and
 * reads the counts and the logs). A failed check is logged and the next one covers its blocks; a long gap is
 * caught up (the watch reads from the last block it checked).
 */
import type { OutflowWatch } from "./outflow-watch.js";

/** How many intervals an idle service waits between checks. */
export const IDLE_CHECKS_SLOWER_BY = 4;

export function runOutflowChecks(watch: Pick<OutflowWatch, "check">, intervalMs: number, isIdle: () => boolean, onError: (error: unknown) => void): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: () => void = () => undefined;
  const loop = (async () => {
    while (!stopped) {
      await watch.check().catch(onError);
      if (stopped) return;
      // Idle, one interval at a time: back to the busy pace after the interval in which the service sent.
      for (let waited = 0; waited < (isIdle() ? IDLE_CHECKS_SLOWER_BY : 1) && !stopped; waited++) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, intervalMs);
        });
        if (!isIdle()) break;
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake();
      await loop;
    },
  };
}
