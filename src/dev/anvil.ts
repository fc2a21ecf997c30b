/** Starts and stops a local anvil node: the dev chain of `npm start` and the chain of the tests. */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { stopProcess, waitForPrinted } from "./node-process.js";

/** A running anvil process. */
export interface AnvilNode {
  rpcUrl: string;
  /** The process's id: the benchmarks read the CPU time it spent. */
  pid: number | undefined;
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
  const [, address] = await waitForPrinted(child, /Listening on ([0-9.]+:[0-9]+)/, "anvil", 20_000).catch((error: Error) => {
    throw /cannot run/.test(error.message) ? new Error(`${error.message}; install it or set ANVIL_BIN`) : error;
  });
  return { rpcUrl: `http://${address}`, pid: child.pid, stop: () => stopProcess(child) };
}

/**
 * From now on, one block every `seconds` instead of one per transaction, as on a network: transfers wait in
 * the pool, so stuck transfers, cancels and confirmations can be tried. Set after the demo setup, which
 * then needs no waiting.
 */
export async function mineEvery(rpcUrl: string, seconds: number): Promise<void> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "evm_setIntervalMining", params: [seconds] }),
  });
  const reply = (await response.json()) as { error?: { message: string } };
  if (reply.error) throw new Error(`anvil refused evm_setIntervalMining: ${reply.error.message}`);
}
