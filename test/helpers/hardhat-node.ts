/** Starts and stops a Hardhat Network node (`hardhat node`), the second node implementation of the tests. */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AnvilNode } from "../../src/dev/anvil.js";

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
  await waitUntilListening(child);
  return { rpcUrl: `http://127.0.0.1:${port}`, stop: () => stopProcess(child) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function waitUntilListening(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => fail(new Error(`hardhat node did not start within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Started HTTP and WebSocket JSON-RPC server at")) {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        // Keep draining: a full pipe would block the node's logging of every request.
        child.stdout?.resume();
        resolve();
      }
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", (error) => fail(new Error(`cannot run hardhat (${error.message})`)));
    child.once("exit", (code) => fail(new Error(`hardhat node exited with code ${code}:\n${output}`)));
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
