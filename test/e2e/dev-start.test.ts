/**
 * `npm start` with no RPC_URL: the real entry point starts anvil, deploys a demo token, prints a curl
 * command that works as printed, and shuts everything down on SIGTERM.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Wallet, encryptKeystoreJsonSync } from "ethers";
import { type TestContext, describe, expect, it } from "vitest";
import { SERVER_ENTRY, startServerProcess } from "../helpers/server-process.js";
import { commandOf, descendantsOf, isAlive, stopProcessTree } from "../helpers/process-tree.js";

const run = promisify(execFile);
/** JOURNAL_PATH in a folder of the case's own, removed when it ends: dev runs keep their journals beside it, not in the checkout's data/. */
function devJournal(onTestFinished: TestContext["onTestFinished"]): { JOURNAL_PATH: string } {
  const folder = mkdtempSync(join(tmpdir(), "dev-start-"));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  return { JOURNAL_PATH: join(folder, "transfers.sqlite") };
}

// Every case starts processes of its own (ports chosen by the system, journals in folders of their own): the
// cases run side by side. The two npm start cases build first; the run's global setup built already, so
// their builds change nothing.

describe.concurrent("the server entry point without RPC_URL", () => {
  it("starts a dev chain, prints a working curl command, and exits cleanly on SIGTERM", async ({ expect, onTestFinished }) => {
    const child = spawn(process.execPath, [SERVER_ENTRY], {
      env: { ...process.env, RPC_URL: "", DEMO_SETUP: "", API_KEYS: "", AUTH_DISABLED: "", ...devJournal(onTestFinished), PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      const curlLine = await waitFor(() => output.split("\n").find((line) => line.trim().startsWith("curl ")), 30_000, () => output);
      const anvilUrl = /"node":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output)?.[1];
      expect(anvilUrl).toBeDefined();

      const { stdout } = await run("sh", ["-c", curlLine.trim()]);
      const reply = JSON.parse(stdout);
      expect(reply.result.hash).toMatch(/^0x[0-9a-f]{64}$/);
      expect(reply.result.confirmations).toBe(0);
      expect(output).toMatch(/token: +0x[0-9a-fA-F]{40}/);
      expect(output).toMatch(/wallet: +0x[0-9a-fA-F]{40}/);
      // The printed command carries the key generated for this run; without it the service says 401.
      const generatedKey = /API key: (dev_\S+)/.exec(output)?.[1];
      expect(curlLine).toContain(`authorization: Bearer ${generatedKey}`);
      const withoutKey = await run("sh", ["-c", curlLine.trim().replace(/ -H 'authorization: [^']*'/, "")]);
      expect(JSON.parse(withoutKey.stdout).code).toBe("AUTH_REQUIRED");

      child.kill("SIGTERM");
      const [exitCode] = await once(child, "exit");
      expect(exitCode).toBe(0);
      // The dev chain went down with the service.
      await expect(fetch(anvilUrl as string, { method: "POST" })).rejects.toThrow();
    } finally {
      child.kill("SIGKILL");
    }
  });

  it.for([
    ["a keystore (KEYSTORE_PATH)", "KEYSTORE_PATH", 1],
    ["a pool of two keys (PRIVATE_KEY=a,b)", "PRIVATE_KEY", 2],
  ] as const)("signs with %s when one is configured, funded on the dev chain, and says so", { timeout: 90_000 }, async ([, variable, lanes], { onTestFinished }) => {
    const directory = mkdtempSync(join(tmpdir(), "dev-signer-"));
    const wallets = Array.from({ length: lanes }, () => new Wallet(Wallet.createRandom().privateKey));
    const env: Record<string, string> =
      variable === "KEYSTORE_PATH"
        ? { KEYSTORE_PATH: join(directory, "wallet.json"), KEYSTORE_PASSWORD_FILE: join(directory, "wallet_password") }
        : { PRIVATE_KEY: wallets.map((wallet) => wallet.privateKey).join(",") };
    if (variable === "KEYSTORE_PATH") {
      writeFileSync(env.KEYSTORE_PATH, encryptKeystoreJsonSync(wallets[0], "dev password", { scrypt: { N: 1 << 10 } }));
      writeFileSync(env.KEYSTORE_PASSWORD_FILE, "dev password\n");
    }
    // No RPC_URL: the local dev chain; no API_KEYS: a key generated for the run, in the printed command.
    const server = await startServerProcess({ RPC_URL: "", DEMO_SETUP: "", API_KEYS: "", AUTH_DISABLED: "", ...devJournal(onTestFinished), ...env });
    try {
      // The end of the printed curl command.
      await server.waitForOutput(`"amount":"1.5"}'`);
      const output = server.output();
      const curlLine = output.split("\n").find((line) => line.trim().startsWith("curl ")) as string;
      expect(output).toContain(`your ${variable} signer funded`);
      for (const wallet of wallets) expect(output).toContain(wallet.address);
      const reply = JSON.parse((await run("sh", ["-c", curlLine.trim()])).stdout);
      expect(wallets.map((wallet) => wallet.address)).toContain(reply.result.from);
      if (variable === "KEYSTORE_PATH") expect(output).toContain('"signer":"keystore');
    } finally {
      await stopProcessTree(server.child.pid as number);
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it("refuses to start with a bad variable, naming it", async () => {
    const result = await run(process.execPath, [SERVER_ENTRY], {
      env: { ...process.env, RPC_URL: "http://127.0.0.1:1", PRIVATE_KEY: "0xnotakey", TOKEN_ADDRESS: "" },
    }).catch((error: { code: number; stderr: string }) => error);
    expect("code" in result && result.code).toBe(1);
    expect(result.stderr).toContain("PRIVATE_KEY: must be 0x followed by 64 hex digits");
    expect(result.stderr).toContain("TOKEN_ADDRESS: required when RPC_URL is set");
    expect(result.stderr).not.toContain("notakey");
  });

  it("refuses to start when the node is unreachable, without printing the URL's secrets", async () => {
    const result = await run(process.execPath, [SERVER_ENTRY], {
      env: {
        ...process.env,
        RPC_URL: "http://user:hunter2@127.0.0.1:1/v3/secret-key",
        PRIVATE_KEY: `0x${"11".repeat(32)}`,
        TOKEN_ADDRESS: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
        API_KEYS: "a-key-long-enough-to-pass",
        RPC_TIMEOUT_MS: "1000",
      },
    }).catch((error: { code: number; stderr: string }) => error);
    expect("code" in result && result.code).toBe(1);
    expect(result.stderr).toContain("RPC_URL: the node at http://127.0.0.1:1 did not answer");
    expect(result.stderr).not.toContain("hunter2");
    expect(result.stderr).not.toContain("secret-key");
  });
});

describe.concurrent("npm start, as systemd, pm2 or CI run it (no terminal)", () => {
  it.for(["SIGINT", "SIGTERM"] as const)("leaves no process behind within 5 s of %s to npm's own PID", { timeout: 120_000 }, async (signal, { onTestFinished }) => {
    const npm = spawn("npm", ["start"], {
      env: { ...process.env, RPC_URL: "", DEMO_SETUP: "", API_KEYS: "", AUTH_DISABLED: "", ...devJournal(onTestFinished), PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    npm.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(npm, "exit");
    try {
      await waitFor(() => output.split("\n").find((line) => line.trim().startsWith("curl ")), 90_000, () => output);
      const family = [npm.pid as number, ...descendantsOf(npm.pid as number)];
      // npm, the service's node and anvil at least.
      expect(family.length).toBeGreaterThanOrEqual(3);
      process.kill(npm.pid as number, signal);
      const deadline = Date.now() + 5_000;
      while (family.some(isAlive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(family.filter(isAlive).map((pid) => `${pid} ${commandOf(pid)}`)).toEqual([]);
      await exited;
    } finally {
      await stopProcessTree(npm.pid as number, 0);
    }
  });
});

async function waitFor<T>(probe: () => T | undefined, timeoutMs: number, describe: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out; output so far:\n${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
