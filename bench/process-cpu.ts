/** What a process has spent of the CPU, for the benchmarks that set it beside their rates. */
import { existsSync, readFileSync } from "node:fs";

/**
 * CPU time (user + system) used so far by process `pid`, in µs; undefined where Linux's /proc does not tell.
 * utime and stime follow the command name (which may hold spaces and parentheses) as its 12th and 13th
 * fields, in clock ticks (USER_HZ, 100 a second on every mainstream Linux).
 */
export function processCpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return undefined;
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}
