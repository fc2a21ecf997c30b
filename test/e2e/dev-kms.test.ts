/**
 * `npm run dev:kms`, used as printed: it starts the KMS emulator with a key and prints the variables; the
 * service started with them (no RPC_URL: the local dev chain) signs with that key, its wallet funded there;
 * SIGTERM to npm leaves nothing behind.
 */
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { motoMissing } from "../helpers/moto-kms.js";
import { commandOf, descendantsOf, isAlive, stopProcessTree } from "../helpers/process-tree.js";

const run = promisify(execFile);
const missing = motoMissing();

async function waitFor(done: () => boolean, what: () => string, timeoutMs = 60_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !done(); ) {
    if (Date.now() > deadline) throw new Error(`timed out; output so far:\n${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe.skipIf(missing)(missing ? `npm run dev:kms: NOT RUN, ${missing}` : "npm run dev:kms", () => {
  it("prints variables that make the dev service sign with the emulated KMS key, and stops on SIGTERM", async () => {
    const npm = spawn("npm", ["run", "dev:kms"], { stdio: ["ignore", "pipe", "pipe"] });
    let printed = "";
    npm.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    npm.stderr.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    let service: ReturnType<typeof spawn> | undefined;
    try {
      await waitFor(() => printed.includes("Ctrl-C stops the emulator"), () => printed);
      const variables = Object.fromEntries([...printed.matchAll(/^ {2}export (\w+)=(\S+)$/gm)].map(([, name, value]) => [name, value]));
      expect(Object.keys(variables).sort()).toEqual(["AWS_ACCESS_KEY_ID", "AWS_ENDPOINT_URL_KMS", "AWS_KMS_KEY_ID", "AWS_REGION", "AWS_SECRET_ACCESS_KEY"]);
      service = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
        env: { ...process.env, RPC_URL: "", PRIVATE_KEY: "", API_KEYS: "", AUTH_DISABLED: "", PORT: "0", HOST: "127.0.0.1", ...variables },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      service.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      service.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      await waitFor(() => output.split("\n").some((line) => line.trim().startsWith("curl ")), () => output);
      expect(output).toContain("your AWS_KMS_KEY_ID signer funded");
      const wallet = (/wallet: +(0x[0-9a-fA-F]{40})/.exec(output) as RegExpExecArray)[1];
      const curl = output.split("\n").find((line) => line.trim().startsWith("curl ")) as string;
      const reply = JSON.parse((await run("sh", ["-c", curl.trim()])).stdout);
      expect(reply.result.from).toBe(wallet);
      expect(output).toContain('"signer":"aws-kms key alias/dev-hot-wallet"');
    } finally {
      // Gracefully, so that it stops the dev chain it started.
      if (service?.pid) await stopProcessTree(service.pid);
    }
    const family = [npm.pid as number, ...descendantsOf(npm.pid as number)];
    process.kill(npm.pid as number, "SIGTERM");
    for (const deadline = Date.now() + 5_000; family.some(isAlive) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 100));
    const left = family.filter(isAlive);
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left.map((pid) => `${pid} ${commandOf(pid)}`)).toEqual([]);
  }, 120_000);
});
