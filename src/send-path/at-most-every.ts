/** Rate-limits something told again and again (a log line of a fault that may last): at most once an interval. */
import { monotonicNow } from "../clock.js";

/**
 * A function that runs what it is given the first time, then again only once `intervalMs` has passed since
 * the last time it ran; in between it drops it.
 */
export function atMostEvery(intervalMs: number, now: () => number = monotonicNow): (tell: () => void) => void {
  let toldAt: number | undefined;
  return (tell) => {
    const time = now();
    if (toldAt !== undefined && time - toldAt < intervalMs) return;
    toldAt = time;
    tell();
  };
}
