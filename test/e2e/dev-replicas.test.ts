/**
 * `npm run dev:replicas`, used as printed: a transfer through a follower, kill -9 of the leader, the other
 * replica leads; and SIGINT or SIGTERM to npm's own process (what Ctrl-C, a terminal closing or a process
 * manager sends) stops every process it started: replicas, anvil, the embedded PostgreSQL.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { freeConsecutivePorts } from "../helpers/free-port.js";
import { commandOf, descendantsOf, isAlive, stopProcessTree } from "../helpers/process-tree.js";

const run = promisify(execFile);

// The temporary folders of each run (its replicas' logs, which the script keeps for the operator), removed after each test.
const scratch: string[] = [];
afterEach(() => {
  for (const folder of scratch.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** `npm run dev:replicas` with two replicas from `port`; `output()` is everything it printed. */
function startDevReplicas(port: number): { npm: ChildProcessWithoutNullStreams; output: () => string; ready: Promise<void> } {
  const folder = mkdtempSync(join(tmpdir(), "dev-replicas-test-"));
  // The embedded PostgreSQL's data goes below it too, and its server runs as another user: it must get through.
  chmodSync(folder, 0o711);
  scratch.push(folder);
  const npm = spawn("npm", ["run", "dev:replicas", "--", "--replicas", "2", "--port", String(port)], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, TMPDIR: folder } });
  let output = "";
  npm.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const ready = (async () => {
    for (const deadline = Date.now() + 90_000; !output.includes("Ctrl-C stops everything"); ) {
      if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`dev:replicas did not get ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  return { npm, output: () => output, ready };
}

/** Sends `signal` to npm's own process and expects every process below it gone within 5 s. */
async function expectAllGoneAfter(npm: ChildProcessWithoutNullStreams, signal: "SIGINT" | "SIGTERM"): Promise<void> {
  const family = [npm.pid as number, ...descendantsOf(npm.pid as number)];
  try {
    // npm, the script's node, two replicas, anvil and PostgreSQL at least.
    expect(family.length).toBeGreaterThanOrEqual(6);
    process.kill(npm.pid as number, signal);
    for (const deadline = Date.now() + 5_000; family.some(isAlive) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(family.filter(isAlive).map((pid) => `${pid} ${commandOf(pid)}`)).toEqual([]);
  } finally {
    // The family as it was: once npm is gone, what it left is no longer found below it.
    for (const pid of family) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  }
}

describe("npm run dev:replicas", () => {
  it("works as printed: transfer via a follower, kill -9 the leader, the other leads; Ctrl-C leaves nothing behind", async () => {
    const { npm, output, ready } = startDevReplicas(await freeConsecutivePorts());
    const lines = () => output().split("\n").map((line) => line.trim());
    let anvilUrl: string | undefined;
    try {
      await ready;
      anvilUrl = (/anvil (http:\/\/127\.0\.0\.1:\d+)/.exec(output()) as RegExpExecArray)[1];
      expect([...output().matchAll(/ pid (\d+)/g)]).toHaveLength(2);
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
    } catch (error) {
      await stopProcessTree(npm.pid as number, 0);
      throw error;
    }
    await expectAllGoneAfter(npm, "SIGINT");
    // The dev chain went with them.
    await expect(fetch(anvilUrl as string, { method: "POST", body: "{}" })).rejects.toThrow();
  }, 150_000);

  it("a replica's port in use: says which replica could not start and why, and stops everything it started", async () => {
    const port = await freeConsecutivePorts();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port + 1, "127.0.0.1", resolve));
    try {
      const { npm, output, ready } = startDevReplicas(port);
      const family = new Set<number>([npm.pid as number]);
      // Everything it ever started, seen while it runs: once npm is gone, its orphans are no longer below it.
      const watch = setInterval(() => descendantsOf(npm.pid as number).forEach((pid) => family.add(pid)), 100);
      await expect(ready).rejects.toThrow(/did not get ready/);
      clearInterval(watch);
      expect(output()).toContain(`replica-2 did not start (exited with code 1;`);
      expect(output()).toContain(`cannot start: listen EADDRINUSE: address already in use 127.0.0.1:${port + 1}`);
      for (const deadline = Date.now() + 5_000; [...family].some(isAlive) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
      expect([...family].filter(isAlive).map((pid) => `${pid} ${commandOf(pid)}`)).toEqual([]);
    } finally {
      holder.close();
    }
  }, 150_000);

  it("SIGTERM to npm's own process leaves nothing behind", async () => {
    const { npm, ready } = startDevReplicas(await freeConsecutivePorts());
    await ready.catch(async (error: unknown) => {
      await stopProcessTree(npm.pid as number, 0);
      throw error;
    });
    await expectAllGoneAfter(npm, "SIGTERM");
  }, 150_000);
});
