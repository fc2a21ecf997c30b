/**
 * Several replicas on one machine, without Docker: a local anvil with the demo token and wallet, an
 * embedded PostgreSQL (the one the tests use) as the shared journal, and N replicas of the service sharing
 * that wallet, each on its own port. Prints how to reach each one and how to kill the leader; Ctrl-C (or
 * SIGTERM) stops everything it started.
 *
 *   npm run dev:replicas                      3 replicas on ports 3001, 3002, 3003
 *   npm run dev:replicas -- --replicas 2 --port 4001
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ApiKeyRing } from "../src/auth/api-keys.js";
import { startAnvil } from "../src/dev/anvil.js";
import { setUpDemoChain } from "../src/dev/demo-chain.js";
import { startTestPostgres } from "../test/helpers/postgres.js";

const { values } = parseArgs({ options: { replicas: { type: "string", default: "3" }, port: { type: "string", default: "3001" } } });
const count = Number(values.replicas);
const firstPort = Number(values.port);
if (!Number.isInteger(count) || count < 1 || count > 9) throw new Error("--replicas is a number from 1 to 9");
if (!Number.isInteger(firstPort) || firstPort < 1 || firstPort + count > 65_536) throw new Error("--port is the first replica's port");

const logDir = mkdtempSync(join(tmpdir(), "dev-replicas-"));
const anvil = await startAnvil();
const postgres = await startTestPostgres().catch(async (error: Error) => {
  await anvil.stop();
  throw error;
});
const replicas: { id: string; url: string; child: ChildProcess; output: () => string }[] = [];

let stopping = false;
function stopAll(code: number): void {
  if (stopping) return;
  stopping = true;
  // Every process is signalled at once, synchronously; PostgreSQL stops once the replicas are gone.
  const exits = replicas.filter(({ child }) => child.exitCode === null && child.signalCode === null).map(({ child }) => new Promise((resolve) => child.once("exit", resolve)));
  for (const { child } of replicas) child.kill("SIGTERM");
  const anvilStopped = anvil.stop();
  void Promise.all([...exits, anvilStopped])
    .then(() => postgres.stop())
    .finally(() => process.exit(code));
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => stopAll(0));

try {
  const demo = await setUpDemoChain(anvil.rpcUrl);
  const apiKey = ApiKeyRing.generateKey();
  const env = {
    ...process.env,
    RPC_URL: anvil.rpcUrl,
    PRIVATE_KEY: demo.privateKey,
    TOKEN_ADDRESS: demo.tokenAddress,
    DATABASE_URL: postgres.url,
    API_KEYS: `admin:${apiKey}`,
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
  };
  for (let index = 1; index <= count; index++) {
    const id = `replica-${index}`;
    const port = firstPort + index - 1;
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], { env: { ...env, PORT: String(port), REPLICA_ID: id, REPLICA_URL: url }, stdio: ["ignore", "pipe", "pipe"] });
    const log = createWriteStream(join(logDir, `${id}.log`));
    let output = "";
    for (const stream of [child.stdout, child.stderr]) {
      stream?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        log.write(chunk);
      });
    }
    // "close", not "exit": the child's last lines (why it stopped) may still be in its pipes when it exits.
    let ended: string | undefined;
    child.once("close", (code, signal) => (ended = signal ? `killed by ${signal}` : `exited with code ${code}`));
    replicas.push({ id, url, child, output: () => output });
    const why = (what: string) => () => `${id} ${what} (${ended ?? "still running after 60 s"}; its log: ${join(logDir, `${id}.log`)}):\n${output}`;
    await waitFor(() => output.includes("Server listening at "), () => ended !== undefined, why("did not start"));
    // The first one takes the lead before the next starts, so the leader is the one printed first.
    if (index === 1) await waitFor(() => output.includes("this replica leads"), () => ended !== undefined, why("did not take the lead"));
  }
  const [leader, other = leader] = replicas;
  const example = JSON.stringify({ toAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", amount: "1.5" });
  process.stdout.write(
    [
      "",
      `${count} replicas share one journal (embedded PostgreSQL) and one demo wallet ${demo.walletAddress} (token ${demo.tokenAddress}, anvil ${anvil.rpcUrl}):`,
      ...replicas.map(({ id, url, child }) => `  ${id}  ${url}  pid ${child.pid}${id === leader.id ? "  (leads)" : ""}`),
      `  API key: ${apiKey} (admin, generated for this run)`,
      "Try:",
      `  curl -s -X POST ${other.url}/transfer -H 'content-type: application/json' -H 'authorization: Bearer ${apiKey}' -d '${example}'`,
      `  curl -s ${other.url}/wallet -H 'authorization: Bearer ${apiKey}'`,
      `  kill -9 ${leader.child.pid}    (the leader: another replica takes over within seconds; /wallet says which)`,
      `Logs: ${logDir}. Ctrl-C stops everything.`,
      "",
    ].join("\n") + "\n",
  );
} catch (error) {
  process.stderr.write(`dev:replicas: ${(error as Error).message}\n`);
  stopAll(1);
}

async function waitFor(done: () => boolean, failed: () => boolean, message: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!done()) {
    if (failed() || Date.now() > deadline) throw new Error(message());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
