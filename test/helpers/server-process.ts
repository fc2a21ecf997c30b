/** The real entry point (compiled: dist/src/server.js) as a child process, for tests that kill or signal it. */
import { type ChildProcess, spawn } from "node:child_process";
import { SERVER_ENTRY } from "./service-build.js";
import { TEST_API_KEYS } from "./service.js";

/** The compiled entry point, for a test that starts it its own way; importing it from here makes the run build it. */
export { SERVER_ENTRY };

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the process printed so far. */
  output(): string;
  /** Resolves once the output contains `text`. */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts the compiled entry point as `npm start` does (`node dist/src/server.js`, built by the run's global
 * setup: service-build.ts), with API_KEYS TEST_API_KEYS unless given, and waits until it listens. Source
 * maps on: a stack trace names the TypeScript line.
 */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ["--enable-source-maps", SERVER_ENTRY], {
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", API_KEYS: TEST_API_KEYS, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const waitForOutput = async (text: string, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!output.includes(text)) {
      if (Date.now() > deadline || child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`never printed ${JSON.stringify(text)}; output:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  await waitForOutput("Server listening at ");
  const port = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1];
  return { child, baseUrl: `http://127.0.0.1:${port}`, output: () => output, waitForOutput, exited };
}
