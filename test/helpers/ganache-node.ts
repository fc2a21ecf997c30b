/**
 * Starts and stops a ganache node, the third node implementation of the tests: another transaction pool
 * (JavaScript, one request at a time, a future nonce kept in a queue) and other error wordings than anvil's
 * and Hardhat Network's.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import type { AnvilNode } from "../../src/dev/anvil.js";
import { stopProcess, waitForPrinted } from "../../src/dev/node-process.js";
import { freePort } from "./free-port.js";

/**
 * Starts ganache on a free 127.0.0.1 port, mining a block every `blockSeconds` (0: each transaction at once):
 * by default every second, so that its pool holds the wallet's transactions as a network's nodes do.
 */
export async function startGanacheNode(blockSeconds = 1): Promise<AnvilNode> {
  const port = await freePort();
  const cli = createRequire(import.meta.url).resolve("ganache/dist/node/cli.js");
  const args = ["--server.host", "127.0.0.1", "--server.port", String(port), "--wallet.totalAccounts", "1", "--miner.blockTime", String(blockSeconds)];
  // Its log of every call would cost the tests' time: only its start is read.
  const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  await waitForPrinted(child, /RPC Listening on/, "ganache", 60_000);
  return { rpcUrl: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => stopProcess(child) };
}
