/**
 * README examples against the dev service they describe, used as a reader would: the cancel recipe on
 * `DEV_BLOCK_TIME` run as printed (only the port, the banner's, and the block time, 30 s there and 4 s
 * here, put in), and the status document example, whose shape must be the real answer's.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

/** The block after the README comment `<!-- marker ... -->` (the first fenced one of that language). */
function readmeBlock(marker: string, language: "sh" | "json"): string {
  const readme = readFileSync("README.md", "utf8");
  const start = readme.indexOf(`<!-- ${marker}`);
  if (start < 0) throw new Error(`README.md has no block marked ${marker}`);
  const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(readme.slice(start));
  if (!block) throw new Error(`no ${language} block after ${marker}`);
  return block[1];
}

interface DevService {
  child: ChildProcess;
  key: string;
  base: string;
  nodeUrl: string;
  output: () => string;
  stop(): Promise<void>;
}

/** `npm start`'s entry point with no RPC_URL, once its banner is printed. */
async function startDevService(env: Record<string, string> = {}): Promise<DevService> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    env: { ...process.env, RPC_URL: "", DEMO_SETUP: "", API_KEYS: "", AUTH_DISABLED: "", PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  };
  for (const deadline = Date.now() + 30_000; !/API key: \S+/.test(output) || !/curl -s -X POST (http:\/\/127\.0\.0\.1:\d+)/.test(output); ) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`the dev service did not print its banner:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const found = (pattern: RegExp) => (pattern.exec(output) as RegExpExecArray)[1];
  return {
    child,
    key: found(/API key: (\S+)/),
    base: found(/curl -s -X POST (http:\/\/127\.0\.0\.1:\d+)/),
    nodeUrl: found(/"node":"(http:\/\/127\.0\.0\.1:\d+)"/),
    output: () => output,
    stop,
  };
}

async function justAfterABlock(nodeUrl: string): Promise<void> {
  const blockNumber = async () =>
    ((await (await fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }) })).json()) as { result: string }).result;
  const before = await blockNumber();
  while ((await blockNumber()) === before) await new Promise((resolve) => setTimeout(resolve, 50));
}

// The keys and the kinds of values, recursively: what a client parses, without the hashes and numbers.
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value === null) return null;
  if (typeof value === "object") return Object.fromEntries(Object.entries(value as object).map(([key, inner]) => [key, shapeOf(inner)]));
  return typeof value;
}

describe("README examples", () => {
  it("the cancel recipe on DEV_BLOCK_TIME prints 202, then cancelled", async () => {
    const service = await startDevService({ DEV_BLOCK_TIME: "4" });
    try {
      expect(service.output()).toContain("a block every 4 s");
      // A reader may be unlucky and send just before a block, which mines the transfer before its cancel;
      // the test starts right after one, so the recipe meets the case it describes.
      await justAfterABlock(service.nodeUrl);
      const script = readmeBlock("cancel-recipe", "sh").replaceAll("http://127.0.0.1:3000", service.base).replace("sleep 30", "sleep 9");
      const { stdout } = await run("sh", ["-c", script], { env: { ...process.env, KEY: service.key }, timeout: 30_000 });
      expect(stdout.trim().split("\n")).toEqual(["202", "cancelled"]);
    } finally {
      await service.stop();
    }
  }, 60_000);

  it("the status document of the quick start's transfer has the shape and outcome the README shows", async () => {
    const service = await startDevService();
    try {
      const curlLine = service.output().split("\n").find((line) => line.trim().startsWith("curl ")) as string;
      const { stdout } = await run("sh", ["-c", curlLine.trim()]);
      const hash = JSON.parse(stdout).result.hash as string;
      const status = await (await fetch(`${service.base}/transactions/${hash}`, { headers: { authorization: `Bearer ${service.key}` } })).json();
      const documented = JSON.parse(readmeBlock("status-example", "json"));
      expect(shapeOf(status)).toEqual(shapeOf(documented));
      for (const field of ["state", "confirmations", "finalized"] as const) expect(status[field]).toEqual(documented[field]);
      expect(status.transfer).toMatchObject({ to: documented.transfer.to, amount: documented.transfer.amount, amountInTokens: "1.5", requestedAmount: documented.transfer.requestedAmount });
      expect(status.attempts.map((attempt: { fate: string }) => attempt.fate)).toEqual(["mined"]);
    } finally {
      await service.stop();
    }
  }, 60_000);
});
