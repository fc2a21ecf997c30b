/**
 * An encrypted JSON keystore (version 3, as geth, clef and ethers write it), decrypted once at startup
 * with the password read from a file (a Docker or Kubernetes secret): the key is never in the environment.
 */
import { readFile } from "node:fs/promises";
import { decryptKeystoreJson, isKeystoreJson } from "ethers";
import { localKeySigner } from "./local-key-signer.js";
import { SignerStartupError, type WalletSigner } from "./wallet-signer.js";

export interface KeystoreSettings {
  keystorePath: string;
  passwordFile: string;
}

/** Decrypts the keystore; SignerStartupError names the variable at fault (never the password). */
export async function openKeystoreSigner({ keystorePath, passwordFile }: KeystoreSettings): Promise<WalletSigner> {
  const json = await readSecret(keystorePath, "KEYSTORE_PATH");
  if (!isKeystoreJson(json)) throw new SignerStartupError(`KEYSTORE_PATH: ${keystorePath} is not a version 3 JSON keystore`);
  // A password file ends with a newline more often than not; a password does not.
  const password = (await readSecret(passwordFile, "KEYSTORE_PASSWORD_FILE")).replace(/\r?\n$/, "");
  let privateKey: string;
  try {
    ({ privateKey } = await decryptKeystoreJson(json, password));
  } catch (error) {
    const wrongPassword = /incorrect password/i.test(String((error as Error).message));
    throw new SignerStartupError(
      wrongPassword ? `KEYSTORE_PASSWORD_FILE: the password does not decrypt ${keystorePath}` : `KEYSTORE_PATH: ${keystorePath} cannot be decrypted (${(error as Error).message})`,
    );
  }
  return localKeySigner(privateKey, "keystore", keystorePath);
}

async function readSecret(path: string, variable: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new SignerStartupError(`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}
