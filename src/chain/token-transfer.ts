/** Sends ERC-20 transfers from the hot wallet, refusing up front what would fail or waste gas. */
import { Transaction, isError, toBigInt } from "ethers";
import { ServiceError } from "../errors.js";
import type { ChainConnection } from "./connect-chain.js";
import { ERC20_INTERFACE, encodeTransfer } from "./erc20.js";
import { classifyChainFailure } from "./ethers-errors.js";
import { NonceSequence } from "./nonce-sequence.js";

interface FeeData {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** Sends token transfers for one hot wallet; safe to call concurrently. */
export class TokenTransferSender {
  readonly #chain: ChainConnection;
  readonly #nonces: NonceSequence;

  constructor(chain: ChainConnection) {
    this.#chain = chain;
    this.#nonces = new NonceSequence(async () =>
      Number(await chain.provider.send("eth_getTransactionCount", [chain.wallet.address, "pending"])),
    );
  }

  /**
   * Sends `transfer(recipient, units)` and resolves with the signed transaction once the node has accepted
   * it, before it is mined. Throws ServiceError with a 417 code when it cannot be sent.
   */
  async sendTokenTransfer(recipient: string, units: bigint): Promise<Transaction> {
    try {
      const data = encodeTransfer(recipient, units);
      const { gasLimit, fees } = await this.#checkTransferWouldSucceed(data, units);
      const send = (nonce: number) => this.#signAndBroadcast({ data, gasLimit, fees, nonce });
      try {
        return await this.#nonces.useNext(send);
      } catch (error) {
        // The node refused the nonce, so nothing was broadcast: another sender used the key. The sequence
        // has been re-read from the chain; one more try with a fresh nonce is safe.
        if (!isError(error, "NONCE_EXPIRED") && !isError(error, "REPLACEMENT_UNDERPRICED")) throw error;
        return await this.#nonces.useNext(send);
      }
    } catch (error) {
      throw asTransferError(error);
    }
  }

  /** The pre-flight: token balance, gas simulation, ETH for gas. Runs before a nonce is taken. */
  async #checkTransferWouldSucceed(data: string, units: bigint): Promise<{ gasLimit: bigint; fees: FeeData }> {
    const { provider, wallet, tokenAddress } = this.#chain;
    const [tokenBalance, gasEstimate, fees, ethBalance] = await Promise.allSettled([
      this.#readTokenBalance(),
      provider.send("eth_estimateGas", [{ from: wallet.address, to: tokenAddress, data }]).then(toBigInt),
      this.#readFees(),
      provider.send("eth_getBalance", [wallet.address, "latest"]).then(toBigInt),
    ]);
    const available = settledValue(tokenBalance);
    if (available < units) {
      throw new ServiceError(
        "INSUFFICIENT_TOKEN_BALANCE",
        `the hot wallet holds ${available} base units of the token, ${units} requested`,
      );
    }
    const gasLimit = settledValue(gasEstimate);
    const feeData = settledValue(fees);
    const gasCost = gasLimit * feeData.maxFeePerGas;
    if (settledValue(ethBalance) < gasCost) {
      throw new ServiceError("INSUFFICIENT_FUNDS", `the hot wallet has too little ETH to pay for gas (up to ${gasCost} wei needed)`);
    }
    return { gasLimit, fees: feeData };
  }

  async #readTokenBalance(): Promise<bigint> {
    const { provider, wallet, tokenAddress } = this.#chain;
    const data = ERC20_INTERFACE.encodeFunctionData("balanceOf", [wallet.address]);
    const result: string = await provider.send("eth_call", [{ to: tokenAddress, data }, "latest"]);
    return toBigInt(result);
  }

  // EIP-1559 fees as wallets compute them: the node's suggested tip on top of twice the latest base fee,
  // which stays valid through several blocks of rising base fee.
  async #readFees(): Promise<FeeData> {
    const { provider } = this.#chain;
    const [block, tip] = await Promise.all([
      provider.send("eth_getBlockByNumber", ["latest", false]) as Promise<{ baseFeePerGas?: string }>,
      provider.send("eth_maxPriorityFeePerGas", []).then(toBigInt),
    ]);
    if (block.baseFeePerGas === undefined) {
      throw new ServiceError("UNKNOWN_ERROR", "the node's chain has no EIP-1559 base fee; only type-2 transactions are supported");
    }
    return { maxFeePerGas: 2n * toBigInt(block.baseFeePerGas) + tip, maxPriorityFeePerGas: tip };
  }

  async #signAndBroadcast(draft: { data: string; gasLimit: bigint; fees: FeeData; nonce: number }): Promise<Transaction> {
    const { provider, wallet, chainId, tokenAddress } = this.#chain;
    const transaction = Transaction.from({
      type: 2,
      chainId,
      nonce: draft.nonce,
      to: tokenAddress,
      value: 0n,
      data: draft.data,
      gasLimit: draft.gasLimit,
      maxFeePerGas: draft.fees.maxFeePerGas,
      maxPriorityFeePerGas: draft.fees.maxPriorityFeePerGas,
      accessList: [],
    });
    transaction.signature = wallet.signingKey.sign(transaction.unsignedHash);
    const acceptedHash: string = await provider.send("eth_sendRawTransaction", [transaction.serialized]);
    if (acceptedHash.toLowerCase() !== transaction.hash) {
      throw new Error(`node accepted the transaction under hash ${acceptedHash}, expected ${transaction.hash}`);
    }
    return transaction;
  }
}

function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === "rejected") throw result.reason;
  return result.value;
}

function asTransferError(error: unknown): unknown {
  if (error instanceof ServiceError) return error;
  const failure = classifyChainFailure(error);
  return failure ? new ServiceError(failure.code, failure.message) : error;
}
