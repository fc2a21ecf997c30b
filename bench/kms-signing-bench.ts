/**
 * Remote signing must not hold the wallet up: POST /transfer throughput with the key in AWS KMS (the
 * moto_server emulator, signing the digest as AWS does, see test/helpers/moto-kms.ts) at concurrency 50
 * against concurrency 1, in the same run, on fresh anvil chains. Target: at least 5x. Beside it, the
 * signer alone (kms:Sign at concurrency 1 and 50) and the same service with PRIVATE_KEY, for scale.
 *
^ *   npm run bench:kms        (TRANSFERS=300 at concurrency 50, 60 at concurrency 1)
 */
import { Contract, JsonRpcProvider, Wallet, keccak256, parseEther, parseUnits, randomBytes } from "ethers";
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

const kms = await startTestKms();
// The service's AWS SDK reads its settings from the environment, as in production.
Object.assign(process.env, kms.env);
const keyId = await kms.createKey();

async function measureTransfers(count: number, concurrency: number, signer: "kms" | "private-key"): Promise<RunResult> {
  const node = await startAnvil();
  try {
    const demo = await setUpDemoChain(node.rpcUrl);
    let env: Record<string, string> = {};
    if (signer === "kms") {
      const address = (await openAwsKmsSigner(keyId, kms.client)).address;
      await fund(node.rpcUrl, demo, address, parseUnits("1000000", 18));
      env = { PRIVATE_KEY: "", AWS_KMS_KEY_ID: keyId };
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
    const wallet = new Wallet(demo.privateKey, provider);
    await (await wallet.sendTransaction({ to: address, value: parseEther("100") })).wait();
    await (await new Contract(demo.tokenAddress, ERC20_INTERFACE, wallet).getFunction("transfer")(address, tokens)).wait();
  } finally {
    provider.destroy();
  }
}

async function measureSigner(count: number, concurrency: number): Promise<RunResult> {
  const signer = await openAwsKmsSigner(keyId, kms.client);
  return runAtConcurrency(count, concurrency, async () => Boolean(await signer.sign(keccak256(randomBytes(32)))), WARMUP);
}

try {
  console.log(`AWS KMS signer (moto_server on 127.0.0.1), anvil automine; ${TRANSFERS} transfers at concurrency 50, ${SERIAL_TRANSFERS} at concurrency 1\n`);
  const signer1 = await measureSigner(SERIAL_TRANSFERS, 1);
  const signer50 = await measureSigner(TRANSFERS, 50);
  console.log(`kms:Sign alone     c1   ${formatRate(signer1)}`);
  console.log(`kms:Sign alone     c50  ${formatRate(signer50)}  (${(signer50.perSecond / signer1.perSecond).toFixed(2)}x c1)`);
  const kms1 = await measureTransfers(SERIAL_TRANSFERS, 1, "kms");
  const kms50 = await measureTransfers(TRANSFERS, 50, "kms");
  console.log(`transfers, KMS     c1   ${formatRate(kms1)}`);
  console.log(`transfers, KMS     c50  ${formatRate(kms50)}`);
  const ratio = kms50.perSecond / kms1.perSecond;
  console.log(`  ratio c50 / c1: ${ratio.toFixed(2)}x (target at least 5x): ${ratio >= 5 ? "met" : "MISSED"}`);
  const local1 = await measureTransfers(SERIAL_TRANSFERS, 1, "private-key");
  const local50 = await measureTransfers(TRANSFERS, 50, "private-key");
  console.log(`transfers, PRIVATE_KEY c1   ${formatRate(local1)}`);
  console.log(`transfers, PRIVATE_KEY c50  ${formatRate(local50)}  (KMS at c50 reaches ${((kms50.perSecond / local50.perSecond) * 100).toFixed(0)}% of it)`);
} finally {
  await kms.stop();
}
