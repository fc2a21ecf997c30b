/** Checks the address a transfer goes to. */
import { ZeroAddress, getAddress } from "ethers";

/** Why a recipient address was refused; the message is written for the client. */
export class InvalidAddressError extends Error {
  override name = "InvalidAddressError";
}

/**
 * Returns the checksummed form of a 20-byte hex address. A mixed-case address must pass its EIP-55
 * checksum (a typo in one would otherwise send tokens nowhere); all-lower or all-upper case carry none.
 * The zero address is refused: tokens sent there are burned.
 */
export function parseRecipientAddress(address: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) {
    throw new InvalidAddressError("address must be 0x followed by 40 hex digits");
  }
  const hexDigits = address.slice(2);
  const caseless = hexDigits === hexDigits.toLowerCase() || hexDigits === hexDigits.toUpperCase();
  const checksummed = getAddress(`0x${hexDigits.toLowerCase()}`);
  if (!caseless && checksummed !== address) {
    throw new InvalidAddressError(`address ${address} fails its EIP-55 checksum (did you mean a different address?)`);
  }
  if (checksummed === ZeroAddress) throw new InvalidAddressError("the zero address cannot receive tokens");
  return checksummed;
}
