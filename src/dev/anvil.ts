/** Starts and stops a local anvil node: the dev chain of `npm start` and the chain of the tests. */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** A running anvil process. */
export interface AnvilNode {
  rpcUrl: string;
  /** Stops the process and waits until it has exited. */
  stop(): Promise<void>;
}

/**
 * The anvil binary: from the npm package @foundry-rs/anvil-linux-amd64 where it is installed (linux x64),
 * else $ANVIL_BIN, else `anvil` on PATH.
 */
export function findAnvilBinary(env: NodeJS.ProcessEnv = process.env): string {
  try {
    const packageJson = createRequire(import.meta.url).resolve("@foundry-rs/anvil-linux-amd64/package.json");
    const binary = join(dirname(packageJson), "bin", "anvil");
    if (existsSync(binary)) return binary;
  } catch {
    // not installed on this platform; fall through
  }
  return env.ANVIL_BIN || "anvil";
}

/**
 * Starts anvil on a free 127.0.0.1 port (or the given one) and resolves once it listens.
 * `extraArgs` pass straight through, for example ["--no-mining"] or ["--block-time", "1"].
 */
export async function startAnvil(extraArgs: string[] = [], port = 0): Promise<AnvilNode> {
  const child = spawn(findAnvilBinary(), ["--host", "127.0.0.1", "--port", String(port), ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const rpcUrl = await waitForListeningAddress(child);
  return { rpcUrl, stop: () => stopProcess(child) };
}

function waitForListeningAddress(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => fail(new Error(`anvil did not start within 20 s:\n${output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on ([0-9.]+:[0-9]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        child.stdout?.resume();
        resolve(`http://${match[1]}`);
      }
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", (error) => fail(new Error(`cannot run anvil (${error.message}); install it or set ANVIL_BIN`)));
    child.once("exit", (code) => fail(new Error(`anvil exited with code ${code}:\n${output}`)));
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
