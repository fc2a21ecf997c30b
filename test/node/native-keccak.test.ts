import { getAddress, hexlify, id, keccak256, randomBytes } from "ethers";
import { describe, expect, it } from "vitest";
import { useNativeKeccak } from "../../src/node/native-keccak.js";

describe("useNativeKeccak", () => {
  it("keeps ethers' keccak where the native binding does not load", () => {
    expect(useNativeKeccak(() => undefined)).toBe("ethers");
  });

  it("gives ethers the same hashes, natively, for every length around the sponge's 136-byte rate", () => {
    const inputs = Array.from({ length: 300 }, (_, length) => randomBytes(length));
    const byEthers = inputs.map((input) => keccak256(input));
    const selector = id("transfer(address,uint256)").slice(0, 10);
    const checksummed = getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3");

    expect(useNativeKeccak()).toBe("native");
    expect(inputs.map((input) => keccak256(input))).toEqual(byEthers);
    // Views into a larger buffer hash only their own bytes.
    const backing = randomBytes(64);
    expect(keccak256(backing.subarray(10, 42))).toBe(keccak256(hexlify(backing.subarray(10, 42))));
    expect(id("transfer(address,uint256)").slice(0, 10)).toBe(selector);
    expect(selector).toBe("0xa9059cbb");
    expect(getAddress("0x5fbdb2315678afecb367f032d93f642f64180aa3")).toBe(checksummed);
  });
});
