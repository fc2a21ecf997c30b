/**
 * Turns a remote signer's bare ECDSA (r, s) into an Ethereum signature. KMS and HSMs sign with either s
 * (Ethereum accepts only the low one since EIP-2) and do not say which of the two possible public keys
 * the signature recovers to (the y parity): both are worked out here, the parity by recovering the
 * address, so a signature that does not belong to the wallet is caught before anything is sent.
 */
import { Signature, computeAddress, hexlify, recoverAddress, toBeHex } from "ethers";

/** The order of secp256k1's group. */
export const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The Ethereum signature of `digest` by `address` from (r, s); throws when neither parity recovers it. */
export function ethereumSignature(r: bigint, s: bigint, digest: string, address: string): Signature {
  if (r <= 0n || r >= SECP256K1_ORDER || s <= 0n || s >= SECP256K1_ORDER) throw new Error("the signer returned a signature out of range");
  const lowS = s > SECP256K1_ORDER / 2n ? SECP256K1_ORDER - s : s;
  for (const yParity of [0, 1] as const) {
    const signature = Signature.from({ r: toBeHex(r, 32), s: toBeHex(lowS, 32), yParity });
    if (recoverAddress(digest, signature).toLowerCase() === address.toLowerCase()) return signature;
  }
  throw new Error(`the signer's signature does not recover the wallet's address ${address}: it signed with another key`);
}

/** The address of a secp256k1 public key, uncompressed (0x04, x, y) or compressed. */
export function addressOfPublicKey(publicKey: Uint8Array): string {
  return computeAddress(hexlify(publicKey));
}
