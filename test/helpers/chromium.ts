/** Where the console's browser test finds Chromium (Debian's, driven headless by playwright-core). */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

let verdict: { why: string | undefined } | undefined;

/**
 * Why Chromium cannot run here, or undefined. One that exists but does not start (not executable, a
 * library missing) is said with the error and the fix, once per process: the tests say NOT RUN, not a raw
 * spawn error.
 */
export function chromiumMissing(): string | undefined {
  verdict ??= { why: whyChromiumCannotRun() };
  return verdict.why;
}

function whyChromiumCannotRun(): string | undefined {
  if (!existsSync(CHROMIUM_PATH)) return `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
  try {
    execFileSync(CHROMIUM_PATH, ["--version"], { stdio: ["ignore", "ignore", "pipe"], timeout: 20_000 });
    return undefined;
  } catch (error) {
    const { code, stderr } = error as { code?: string; stderr?: Buffer };
    const said = code ?? stderr?.toString().trim().split("\n")[0] ?? (error as Error).message;
    return `Chromium at ${CHROMIUM_PATH} cannot run (${said}): apt-get install --reinstall chromium, make it executable for this user, or set CHROMIUM_PATH to one that runs`;
  }
}
