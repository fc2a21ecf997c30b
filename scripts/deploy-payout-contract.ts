/**
 * Deploys the payout contract (contracts/PayoutBatch.sol) and prints its address, for PAYOUT_CONTRACT. Any
 * account may deploy it: it has no owner and moves only its caller's tokens. Not the hot wallet: the
 * service owns that wallet's nonces.
 *
 *   RPC_URL=https://... DEPLOYER_PRIVATE_KEY=0x... npm run deploy:payouts
 */
import { ContractFactory, JsonRpcProvider, Wallet } from "ethers";
import payoutBatch from "../contracts/artifacts/PayoutBatch.json" with { type: "json" };

const rpcUrl = process.env.RPC_URL;
const key = process.env.DEPLOYER_PRIVATE_KEY;
if (!rpcUrl || !key) {
  console.error("set RPC_URL and DEPLOYER_PRIVATE_KEY (an account with a little ETH for gas, not the hot wallet)");
  process.exit(2);
}
const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true });
try {
  const deployer = new Wallet(key, provider);
  const { chainId } = await provider.getNetwork();
  const contract = await new ContractFactory(payoutBatch.abi, payoutBatch.bytecode, deployer).deploy();
  console.log(`sent ${contract.deploymentTransaction()?.hash}; waiting for it to be mined`);
  await contract.waitForDeployment();
  const address = await contract.getAddress();
  console.log(`PayoutBatch deployed on chain ${chainId} at ${address}\nPAYOUT_CONTRACT=${address}`);
} finally {
  provider.destroy();
}
