import { SigningKey, Wallet, keccak256, randomBytes } from "ethers";
import { describe, expect, it } from "vitest";
import { SECP256K1_ORDER, addressOfPublicKey, ethereumSignature } from "../../src/signers/ecdsa-signature.js";

describe("ethereumSignature", () => {
  it("gives ethers' own signature from (r, s) and from (r, n - s), the parity found by recovery", () => {
    for (let index = 0; index < 50; index++) {
      const wallet = Wallet.createRandom();
      const digest = keccak256(randomBytes(32));
      const expected = wallet.signingKey.sign(digest);
      const r = BigInt(expected.r);
      const s = BigInt(expected.s);
      expect(ethereumSignature(r, s, digest, wallet.address).serialized).toBe(expected.serialized);
      // A remote signer's high s is the same signature to ECDSA, and not to Ethereum (EIP-2).
      expect(ethereumSignature(r, SECP256K1_ORDER - s, digest, wallet.address).serialized).toBe(expected.serialized);
    }
  });

  it("refuses a signature of another key, and values out of range", () => {
    const wallet = Wallet.createRandom();
    const digest = keccak256(randomBytes(32));
    const signature = Wallet.createRandom().signingKey.sign(digest);
    expect(() => ethereumSignature(BigInt(signature.r), BigInt(signature.s), digest, wallet.address)).toThrow(/does not recover the wallet's address/);
    expect(() => ethereumSignature(0n, 1n, digest, wallet.address)).toThrow(/out of range/);
    expect(() => ethereumSignature(1n, SECP256K1_ORDER, digest, wallet.address)).toThrow(/out of range/);
  });

  it("gives the address of a public key, compressed or not", () => {
    const wallet = Wallet.createRandom();
    const key = new SigningKey(wallet.privateKey);
    expect(addressOfPublicKey(Buffer.from(key.publicKey.slice(2), "hex"))).toBe(wallet.address);
    expect(addressOfPublicKey(Buffer.from(key.compressedPublicKey.slice(2), "hex"))).toBe(wallet.address);
  });
});
