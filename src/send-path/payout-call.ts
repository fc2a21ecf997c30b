/**
 * The wallet transactions a payout needs: the batch itself (the payout contract's pay()), and once per
 * token the wallet's approval of that contract, which lets it move the wallet's tokens on the wallet's own
 * call only (see contracts/PayoutBatch.sol).
 */
import { MaxUint256, toBigInt } from "ethers";
import type { PayoutOrder, TransferRequest } from "../journal/transfer-journal.js";
import { ERC20_INTERFACE } from "../node/erc20.js";
import { encodePay } from "../node/payout-batch.js";

/**
 * An allowance this large is the service's own approval (the whole uint256, of which tokens that count
 * allowances down spend a little per payout): below it, the wallet approves the contract again.
 */
const APPROVED = MaxUint256 >> 1n;

/**
 * A batch's gas limit above its estimate: an item's recipient that empties its balance before the batch is
 * mined costs 20,000 gas more than estimated, and without the gas the whole batch reverts (PayoutBatch).
 */
export function withPayoutGasMargin(gasLimit: bigint): bigint {
  return gasLimit + gasLimit / 5n;
}

/** Call data of the batch: pay() with every item the batch pays (not those an earlier batch holds). */
export function payoutCallData(token: string, order: PayoutOrder): string {
  return encodePay(
    token,
    order.items.filter((item) => item.duplicateOf === undefined),
  );
}

/** Call data of the wallet's approval of `contract` for all of its tokens. */
export function approvalCallData(contract: string): string {
  return ERC20_INTERFACE.encodeFunctionData("approve", [contract, MaxUint256]);
}

/**
 * What the wallet allows `contract` to spend of its `token`, as of the latest block, and whether that is
 * the service's own approval for good.
 */
export async function payoutAllowance(node: { send(method: string, params: unknown[]): Promise<unknown> }, token: string, wallet: string, contract: string): Promise<{ units: bigint; forGood: boolean }> {
  const answer = await node.send("eth_call", [{ to: token, data: ERC20_INTERFACE.encodeFunctionData("allowance", [wallet, contract]) }, "latest"]);
  const units = toBigInt(String(answer));
  return { units, forGood: units >= APPROVED };
}

/**
 * Whether a repeat of a key asks for what its journaled entry pays: the same recipient and amount, or a batch
 * the same by its items (which of them an earlier batch held is the first answer's).
 */
export function samePayment(entry: TransferRequest, request: TransferRequest): boolean {
  return entry.payout || request.payout ? sameItems(entry.payout, request.payout) : entry.recipient === request.recipient && entry.units === request.units;
}

/** Whether two batches ask for the same items (ids, recipients and amounts, in order); what is paid where may differ. */
export function sameItems(first: PayoutOrder | undefined, second: PayoutOrder | undefined): boolean {
  if (!first || !second || first.items.length !== second.items.length) return false;
  return first.items.every((item, index) => {
    const other = second.items[index];
    return item.id === other.id && item.recipient === other.recipient && item.units === other.units;
  });
}
