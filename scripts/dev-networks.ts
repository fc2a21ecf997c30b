/**
 * Several networks on one machine: two local anvils with chain ids of their own, the demo token (DEMO) on
 * each and the native coin (ETH), one dev wallet funded on both, and the service on a NETWORKS_FILE that
 * names them. Prints the curl that pays in each token on each network; Ctrl-C (or SIGTERM) stops
 * everything it started.
 *
 *   npm run dev:networks                  the service on port 3000
 *   npm run dev:networks -- --port 4000   (0: a free port, printed)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ApiKeyRing } from "../src/auth/api-keys.js";
import { type AnvilNode, startAnvil } from "../src/dev/anvil.js";
import { setUpDemoChain } from "../src/dev/demo-chain.js";

/** The two networks: names as requests give them, and chain ids of their own (31337 is anvil's default). */
const NETWORKS = [
  { name: "local-a", chainId: 31337 },
  { name: "local-b", chainId: 31338 },
];

const { values } = parseArgs({ options: { port: { type: "string", default: "3000" } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error("--port is the service's port (0: a free one)");

const folder = mkdtempSync(join(tmpdir(), "dev-networks-"));
console.log(`dev:networks: starting ${NETWORKS.length} anvils, the demo token on each, and the service (a few seconds)...`);
const nodes: AnvilNode[] = [];
let service: ChildProcess | undefined;

let stopping = false;
function stopAll(code: number): void {
  if (stopping) return;
  stopping = true;
  const serviceExited = service && service.exitCode === null && service.signalCode === null ? new Promise((resolve) => service?.once("exit", resolve)) : Promise.resolve();
  service?.kill("SIGTERM");
  // The nodes stop once the service is gone: it reads them until it closes.
  void serviceExited.then(() => Promise.all(nodes.map((node) => node.stop()))).finally(() => process.exit(code));
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => stopAll(0));

try {
  for (const { chainId } of NETWORKS) nodes.push(await startAnvil(["--chain-id", String(chainId)]));
  // The first chain's setup makes the wallet; the others fund the same wallet (one signer pays on every network).
  const first = await setUpDemoChain(nodes[0].rpcUrl);
  const tokens = [first.tokenAddress];
  for (const node of nodes.slice(1)) tokens.push((await setUpDemoChain(node.rpcUrl, { holders: [first.walletAddress] })).tokenAddress);
  const networksFile = join(folder, "networks.json");
  const file = {
    networks: NETWORKS.map(({ name, chainId }, index) => ({ name, chainId, rpcUrls: [nodes[index].rpcUrl], tokens: { DEMO: tokens[index], ETH: "native" } })),
    default: { network: NETWORKS[0].name, token: "DEMO" },
  };
  writeFileSync(networksFile, `${JSON.stringify(file, null, 2)}\n`);
  const apiKey = ApiKeyRing.generateKey();
  const logPath = join(folder, "service.log");
  service = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    env: {
      ...process.env,
      NETWORKS_FILE: networksFile,
      RPC_URL: "",
      TOKEN_ADDRESS: "",
      CHAIN_ID: "",
      DEMO_SETUP: "",
      DEV_BLOCK_TIME: "",
      PRIVATE_KEY: first.privateKey,
      API_KEYS: `admin:${apiKey}`,
      JOURNAL_PATH: join(folder, "transfers.sqlite"),
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = createWriteStream(logPath);
  let output = "";
  for (const stream of [service.stdout, service.stderr]) {
    stream?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      log.write(chunk);
    });
  }
  let ended: string | undefined;
  service.once("close", (code, signal) => (ended = signal ? `killed by ${signal}` : `exited with code ${code}`));
  const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;
  for (const deadline = Date.now() + 60_000; !listening.test(output); ) {
    if (ended !== undefined || Date.now() > deadline) throw new Error(`the service did not start (${ended ?? "still starting after 60 s"}; its log: ${logPath}):\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const base = (listening.exec(output) as RegExpExecArray)[1];
  const pay = (network: string, token: string) =>
    `  curl -s -X POST ${base}/transfer -H 'content-type: application/json' -H 'authorization: Bearer ${apiKey}' -d '${JSON.stringify({ toAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", amount: "1.5", network, token })}'`;
  process.stdout.write(
    [
      "",
      `${NETWORKS.length} local networks, one dev wallet ${first.walletAddress} (1,000,000 DEMO and 1000 ETH on each), the service at ${base}:`,
      ...NETWORKS.map(({ name, chainId }, index) => `  ${name}  chain ${chainId}  node ${nodes[index].rpcUrl}  DEMO ${tokens[index]}`),
      `  NETWORKS_FILE: ${networksFile}`,
      `  API key: ${apiKey} (admin, generated for this run)`,
      "Pay in each token on each network:",
      ...NETWORKS.flatMap(({ name }) => [pay(name, "DEMO"), pay(name, "ETH")]),
      `  curl -s ${base}/wallet -H 'authorization: Bearer ${apiKey}'    (the default network's, and every network's in networks[])`,
      `Journal and logs: ${folder}. Ctrl-C stops everything.`,
      "",
    ].join("\n") + "\n",
  );
} catch (error) {
  process.stderr.write(`dev:networks: ${(error as Error).message}\n`);
  stopAll(1);
}
