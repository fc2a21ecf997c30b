/** The slice of the ERC-20 interface the service uses, plus OpenZeppelin's custom errors so reverts decode. */
import { Interface, getAddress } from "ethers";

export const ERC20_INTERFACE = new Interface([
  "function transfer(address to, uint256 amount) returns (bool)",
  "function approve(address spender, uint256 amount) returns (bool)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function balanceOf(address owner) view returns (uint256)",
  "function decimals() view returns (uint8)",
  "function symbol() view returns (string)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)",
  "error ERC20InvalidSender(address sender)",
  "error ERC20InvalidReceiver(address receiver)",
  "error EnforcedPause()",
]);

/** The topic of the token's Transfer event: what the service's log reads and receipt checks look for. */
export const TRANSFER_TOPIC = ERC20_INTERFACE.getEvent("Transfer")?.topicHash as string;

const TRANSFER_SELECTOR = ERC20_INTERFACE.getFunction("transfer")?.selector as string;

/**
 * Call data of `transfer(to, amount)` for an already validated address: the selector and two 32-byte
 * words, written directly because the generic ABI encoder re-hashes the selector and the address checksum
 * on every call, on the hot path of every transfer.
 */
export function encodeTransfer(to: string, amount: bigint): string {
  return `${TRANSFER_SELECTOR}${to.slice(2).toLowerCase().padStart(64, "0")}${amount.toString(16).padStart(64, "0")}`;
}

const TRANSFER_CALL = new RegExp(`^${TRANSFER_SELECTOR}0{24}([0-9a-f]{40})([0-9a-f]{64})$`);

/** The recipient and amount of `transfer(to, amount)` call data; undefined for any other call. */
export function decodeTransfer(data: string): { to: string; amount: bigint } | undefined {
  const match = TRANSFER_CALL.exec(data.toLowerCase());
  return match ? { to: getAddress(`0x${match[1]}`), amount: BigInt(`0x${match[2]}`) } : undefined;
}
