/** The slice of the ERC-20 interface the service uses, plus OpenZeppelin's custom errors so reverts decode. */
import { Interface } from "ethers";

export const ERC20_INTERFACE = new Interface([
  "function transfer(address to, uint256 amount) returns (bool)",
  "function balanceOf(address owner) view returns (uint256)",
  "function decimals() view returns (uint8)",
  "function symbol() view returns (string)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)",
  "error ERC20InvalidSender(address sender)",
  "error ERC20InvalidReceiver(address receiver)",
  "error EnforcedPause()",
]);

/** Call data of `transfer(to, amount)`. */
export function encodeTransfer(to: string, amount: bigint): string {
  return ERC20_INTERFACE.encodeFunctionData("transfer", [to, amount]);
}
