/**
 * `npm run dev:replicas`, used as printed: a transfer through a follower, kill -9 of the leader, the other
 * replica leads, and SIGINT stops every process it started.
 */
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { freePort } from "../helpers/free-port.js";

const run = promisify(execFile);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("npm run dev:replicas", () => {
  it("works as printed: transfer via a follower, kill -9 the leader, the other leads; Ctrl-C leaves nothing behind", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/dev-replicas.ts", "--replicas", "2", "--port", String(port)], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const lines = () => output.split("\n").map((line) => line.trim());
    const pids: number[] = [];
    try {
      for (const deadline = Date.now() + 90_000; !output.includes("Ctrl-C stops everything"); ) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`dev:replicas did not get ready:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      pids.push(...[...output.matchAll(/ pid (\d+)/g)].map((match) => Number(match[1])));
      expect(pids).toHaveLength(2);
      const [transferLine, walletLine] = lines().filter((line) => line.startsWith("curl "));
      const killLine = lines().find((line) => line.startsWith("kill -9 ")) as string;

      const sent = JSON.parse((await run("sh", ["-c", transferLine])).stdout);
      expect(sent.result.hash).toMatch(/^0x[0-9a-f]{64}$/);
      const before = JSON.parse((await run("sh", ["-c", walletLine])).stdout);
      expect(before.replica).toEqual({ id: "replica-2", leads: false });

      await run("sh", ["-c", killLine.split("(")[0]]);
      let after: { replica?: { id: string; leads: boolean } } | undefined;
      for (const deadline = Date.now() + 20_000; after?.replica?.leads !== true && Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 250))) {
        after = JSON.parse((await run("sh", ["-c", walletLine]).catch(() => ({ stdout: "{}" }))).stdout || "{}");
      }
      expect(after?.replica).toEqual({ id: "replica-2", leads: true });
    } finally {
      child.kill("SIGINT");
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)));
    }
    for (const deadline = Date.now() + 5_000; pids.some(alive) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pids.filter(alive)).toEqual([]);
    // The dev chain went with them.
    const anvilUrl = (/anvil (http:\/\/127\.0\.0\.1:\d+)/.exec(output) as RegExpExecArray)[1];
    await expect(fetch(anvilUrl, { method: "POST", body: "{}" })).rejects.toThrow();
  }, 150_000);
});
