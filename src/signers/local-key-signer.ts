/**
 * A key held in the process: PRIVATE_KEY (development and tests) or a decrypted keystore. Signs natively
 * where the platform allows (see digest-signer.ts).
 */
import { SigningKey, computeAddress } from "ethers";
import { createDigestSigner } from "./digest-signer.js";
import type { SignerKind, WalletSigner } from "./wallet-signer.js";

/** A signer of the key `privateKey` (0x and 64 hex digits). */
export function localKeySigner(privateKey: string, kind: Extract<SignerKind, "private-key" | "keystore">, where = "the process"): WalletSigner {
  const signingKey = new SigningKey(privateKey);
  const digestSigner = createDigestSigner(signingKey);
  return {
    kind,
    address: computeAddress(signingKey.publicKey),
    description: `${kind} in ${where} (${digestSigner.implementation})`,
    sign: async (digest) => digestSigner.sign(digest),
    close: async () => undefined,
  };
}
