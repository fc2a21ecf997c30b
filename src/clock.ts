/**
 * Time for the service. Intervals and deadlines use the monotonic clock, which a step of the system clock
 * (NTP, an operator, a VM resumed) cannot move. Timestamps that are stored use the wall clock as read once
 * at startup plus the monotonic time since, so a clock step while the service runs neither expires keys
 * early nor freezes anything; a restart picks the system clock up again.
 */

const wallClockAtStart = Date.now();
const monotonicAtStart = performance.now();

/** Milliseconds on the monotonic clock: for measuring intervals only, never stored. */
export function monotonicNow(): number {
  return performance.now();
}

/** Milliseconds since the epoch, steady while the process runs: for timestamps that are stored. */
export function steadyWallClockNow(): number {
  return Math.round(wallClockAtStart + (performance.now() - monotonicAtStart));
}
