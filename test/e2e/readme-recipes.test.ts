/**
 * The README's cancel recipe, run as printed against the dev chain it describes (`DEV_BLOCK_TIME`): only
 * the port (the banner's) and the block time (30 s there, 4 s here) are put in, as a reader would.
 */
import { execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

function recipe(marker: string): string {
  const readme = readFileSync("README.md", "utf8");
  const start = readme.indexOf(`<!-- ${marker}`);
  if (start < 0) throw new Error(`README.md has no block marked ${marker}`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start));
  if (!block) throw new Error(`no sh block after ${marker}`);
  return block[1];
}

async function justAfterABlock(nodeUrl: string): Promise<void> {
  const blockNumber = async () =>
    ((await (await fetch(nodeUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }) })).json()) as { result: string }).result;
  const before = await blockNumber();
  while ((await blockNumber()) === before) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe("README recipes", () => {
  it("the cancel recipe on DEV_BLOCK_TIME prints 202, then cancelled", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
      env: { ...process.env, RPC_URL: "", DEMO_SETUP: "", API_KEYS: "", AUTH_DISABLED: "", PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", DEV_BLOCK_TIME: "4" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      for (const deadline = Date.now() + 30_000; !/API key: \S+/.test(output) || !/curl -s -X POST (http:\/\/127\.0\.0\.1:\d+)/.test(output); ) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the dev service did not print its banner:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(output).toContain("a block every 4 s");
      const key = (/API key: (\S+)/.exec(output) as RegExpExecArray)[1];
      const base = (/curl -s -X POST (http:\/\/127\.0\.0\.1:\d+)/.exec(output) as RegExpExecArray)[1];
      // A reader may be unlucky and send just before a block, which mines the transfer before its cancel;
      // the test starts right after one, so the recipe meets the case it describes.
      await justAfterABlock((/"node":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output) as RegExpExecArray)[1]);
      const script = recipe("cancel-recipe").replaceAll("http://127.0.0.1:3000", base).replace("sleep 30", "sleep 9");
      const { stdout } = await run("sh", ["-c", script], { env: { ...process.env, KEY: key }, timeout: 30_000 });
      expect(stdout.trim().split("\n")).toEqual(["202", "cancelled"]);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  }, 60_000);
});
