/**
 * Every lane's wallet snapshot at a block, read for all lanes at once: one JSON-RPC batch per block holds
 * one eth_call for every lane's token and ETH balances (the creation code of contracts/WalletBalances.sol,
 * run by the node and never deployed), one eth_getTransactionCount per lane (no EVM opcode reads a nonce),
 * and the block's fee reads, which the lanes share. A lane that asks for a block another lane's read covered
 * gets that read: busy lanes cost one request and 2 + lanes calls a block, where each read alone cost
 * four calls a lane (two more on an OP Stack chain).
 *
 * A batch that fails in any way is followed by the same reads call by call, as before batches, so that a
 * snapshot is never harder to get than it was: only when those fail too does the read fail. An endpoint
 * that plainly refuses batches, a node whose answer to the creation code is not the balances the calls
 * give, or batches that failed where calls did not REFUSALS_BEFORE_CALLS times in a row, are read call by
 * call from then on.
 */
import { AbiCoder, toQuantity } from "ethers";
import walletBalances from "../../contracts/artifacts/WalletBalances.json" with { type: "json" };
import type { ChainConnection } from "../node/connect-chain.js";
import { BatchRefused, type RpcCall, sendBatch } from "../node/json-rpc-batch.js";
import type { FeePolicy } from "../send-path/fee-policy.js";
import { type FeeBlock, type WalletSnapshot, feeReads, lowerCount, minedNonceCountRead, otherErc20Tokens, readFeeBlock, readWalletSnapshot, snapshotFrom } from "../send-path/wallet-snapshot.js";

/** How many blocks' reads are kept for lanes that ask later (a lane's poller ticks on its own timer). */
const KEPT_BLOCKS = 4;
/** Batches that failed where the same reads call by call did not, in a row, before batches are given up. */
const REFUSALS_BEFORE_CALLS = 5;

type Snapshots = Map<string, WalletSnapshot>;

export class PoolWalletReads {
  readonly #reads = new Map<string, Promise<Snapshots>>();
  #callByCall: string | undefined;
  #refusalsInARow = 0;
  #checked = false;
  #latestAsked: Promise<Snapshots> | undefined;

  constructor(
    /** The pool's connection: its provider, token and lane signers. */
    private readonly chain: ChainConnection,
    private readonly policy: FeePolicy,
    /** Told once when reads go call by call for good, and why. */
    private readonly onCallByCall: (reason: string) => void,
  ) {}

  /** Why reads go call by call; undefined while every lane is read in one batch. */
  get callByCall(): string | undefined {
    return this.#callByCall;
  }

  /**
   * `wallet`'s snapshot at `block`: another lane's read of that block serves. Without a block, a read at the
   * latest block that starts now, whatever was read before (what was read may be older than the asker
   * knows); asks that come in the same turn of the event loop share it.
   */
  async read(wallet: string, block?: FeeBlock): Promise<WalletSnapshot> {
    if (this.#callByCall) return readWalletSnapshot(this.#laneChain(wallet), this.policy, block);
    const snapshot = (await (block ? this.#readAll(block) : this.#readLatest())).get(wallet);
    if (!snapshot) throw new Error(`${wallet} is not a lane of this pool`);
    return snapshot;
  }

  #readLatest(): Promise<Snapshots> {
    if (this.#latestAsked) return this.#latestAsked;
    const reading = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      this.#latestAsked = undefined;
      return this.#readAll(await readFeeBlock(this.chain), true);
    });
    this.#latestAsked = reading;
    return reading;
  }

  #readAll(block: FeeBlock, afresh = false): Promise<Snapshots> {
    const kept = this.#reads.get(block.hash);
    if (kept && !afresh) return kept;
    this.#reads.delete(block.hash);
    const reading = this.#readBatch(block);
    this.#reads.set(block.hash, reading);
    // A failed read is not kept: the next ask reads again.
    reading.catch(() => this.#reads.get(block.hash) === reading && this.#reads.delete(block.hash));
    if (this.#reads.size > KEPT_BLOCKS) this.#reads.delete(this.#reads.keys().next().value as string);
    return reading;
  }

  async #readBatch(block: FeeBlock): Promise<Snapshots> {
    if (this.#callByCall) return this.#readCallByCall(block);
    const wallets = this.#wallets();
    const at = toQuantity(BigInt(block.number));
    // One balances call per ERC-20 token of the network, the first token's first.
    const tokens = [this.chain.tokenAddress, ...otherErc20Tokens(this.chain)];
    const balancesReads: RpcCall[] = tokens.map((token) => ({ method: "eth_call", params: [{ data: balancesCreationCode(token, wallets) }, at] }));
    const countReads = wallets.map((wallet) => minedNonceCountRead(wallet, at));
    let answers: PromiseSettledResult<unknown>[];
    try {
      // The counts before and after the balances and fees, the lower kept (see readWalletSnapshot: a node may
      // answer a read at its newest block from the state of the moment; a count older than the balances is the safe side).
      const before = await sendBatch(this.chain.provider, countReads);
      const rest = await sendBatch(this.chain.provider, [...balancesReads, ...countReads, ...feeReads(this.chain, this.policy, block, at)]);
      const after = rest.slice(balancesReads.length, balancesReads.length + countReads.length);
      const counted = before.map((first, index): PromiseSettledResult<unknown> => {
        const second = after[index];
        return first.status === "fulfilled" && second.status === "fulfilled" ? { status: "fulfilled", value: lowerCount(first.value, second.value) } : first.status === "rejected" ? first : second;
      });
      answers = [...rest.slice(0, balancesReads.length), ...counted, ...rest.slice(balancesReads.length + countReads.length)];
    } catch (error) {
      if (error instanceof BatchRefused) return this.#giveUpBatches(error.message, block);
      return this.#readAfterFailedBatch(block);
    }
    if (answers.some((answer) => answer.status === "rejected")) return this.#readAfterFailedBatch(block);
    const values = (answers as PromiseFulfilledResult<unknown>[]).map((answer) => answer.value);
    const balances = values.slice(0, tokens.length).map((answer) => decodedBalances(answer, wallets.length));
    const nonceCounts = values.slice(tokens.length, tokens.length + wallets.length);
    const [fees, l1DataFee] = values.slice(tokens.length + wallets.length);
    if (balances.some((decoded) => !decoded)) return this.#giveUpBatches("the node's answer to the balances call is not a balance per wallet", block);
    const [first, ...others] = balances as bigint[][];
    const snapshots: Snapshots = new Map(
      wallets.map((wallet, index) => {
        const otherTokenBalances = others.length === 0 ? undefined : new Map(others.map((decoded, token) => [tokens[token + 1], decoded[2 * index]]));
        const answers = { tokenBalance: first[2 * index], otherTokenBalances, ethBalance: first[2 * index + 1], minedNonceCount: nonceCounts[index] };
        return [wallet, snapshotFrom(block, this.policy, answers, { fees, l1DataFee })];
      }),
    );
    // Balances decide what may be sent: the first batched read is checked once against the calls it
    // replaces, so that a node that runs creation code otherwise than the EVM does is read call by call.
    if (!this.#checked) {
      const [firstWallet] = wallets;
      const alone = await readWalletSnapshot(this.#laneChain(firstWallet), this.policy, block);
      const batched = snapshots.get(firstWallet) as WalletSnapshot;
      const otherTokensAgree = [...(alone.otherTokenBalances ?? [])].every(([token, balance]) => batched.otherTokenBalances?.get(token) === balance);
      if (alone.tokenBalance !== batched.tokenBalance || !otherTokensAgree || alone.ethBalance !== batched.ethBalance || alone.minedNonceCount !== batched.minedNonceCount) {
        return this.#giveUpBatches(`the batched balances of ${firstWallet} differ from its balanceOf and eth_getBalance at block ${block.number}`, block);
      }
      this.#checked = true;
    }
    this.#refusalsInARow = 0;
    return snapshots;
  }

  // The batch failed (no answer, an HTTP error, an error for one of its calls): the calls alone decide. When
  // they fail too the node is at fault, not batches; when they do not, batches may be what it refuses.
  async #readAfterFailedBatch(block: FeeBlock): Promise<Snapshots> {
    const snapshots = await this.#readCallByCall(block);
    if (++this.#refusalsInARow >= REFUSALS_BEFORE_CALLS) this.#goCallByCall(`${REFUSALS_BEFORE_CALLS} batches in a row failed where the same reads call by call did not`);
    return snapshots;
  }

  #giveUpBatches(reason: string, block: FeeBlock): Promise<Snapshots> {
    this.#goCallByCall(reason);
    return this.#readCallByCall(block);
  }

  #goCallByCall(reason: string): void {
    if (this.#callByCall) return;
    this.#callByCall = reason;
    this.onCallByCall(reason);
  }

  async #readCallByCall(block: FeeBlock): Promise<Snapshots> {
    const wallets = this.#wallets();
    const snapshots = await Promise.all(wallets.map((wallet) => readWalletSnapshot(this.#laneChain(wallet), this.policy, block)));
    return new Map(wallets.map((wallet, index) => [wallet, snapshots[index]]));
  }

  #wallets(): string[] {
    return this.chain.laneSigners.map((signer) => signer.address);
  }

  #laneChain(wallet: string): ChainConnection {
    return { ...this.chain, wallet: { address: wallet } };
  }
}

/** WalletBalances' creation code with its constructor's arguments: run by eth_call, it answers the balances. */
function balancesCreationCode(token: string, wallets: readonly string[]): string {
  return `${walletBalances.bytecode}${AbiCoder.defaultAbiCoder().encode(["address", "address[]"], [token, wallets]).slice(2)}`;
}

// The balances call's answer: abi-encoded uint256[] of two per wallet; undefined for anything else.
function decodedBalances(answer: unknown, walletCount: number): bigint[] | undefined {
  try {
    const values = AbiCoder.defaultAbiCoder().decode(["uint256[]"], answer as string)[0] as bigint[];
    return values.length === 2 * walletCount ? [...values] : undefined;
  } catch {
    return undefined;
  }
}
