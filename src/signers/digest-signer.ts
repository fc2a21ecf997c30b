/**
 * Signs transaction hashes with the hot wallet's key. Signing is the largest single cost of a transfer:
 * ethers' pure-JavaScript secp256k1 takes about 0.3 ms here, libsecp256k1 (Bitcoin Core's library, through
 * the `secp256k1` package's native binding) about 0.04 ms. Both sign deterministically (RFC 6979) with a
 * low s, so they give the same signature for the same key and hash (any hash below the group order, so
 * every keccak hash but with odds of 2^-128; above it both sign validly); the tests hold them to that.
 */
import { createRequire } from "node:module";
import { Signature, type SigningKey, getBytes, hexlify } from "ethers";

/** Signs 32-byte digests with one key. */
export interface DigestSigner {
  /** Which implementation signs, for the startup log line. */
  readonly implementation: "libsecp256k1" | "ethers";
  sign(digest: string): Signature;
}

/** The part of the `secp256k1` package's native binding used here. */
interface NativeSecp256k1 {
  ecdsaSign(message: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
}

/**
 * The native signer when its binding loads on this platform, else ethers' own. Only the native binding
 * is ever used: the package's fallback is the unmaintained `elliptic`, and ethers' signer is better.
 */
export function createDigestSigner(signingKey: SigningKey, loadNative = loadNativeSecp256k1): DigestSigner {
  const native = loadNative();
  if (!native) return { implementation: "ethers", sign: (digest) => signingKey.sign(digest) };
  const privateKey = getBytes(signingKey.privateKey);
  return {
    implementation: "libsecp256k1",
    sign(digest) {
      const { signature, recid } = native.ecdsaSign(getBytes(digest), privateKey);
      return Signature.from({ r: hexlify(signature.subarray(0, 32)), s: hexlify(signature.subarray(32, 64)), yParity: recid as 0 | 1 });
    },
  };
}

function loadNativeSecp256k1(): NativeSecp256k1 | undefined {
  try {
    return createRequire(import.meta.url)("secp256k1/bindings") as NativeSecp256k1;
  } catch {
    return undefined;
  }
}
