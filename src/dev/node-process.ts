/** A development node (anvil, Hardhat Network) run as a child process: wait for it to listen, stop it. */
import type { ChildProcess } from "node:child_process";

/**
 * Resolves with the first match of `pattern` in what the process prints (stdout and stderr), or rejects
 * when it exits, cannot run, or prints no match within `timeoutMs`; the process is killed then.
 */
export function waitForPrinted(child: ChildProcess, pattern: RegExp, name: string, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${timeoutMs / 1000} s:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        // Keep draining: a full pipe would block the node's own logging.
        child.stdout?.resume();
        resolve(match);
      }
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", (error) => fail(new Error(`cannot run ${name} (${error.message})`)));
    child.once("exit", (code) => fail(new Error(`${name} exited with code ${code}:\n${output}`)));
  });
}

/** Stops the process (SIGTERM) and resolves once it has exited. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
