/**
 * AWS KMS for the tests: moto_server, the AWS API emulator (Python moto), on 127.0.0.1 at a free port.
 * It signs with real secp256k1 keys and answers the real API, so the signer's requests, DER signatures
 * and errors are AWS's shapes. By default its Python loads moto-digest/sitecustomize.py, which makes Sign
 * honour MessageType=DIGEST as AWS does (the shipped moto hashes the digest again); `asShipped` runs the
 * emulator unchanged. Missing or unable to start, it fails at once with the reason.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { CreateAliasCommand, CreateKeyCommand, type KeySpec, KMSClient } from "@aws-sdk/client-kms";
import { freePort } from "./free-port.js";

export interface TestKms {
  /** AWS_ENDPOINT_URL_KMS of the emulator. */
  endpoint: string;
  /** What a signer process needs in its environment: region, endpoint and (fake) credentials. */
  env: Record<string, string>;
  client: KMSClient;
  /** A new key of this spec (ECC_SECG_P256K1 by default); its id. */
  createKey(spec?: KeySpec, alias?: string): Promise<string>;
  stop(): Promise<void>;
}

/** Why moto_server cannot run here, or undefined when it can. */
export function motoMissing(): string | undefined {
  try {
    execFileSync("moto_server", ["--help"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "moto_server (pip package moto[server]) is not installed: the AWS KMS tests need it";
  }
}

const START_TIMEOUT_MS = 20_000;
// Credentials the emulator accepts; they must look real enough for the SDK, and are no one's.
const FAKE_SECRET = "moto-test-secret-access-key-not-a-real-one";

export async function startTestKms(options: { asShipped?: boolean } = {}): Promise<TestKms> {
  const missing = motoMissing();
  if (missing) throw new Error(missing);
  const port = await freePort();
  const pythonPath = [join(import.meta.dirname, "moto-digest"), process.env.PYTHONPATH].filter(Boolean).join(":");
  const child = spawn("moto_server", ["-H", "127.0.0.1", "-p", String(port)], {
    env: options.asShipped ? process.env : { ...process.env, PYTHONPATH: pythonPath },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  await waitUntilServing(child, endpoint, () => output);
  const env = { AWS_REGION: "us-east-1", AWS_ENDPOINT_URL_KMS: endpoint, AWS_ACCESS_KEY_ID: "AKIAMOTOTESTKEY00000", AWS_SECRET_ACCESS_KEY: FAKE_SECRET };
  const client = new KMSClient({ region: env.AWS_REGION, endpoint, credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: FAKE_SECRET } });
  return {
    endpoint,
    env,
    client,
    async createKey(spec = "ECC_SECG_P256K1", alias) {
      const created = await client.send(new CreateKeyCommand({ KeySpec: spec, KeyUsage: "SIGN_VERIFY" }));
      const keyId = created.KeyMetadata?.KeyId as string;
      if (alias) await client.send(new CreateAliasCommand({ AliasName: alias, TargetKeyId: keyId }));
      return keyId;
    },
    async stop() {
      client.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

async function waitUntilServing(child: ChildProcess, endpoint: string, output: () => string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode}) before serving:\n${output()}`);
    try {
      await fetch(`${endpoint}/moto-api/`);
      return;
    } catch {
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`moto_server did not serve at ${endpoint} within ${START_TIMEOUT_MS} ms:\n${output()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
