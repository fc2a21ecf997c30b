/**
 * Gas per recipient of a payout (contracts/PayoutBatch.sol, one transaction) against one token transfer
 * per recipient, on the same chain and token in the same run: for BATCH_SIZES recipients, new holders (no
 * balance of the token yet) and existing holders (paid once before). Every figure is the receipts' gasUsed,
 * the 21,000 of each transaction included. Targets (issue #33): at least 1.8 times cheaper per new holder,
 * 3 times per existing holder.
 *
 *   npm run bench:payout-gas      (BATCH_SIZES=50,200 CHAIN_NODE=anvil|hardhat)
 */
import { Contract, ContractFactory, JsonRpcProvider, type TransactionReceipt, Wallet, MaxUint256 } from "ethers";
import demoToken from "../contracts/artifacts/DemoToken.json" with { type: "json" };
import payoutBatch from "../contracts/artifacts/PayoutBatch.json" with { type: "json" };
import { startAnvil } from "../src/dev/anvil.js";
import { setUpDemoChain } from "../src/dev/demo-chain.js";
import { encodePay, failedItems } from "../src/node/payout-batch.js";
import { startHardhatNode } from "../test/helpers/hardhat-node.js";

const BATCH_SIZES = (process.env.BATCH_SIZES ?? "50,200").split(",").map(Number);
const CHAIN_NODE = process.env.CHAIN_NODE ?? "anvil";
const UNITS = 12_345_000_000_000_000n;

const node = CHAIN_NODE === "hardhat" ? await startHardhatNode() : await startAnvil();
const demo = await setUpDemoChain(node.rpcUrl);
const provider = new JsonRpcProvider(node.rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
const wallet = new Wallet(demo.privateKey, provider);
try {
  const token = new Contract(demo.tokenAddress, demoToken.abi, wallet);
  const deployed = await new ContractFactory(payoutBatch.abi, payoutBatch.bytecode, wallet).deploy();
  await deployed.waitForDeployment();
  const payouts = await deployed.getAddress();
  await mined(await token.getFunction("approve")(payouts, MaxUint256));

  const rows: string[][] = [];
  for (const size of BATCH_SIZES) {
    // Single transfers: new holders, then the same recipients again as existing holders.
    const singles = freshRecipients(size);
    const singleNew = await transfersGas(token, singles);
    const singleExisting = await transfersGas(token, singles);
    // The batch: new holders, then the same recipients again.
    const batched = freshRecipients(size);
    const batchNew = await batchGas(payouts, demo.tokenAddress, batched);
    const batchExisting = await batchGas(payouts, demo.tokenAddress, batched);
    rows.push(row(size, "new holders", singleNew / size, batchNew / size, 1.8));
    rows.push(row(size, "existing holders", singleExisting / size, batchExisting / size, 3));
  }
  console.log(`gas per recipient on ${CHAIN_NODE} (receipts' gasUsed, 21,000 per transaction included)`);
  console.log(["recipients", "holders", "one transfer each", "payout batch", "ratio", "target", "met"].join("\t"));
  for (const cells of rows) console.log(cells.join("\t"));
} finally {
  provider.destroy();
  await node.stop();
}

function freshRecipients(count: number): string[] {
  return Array.from({ length: count }, () => Wallet.createRandom().address);
}

// The sum of the receipts' gas of one transfer to each recipient, sent one after another.
async function transfersGas(token: Contract, recipients: readonly string[]): Promise<number> {
  let gas = 0n;
  for (const recipient of recipients) gas += (await mined(await token.getFunction("transfer")(recipient, UNITS))).gasUsed;
  return Number(gas);
}

async function batchGas(payouts: string, tokenAddress: string, recipients: readonly string[]): Promise<number> {
  const data = encodePay(tokenAddress, recipients.map((recipient) => ({ recipient, units: UNITS })));
  const receipt = await mined(await wallet.sendTransaction({ to: payouts, data }));
  const failed = failedItems(receipt.logs, payouts, wallet.address);
  if (receipt.status !== 1 || failed.size > 0) throw new Error(`the batch of ${recipients.length} did not pay every item: ${[...failed.values()].join("; ")}`);
  return Number(receipt.gasUsed);
}

async function mined(sent: { wait(): Promise<TransactionReceipt | null> }): Promise<TransactionReceipt> {
  const receipt = await sent.wait();
  if (!receipt) throw new Error("no receipt");
  return receipt;
}

function row(size: number, holders: string, single: number, batch: number, target: number): string[] {
  const ratio = single / batch;
  return [String(size), holders, single.toFixed(0), batch.toFixed(0), ratio.toFixed(2), `>= ${target}`, ratio >= target ? "yes" : "NO"];
}
