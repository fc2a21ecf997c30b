/**
 * `npm run dev:kms`, used as printed: it starts the KMS emulator with a key and prints the variables; the
 * service started with them (no RPC_URL: the local dev chain) signs with that key, its wallet funded there;
 * SIGTERM to npm leaves nothing behind.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { motoMissing } from "../helpers/moto-kms.js";
import { stopProcessTree } from "../helpers/process-tree.js";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { waitUntil } from "../helpers/wait-until.js";

const run = promisify(execFile);
const missing = motoMissing();

describe.skipIf(missing)(missing ? `npm run dev:kms: NOT RUN, ${missing}` : "npm run dev:kms", () => {
  it("prints variables that make the dev service sign with the emulated KMS key, and stops on SIGTERM", async () => {
    const npm = spawn("npm", ["run", "dev:kms"], { stdio: ["ignore", "pipe", "pipe"] });
    let printed = "";
    npm.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    npm.stderr.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    let service: ServerProcess | undefined;
    try {
      await waitUntil(() => printed.includes("Ctrl-C stops the emulator"), 60_000, () => printed);
      const variables = Object.fromEntries([...printed.matchAll(/^ {2}export (\w+)=(\S+)$/gm)].map(([, name, value]) => [name, value]));
      expect(Object.keys(variables).sort()).toEqual(["AWS_ACCESS_KEY_ID", "AWS_ENDPOINT_URL_KMS", "AWS_KMS_KEY_ID", "AWS_REGION", "AWS_SECRET_ACCESS_KEY"]);
      // As printed: these variables, no RPC_URL (the local dev chain), no API_KEYS (a key generated for the run).
      service = await startServerProcess({ RPC_URL: "", PRIVATE_KEY: "", API_KEYS: "", AUTH_DISABLED: "", JOURNAL_PATH: join(mkdtempSync(join(tmpdir(), "dev-kms-")), "transfers.sqlite"), ...variables });
      await service.waitForOutput(`"amount":"1.5"}'`);
      const output = service.output();
      expect(output).toContain("your AWS_KMS_KEY_ID signer funded");
      const wallet = (/wallet: +(0x[0-9a-fA-F]{40})/.exec(output) as RegExpExecArray)[1];
      const curl = output.split("\n").find((line) => line.trim().startsWith("curl ")) as string;
      const reply = JSON.parse((await run("sh", ["-c", curl.trim()])).stdout);
      expect(reply.result.from).toBe(wallet);
      expect(output).toContain('"signer":"aws-kms key alias/dev-hot-wallet"');
    } finally {
      // Gracefully, so that it stops the dev chain it started.
      if (service?.child.pid) await stopProcessTree(service.child.pid);
    }
    expect(await stopProcessTree(npm.pid as number, 5_000)).toEqual([]);
  }, 120_000);
});
