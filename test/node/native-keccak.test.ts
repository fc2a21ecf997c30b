import { createHash } from "node:crypto";
import { getAddress, hexlify, id, keccak256, randomBytes } from "ethers";
import { describe, expect, it } from "vitest";
import { useNativeKeccak } from "../../src/node/native-keccak.js";

describe("useNativeKeccak", () => {
  it("keeps ethers' keccak where the native binding does not load, or hashes otherwise than ethers (checked before use)", () => {
    expect(useNativeKeccak(() => undefined)).toBe("ethers");
    // A sponge that pads as SHA-3 does: not Ethereum's keccak, so never registered.
    class Sha3Like {
      #absorbed = Buffer.alloc(0);
      initialize(): void {
        this.#absorbed = Buffer.alloc(0);
      }
      absorb(data: Buffer): void {
        this.#absorbed = Buffer.concat([this.#absorbed, data]);
      }
      squeeze(): Buffer {
        return createHash("sha3-256").update(this.#absorbed).digest();
      }
    }
    const before = keccak256(new Uint8Array([1, 2, 3]));
    expect(useNativeKeccak(() => Sha3Like)).toBe("ethers");
    expect(keccak256(new Uint8Array([1, 2, 3]))).toBe(before);
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
