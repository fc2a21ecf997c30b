import { describe, expect, it } from "vitest";
import { InvalidAddressError, parseRecipientAddress } from "../../src/domain/recipient-address.js";

const CHECKSUMMED = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

describe("parseRecipientAddress", () => {
  it.each([CHECKSUMMED, CHECKSUMMED.toLowerCase(), `0x${CHECKSUMMED.slice(2).toUpperCase()}`])("accepts %s and checksums it", (address) => {
    expect(parseRecipientAddress(address)).toBe(CHECKSUMMED);
  });

  it.each([
    ["a mixed-case address with a wrong checksum", "0x70997970c51812dc3A010C7d01b50e0d17dc79C8", /checksum/],
    ["the zero address", "0x0000000000000000000000000000000000000000", /zero address/],
    ["a short address", "0x70997970C51812dc3A010C7d01b50e0d17dc79", /40 hex digits/],
    ["no 0x prefix", "70997970C51812dc3A010C7d01b50e0d17dc79C8", /40 hex digits/],
    ["a non-hex digit", "0x70997970C51812dc3A010C7d01b50e0d17dc79CG", /40 hex digits/],
  ])("refuses %s", (_label, address, message) => {
    expect(() => parseRecipientAddress(address)).toThrow(InvalidAddressError);
    expect(() => parseRecipientAddress(address)).toThrow(message);
  });
});
