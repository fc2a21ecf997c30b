/** Runs a network's outflow watch every interval until stopped; a failed check is logged and the next one covers its blocks. */
import type { OutflowWatch } from "./outflow-watch.js";

export function runOutflowChecks(watch: Pick<OutflowWatch, "check">, intervalMs: number, onError: (error: unknown) => void): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: () => void = () => undefined;
  const loop = (async () => {
    while (!stopped) {
      await watch.check().catch(onError);
      if (stopped) return;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, intervalMs);
      });
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
