/** Starts and stops a Hardhat Network node (`hardhat node`), the second node implementation of the tests. */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { freePort } from "./free-port.js";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AnvilNode } from "../../src/dev/anvil.js";
import { stopProcess, waitForPrinted } from "../../src/dev/node-process.js";

const CONFIG_FOLDER = join(dirname(fileURLToPath(import.meta.url)), "..", "hardhat-network");

/** Starts `hardhat node` on a free 127.0.0.1 port from the folder that holds its config; resolves once it listens. */
export async function startHardhatNode(): Promise<AnvilNode> {
  const port = await freePort();
  const cli = createRequire(import.meta.url).resolve("hardhat/internal/cli/cli.js");
  const child = spawn(process.execPath, [cli, "node", "--hostname", "127.0.0.1", "--port", String(port)], {
    cwd: CONFIG_FOLDER,
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true", HARDHAT_TELEMETRY_DISABLED: "true" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await waitForPrinted(child, /Started HTTP and WebSocket JSON-RPC server at/, "hardhat node", 60_000);
  return { rpcUrl: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => stopProcess(child) };
}
