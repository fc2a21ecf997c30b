import { Transaction, Wallet, hexlify, randomBytes, recoverAddress } from "ethers";
import { describe, expect, it } from "vitest";
import { createDigestSigner } from "../../src/signers/digest-signer.js";

/** The order of the secp256k1 group: a digest is read modulo n. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const EDGE_DIGESTS = [`0x${"00".repeat(31)}01`, `0x${"00".repeat(32)}`, `0x${(N - 1n).toString(16)}`];

describe("createDigestSigner", () => {
  it("signs with libsecp256k1 on this platform (linux x64, where CI runs)", () => {
    expect(createDigestSigner(Wallet.createRandom().signingKey).implementation).toBe("libsecp256k1");
  });

  it("gives exactly ethers' signature (RFC 6979, low s) for 300 random keys and hashes, and the edge hashes", () => {
    for (let round = 0; round < 300; round++) {
      const wallet = Wallet.createRandom();
      const signer = createDigestSigner(wallet.signingKey);
      const digests = round < EDGE_DIGESTS.length ? [EDGE_DIGESTS[round], hexlify(randomBytes(32))] : [hexlify(randomBytes(32))];
      for (const digest of digests) {
        const ours = signer.sign(digest);
        expect(ours.serialized).toBe(wallet.signingKey.sign(digest).serialized);
        expect(recoverAddress(digest, ours)).toBe(wallet.address);
      }
    }
  });

  it("signs digests of n and above validly, with another nonce than ethers (odds of a keccak hash there: 2^-128)", () => {
    // RFC 6979 as libsecp256k1 applies it feeds the digest's 32 bytes to the nonce generator; noble, under
    // ethers, first reduces it modulo n. Below n the two agree (above); from n up both sign correctly.
    const wallet = Wallet.createRandom();
    const signer = createDigestSigner(wallet.signingKey);
    for (const digest of [`0x${N.toString(16)}`, `0x${"ff".repeat(32)}`]) {
      expect(recoverAddress(digest, signer.sign(digest))).toBe(wallet.address);
    }
  });

  it("signs a transaction that ethers reads back as sent by the wallet", () => {
    const wallet = Wallet.createRandom();
    const transaction = Transaction.from({ type: 2, chainId: 31337n, nonce: 7, to: Wallet.createRandom().address, gasLimit: 60_000n, maxFeePerGas: 3n, maxPriorityFeePerGas: 1n, data: "0x1234" });
    transaction.signature = createDigestSigner(wallet.signingKey).sign(transaction.unsignedHash);
    expect(Transaction.from(transaction.serialized).from).toBe(wallet.address);
  });

  it("falls back to ethers' signer where the native binding does not load", () => {
    const wallet = Wallet.createRandom();
    const signer = createDigestSigner(wallet.signingKey, () => undefined);
    expect(signer.implementation).toBe("ethers");
    const digest = hexlify(randomBytes(32));
    expect(signer.sign(digest).serialized).toBe(wallet.signingKey.sign(digest).serialized);
  });
});
