/**
 * The payout contract (contracts/PayoutBatch.sol) as the service calls and reads it: one transaction pays
 * many recipients from the wallet, each item succeeding or failing on its own.
 */
import { AbiCoder, Interface, type Log, dataSlice, getAddress } from "ethers";
import payoutBatch from "../../contracts/artifacts/PayoutBatch.json" with { type: "json" };

export const PAYOUT_BATCH_INTERFACE = new Interface(payoutBatch.abi);

/** The contract's creation code, for deploying it (scripts, the dev chain, tests). */
export const PAYOUT_BATCH_BYTECODE = payoutBatch.bytecode;

/**
 * The code a deployed PayoutBatch has, as the node itself makes it: the creation code run by eth_call
 * returns it. Needs no compiler output beyond the artifact, and holds for any EVM version of the node.
 */
export async function payoutRuntimeCode(node: { send(method: string, params: unknown[]): Promise<unknown> }): Promise<string> {
  return String(await node.send("eth_call", [{ data: PAYOUT_BATCH_BYTECODE }, "latest"]));
}

/** The topic of ItemFailed(address indexed payer, uint256 indexed index, bytes reason). */
export const ITEM_FAILED_TOPIC = PAYOUT_BATCH_INTERFACE.getEvent("ItemFailed")?.topicHash as string;

/** An amount an item may carry: the contract packs it beside the address in one word, in 96 bits. */
export const MAX_ITEM_UNITS = (1n << 96n) - 1n;

/** One payment of a batch: the checksummed recipient and the amount in base units. */
export interface PayoutItem {
  recipient: string;
  units: bigint;
}

/** Call data of `pay(token, items)`, each item packed as `units << 160 | recipient`. */
export function encodePay(token: string, items: readonly PayoutItem[]): string {
  const packed = items.map(({ recipient, units }) => {
    if (units < 0n || units > MAX_ITEM_UNITS) throw new RangeError(`an item's amount must be below 2^96 base units, not ${units}`);
    return (units << 160n) | BigInt(recipient);
  });
  return PAYOUT_BATCH_INTERFACE.encodeFunctionData("pay", [token, packed]);
}

/** The items of `pay(token, items)` call data; undefined for any other call. */
export function decodePay(data: string): { token: string; items: PayoutItem[] } | undefined {
  const pay = PAYOUT_BATCH_INTERFACE.getFunction("pay");
  if (!pay || !data.toLowerCase().startsWith(pay.selector)) return undefined;
  const [token, packed] = PAYOUT_BATCH_INTERFACE.decodeFunctionData(pay, data) as unknown as [string, bigint[]];
  const mask = (1n << 160n) - 1n;
  const items = packed.map((word) => ({ recipient: addressOf(word & mask), units: word >> 160n }));
  return { token, items };
}

/**
 * The items a mined batch of `payer` failed, by index, each with its reason in words, from the receipt's
 * logs: only the contract's own (at `contract`), and only of the payer's own call (a call made within the
 * batch by a recipient a token calls back would name itself).
 */
export function failedItems(logs: readonly Pick<Log, "address" | "topics" | "data">[], contract: string, payer: string): Map<number, string> {
  const failed = new Map<number, string>();
  for (const log of logs) {
    if (log.address.toLowerCase() !== contract.toLowerCase() || log.topics[0] !== ITEM_FAILED_TOPIC || log.topics.length !== 3) continue;
    if (BigInt(log.topics[1] as string) !== BigInt(payer)) continue;
    const [reason] = AbiCoder.defaultAbiCoder().decode(["bytes"], log.data) as unknown as [string];
    failed.set(Number(BigInt(log.topics[2] as string)), reasonInWords(reason));
  }
  return failed;
}

/** Why every item of a batch failed, when the batch itself paid nothing: the words the API and the webhooks give. */
export const BATCH_FAILED = {
  reverted: "the batch's transaction reverted: nothing of it was paid",
  cancelled: "the batch was cancelled before it was mined: nothing of it was paid",
  replaced: "another transaction of the wallet took the batch's nonce: nothing of it was paid",
  rejected: "the node refused the batch: nothing of it was sent",
} as const;

const ERROR_STRING_SELECTOR = "0x08c379a0";

/** What a token's revert data (or returned false) says, for a person. */
export function reasonInWords(returned: string): string {
  if (returned === "0x") return "the token reverted the transfer without a reason";
  if (returned.startsWith(ERROR_STRING_SELECTOR)) {
    try {
      const [message] = AbiCoder.defaultAbiCoder().decode(["string"], dataSlice(returned, 4)) as unknown as [string];
      return `the token reverted the transfer: ${message}`;
    } catch {
      // Malformed Error(string): fall through to the raw data.
    }
  }
  if (returned.length === 66 && BigInt(returned) === 0n) return "the token's transferFrom returned false: it moved nothing";
  return `the token reverted the transfer (revert data ${returned.length > 202 ? `${returned.slice(0, 202)}…` : returned})`;
}

function addressOf(value: bigint): string {
  return getAddress(`0x${value.toString(16).padStart(40, "0")}`);
}
