/** Opens the one signer the configuration selects. */
import { openAwsKmsSigner } from "./aws-kms-signer.js";
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
      return openAwsKmsSigner(settings.keyId);
    case "pkcs11":
      return openPkcs11Signer(settings);
  }
}
