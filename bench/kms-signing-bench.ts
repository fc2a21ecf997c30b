/**
 * Remote signing must not hold the wallet up: POST /transfer throughput with the key in AWS KMS (the
 * moto_server emulator, signing the digest as AWS does, see test/helpers/moto-kms.ts) at concurrency 50
 * against concurrency 1, in the same run, on fresh anvil chains. Target: at least 5x. Beside it, the
 * signer alone (kms:Sign at concurrency 1 and 50) and the same service with PRIVATE_KEY, for scale.
 *
 * Twice: against the emulator on this machine (a Python process, whose own signing rate caps what any
 * client gets from it), and through a proxy that adds KMS_LATENCY_MS (default 20) to each call, as the
 * network to a KMS region does; there the wait, not the emulator, dominates, as with AWS KMS.
 *
^ *   npm run bench:kms        (TRANSFERS=300 at concurrency 50, 60 at concurrency 1)
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Contract, JsonRpcProvider, Wallet, keccak256, parseEther, parseUnits, randomBytes, toQuantity } from "ethers";
import { startAnvil } from "../src/dev/anvil.js";
import { type DemoChain, setUpDemoChain } from "../src/dev/demo-chain.js";
import { ERC20_INTERFACE } from "../src/node/erc20.js";
import { openAwsKmsSigner } from "../src/signers/aws-kms-signer.js";
import { startTestKms } from "../test/helpers/moto-kms.js";
import { type RunResult, formatRate, loadFromWorker, runAtConcurrency, startBenchService } from "./measure.js";

const TRANSFERS = Number(process.env.TRANSFERS ?? 300);
const SERIAL_TRANSFERS = Math.max(20, Math.round(TRANSFERS / 5));
const WARMUP = 20;
const recipient = Wallet.createRandom().address;

const KMS_LATENCY_MS = Number(process.env.KMS_LATENCY_MS ?? 20);

const kms = await startTestKms();
// The service's AWS SDK reads its settings from the environment, as in production.
Object.assign(process.env, kms.env);
const keyId = await kms.createKey();
const distant = await startDelayingProxy(kms.endpoint, KMS_LATENCY_MS);

/** An HTTP proxy to `target` that holds each request `latencyMs` before passing it on. */
async function startDelayingProxy(target: string, latencyMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      setTimeout(async () => {
        // Hop-by-hop and length headers are the proxy's own business on each side.
        const passed = (name: string) => !["host", "connection", "content-length", "transfer-encoding", "content-encoding"].includes(name);
        const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => passed(name)) as [string, string][]);
        const answer = await fetch(`${target}${request.url}`, { method: request.method, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined });
        response.writeHead(answer.status, Object.fromEntries([...answer.headers].filter(([name]) => passed(name))));
        response.end(Buffer.from(await answer.arrayBuffer()));
      }, latencyMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function measureTransfers(count: number, concurrency: number, signer: "kms" | "private-key", endpoint = kms.endpoint): Promise<RunResult> {
  const node = await startAnvil();
  try {
    const demo = await setUpDemoChain(node.rpcUrl);
    let env: Record<string, string> = {};
    if (signer === "kms") {
      const address = (await openAwsKmsSigner(keyId, kms.client)).address;
      await fund(node.rpcUrl, demo, address, parseUnits("1000000", 18));
      env = { PRIVATE_KEY: "", AWS_KMS_KEY_ID: keyId };
      process.env.AWS_ENDPOINT_URL_KMS = endpoint;
    }
    const service = await startBenchService(node.rpcUrl, demo, env);
    try {
      return await loadFromWorker({
        url: service.baseUrl,
        path: "/transfer",
        body: { toAddress: recipient, amount: "0.000001" },
        connections: concurrency,
        count,
        warmupCount: WARMUP,
        expectBodyIncludes: '"hash"',
      });
    } finally {
      await service.close();
    }
  } finally {
    await node.stop();
  }
}

// Gas money and tokens for the KMS key's address, from the demo wallet.
async function fund(rpcUrl: string, demo: DemoChain, address: string, tokens: bigint): Promise<void> {
  const provider = new JsonRpcProvider(rpcUrl);
  try {
    await provider.send("anvil_setBalance", [address, toQuantity(parseEther("100"))]);
    const wallet = new Wallet(demo.privateKey, provider);
    await (await new Contract(demo.tokenAddress, ERC20_INTERFACE, wallet).getFunction("transfer")(address, tokens)).wait();
  } finally {
    provider.destroy();
  }
}

async function measureSigner(count: number, concurrency: number, endpoint = kms.endpoint): Promise<RunResult> {
  process.env.AWS_ENDPOINT_URL_KMS = endpoint;
  const signer = await openAwsKmsSigner(keyId);
  return runAtConcurrency(count, concurrency, async () => Boolean(await signer.sign(keccak256(randomBytes(32)))), WARMUP);
}

try {
  console.log(`AWS KMS signer (moto_server on 127.0.0.1), anvil automine; ${TRANSFERS} transfers at concurrency 50, ${SERIAL_TRANSFERS} at concurrency 1\n`);
  for (const [label, endpoint] of [["emulator as it is", kms.endpoint], [`emulator + ${KMS_LATENCY_MS} ms per call`, distant.url]] as const) {
    console.log(label);
    const signer1 = await measureSigner(SERIAL_TRANSFERS, 1, endpoint);
    const signer50 = await measureSigner(TRANSFERS, 50, endpoint);
    console.log(`  kms:Sign alone   c1   ${formatRate(signer1)}`);
    console.log(`  kms:Sign alone   c50  ${formatRate(signer50)}  (${(signer50.perSecond / signer1.perSecond).toFixed(2)}x c1)`);
    const kms1 = await measureTransfers(SERIAL_TRANSFERS, 1, "kms", endpoint);
    const kms50 = await measureTransfers(TRANSFERS, 50, "kms", endpoint);
    console.log(`  transfers        c1   ${formatRate(kms1)}`);
    console.log(`  transfers        c50  ${formatRate(kms50)}`);
    const ratio = kms50.perSecond / kms1.perSecond;
    console.log(`  ratio c50 / c1: ${ratio.toFixed(2)}x (target at least 5x): ${ratio >= 5 ? "met" : "MISSED"}\n`);
  }
  const local1 = await measureTransfers(SERIAL_TRANSFERS, 1, "private-key");
  const local50 = await measureTransfers(TRANSFERS, 50, "private-key");
  console.log("PRIVATE_KEY, for scale");
  console.log(`  transfers        c1   ${formatRate(local1)}`);
  console.log(`  transfers        c50  ${formatRate(local50)}`);
} finally {
  await distant.close();
  await kms.stop();
}
