/**
 * The hot wallet's signer, wherever its key lives: in the process (PRIVATE_KEY, a keystore), in AWS KMS,
 * or in a PKCS#11 HSM. Every transaction the service sends is signed through this one interface; remote
 * signers answer asynchronously, so signing never holds the event loop or the other transfers.
 */
import type { Signature } from "ethers";

export type SignerKind = "private-key" | "keystore" | "aws-kms" | "pkcs11";

export interface WalletSigner {
  readonly kind: SignerKind;
  /** The wallet's address, from the key itself (a KMS or HSM public key), never from configuration. */
  readonly address: string;
  /** What signs, for the startup log: the kind and where, never a secret. */
  readonly description: string;
  /** Signs a 32-byte digest (0x hex): a low-s signature with the y parity that recovers `address`. */
  sign(digest: string): Promise<Signature>;
  /** Lets go of sessions and connections. */
  close(): Promise<void>;
}

/** The signer cannot be used as configured; the process must not start. The message names the variable. */
export class SignerStartupError extends Error {
  override name = "SignerStartupError";
}

/**
 * A remote signer did not sign (unreachable, throttled, timed out): nothing was signed, nothing sent. The
 * message is fit for a client; `detail` holds the signer's own words (its SDK's or library's), which can name
 * accounts, roles, keys and hosts: for the service's log only.
 */
export class SignerUnavailableError extends Error {
  override name = "SignerUnavailableError";

  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}
