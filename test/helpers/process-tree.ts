/** The processes a test started, read from /proc: what is below a process, and whether one still runs. */
import { readFileSync, readdirSync } from "node:fs";

/** Every process below `pid`, from /proc. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The parent's id is the fourth field, after the command in parentheses.
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const next = queue.shift() as number;
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Whether `pid` still runs (a zombie does not). */
export function isAlive(pid: number): boolean {
  try {
    // A zombie has exited; only its parent has not read its status yet.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

/** The command line of `pid`, for a message. */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "?";
  }
}

/**
 * Stops a process a test started, and everything below it: SIGTERM (a service then stops the dev chain it
 * started), and SIGKILL for whatever of the family still runs after `graceMs`. Returns those (pid and
 * command): a test of a clean stop expects none.
 */
export async function stopProcessTree(pid: number, graceMs = 10_000): Promise<string[]> {
  const family = [pid, ...descendantsOf(pid)];
  if (isAlive(pid)) process.kill(pid, "SIGTERM");
  for (const deadline = Date.now() + graceMs; family.some(isAlive) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
  const left = family.filter(isAlive).map((each) => ({ pid: each, command: `${each} ${commandOf(each)}` }));
  for (const { pid: each } of left) process.kill(each, "SIGKILL");
  return left.map(({ command }) => command);
}
