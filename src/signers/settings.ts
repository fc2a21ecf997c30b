/** The hot wallet's signer: a key, a keystore, an AWS KMS key or an HSM's; a comma-separated list makes a pool. */
import { type Static, type TObject, Type } from "@sinclair/typebox";
import { type RawSettings, listOf, namesARealChain, settingsPart } from "../settings/settings-part.js";
import type { SignerSettings } from "./create-signer.js";

// A signer variable may name several keys, comma-separated: each is a lane of a wallet pool.
const HEX_PRIVATE_KEYS = "^0x[0-9a-fA-F]{64}(\\s*,\\s*0x[0-9a-fA-F]{64})*$";

const schema = {
  privateKey: Type.Optional(Type.String({ pattern: HEX_PRIVATE_KEYS, description: "hot wallet key, 0x and 64 hex digits; comma-separated keys make a wallet pool" })),
  keystorePath: Type.Optional(Type.String({ minLength: 1, description: "encrypted JSON keystore (v3) of the hot wallet; comma-separated paths make a pool" })),
  keystorePasswordFile: Type.Optional(Type.String({ minLength: 1, description: "file holding the keystore's password (one for all, or one per keystore)" })),
  awsKmsKeyId: Type.Optional(
    Type.String({ minLength: 1, description: "AWS KMS key (id, ARN or alias) of spec ECC_SECG_P256K1 that holds the hot wallet's key; comma-separated keys make a pool" }),
  ),
  pkcs11Module: Type.Optional(Type.String({ minLength: 1, description: "path of the HSM's PKCS#11 library" })),
  pkcs11TokenLabel: Type.Optional(Type.String({ minLength: 1, description: "label of the HSM token holding the key" })),
  pkcs11KeyLabel: Type.Optional(Type.String({ minLength: 1, description: "label of the key pair on that token; comma-separated labels make a pool" })),
  pkcs11PinFile: Type.Optional(Type.String({ minLength: 1, description: "file holding the token's user PIN" })),
};

/** The signer variables, as loaded. */
export type SignerVariables = Static<TObject<typeof schema>>;

const VARIABLES = {
  privateKey: "PRIVATE_KEY",
  keystorePath: "KEYSTORE_PATH",
  keystorePasswordFile: "KEYSTORE_PASSWORD_FILE",
  awsKmsKeyId: "AWS_KMS_KEY_ID",
  pkcs11Module: "PKCS11_MODULE",
  pkcs11TokenLabel: "PKCS11_TOKEN_LABEL",
  pkcs11KeyLabel: "PKCS11_KEY_LABEL",
  pkcs11PinFile: "PKCS11_PIN_FILE",
} as const;

/** The variables that select each signer; exactly one signer may be selected. */
const SIGNER_VARIABLES = [
  { kind: "PRIVATE_KEY", fields: ["privateKey"] },
  { kind: "KEYSTORE_PATH", fields: ["keystorePath", "keystorePasswordFile"] },
  { kind: "AWS_KMS_KEY_ID", fields: ["awsKmsKeyId"] },
  { kind: "PKCS11_MODULE", fields: ["pkcs11Module", "pkcs11TokenLabel", "pkcs11KeyLabel", "pkcs11PinFile"] },
] as const satisfies { kind: string; fields: (keyof typeof schema)[] }[];

export const SIGNER_SETTINGS = settingsPart({
  schema,
  variables: VARIABLES,
  expectations: { privateKey: "must be 0x followed by 64 hex digits (several keys: comma-separated)" },
  secrets: ["privateKey"],
  check(raw, problems) {
    // A variable that is missing is reported even when others are malformed, so one run lists every fix.
    checkSignerLists(raw, problems);
    // On the dev chain a signer is optional (one is created), but one that is set must be complete: it is used.
    const signerChosen = SIGNER_VARIABLES.some(({ fields }) => fields.some((field) => raw[field] !== undefined));
    if (signerChosen || namesARealChain(raw)) checkSignerSelection(raw, problems);
  },
});

/**
 * The signers the configuration selects, one per lane (a list variable names several keys of one kind);
 * undefined when none is (a dev chain brings its own key).
 */
export function signerSettingsOf(config: SignerVariables): SignerSettings[] | undefined {
  if (config.privateKey) return listOf(config.privateKey).map((privateKey) => ({ kind: "private-key", privateKey }));
  if (config.keystorePath && config.keystorePasswordFile) {
    const passwordFiles = listOf(config.keystorePasswordFile);
    return listOf(config.keystorePath).map((keystorePath, index) => ({ kind: "keystore", keystorePath, passwordFile: passwordFiles[passwordFiles.length === 1 ? 0 : index] }));
  }
  if (config.awsKmsKeyId) return listOf(config.awsKmsKeyId).map((keyId) => ({ kind: "aws-kms", keyId }));
  const { pkcs11Module, pkcs11TokenLabel, pkcs11KeyLabel, pkcs11PinFile } = config;
  if (pkcs11Module && pkcs11TokenLabel && pkcs11KeyLabel && pkcs11PinFile) {
    return listOf(pkcs11KeyLabel).map((keyLabel) => ({ kind: "pkcs11", modulePath: pkcs11Module, tokenLabel: pkcs11TokenLabel, keyLabel, pinFile: pkcs11PinFile }));
  }
  return undefined;
}

function checkSignerSelection(raw: RawSettings, problems: string[]): void {
  const selected = SIGNER_VARIABLES.filter(({ fields }) => fields.some((field) => raw[field] !== undefined));
  if (selected.length === 0) {
    problems.push("PRIVATE_KEY: required when RPC_URL or NETWORKS_FILE is set, unless the key is elsewhere: KEYSTORE_PATH, AWS_KMS_KEY_ID or PKCS11_MODULE (see docs/signers.md)");
    return;
  }
  if (selected.length > 1) {
    problems.push(`${selected.map(({ kind }) => kind).join(", ")}: each selects the wallet's signer; set exactly one`);
    return;
  }
  for (const field of selected[0].fields) {
    if (raw[field] === undefined) problems.push(`${VARIABLES[field]}: required with ${selected[0].kind}`);
  }
}

/** Each lane needs a key of its own, and a keystore list its passwords: one for all, or one each. */
function checkSignerLists(raw: RawSettings, problems: string[]): void {
  for (const field of ["privateKey", "keystorePath", "awsKmsKeyId", "pkcs11KeyLabel"] as const) {
    const value = raw[field];
    if (typeof value !== "string") continue;
    const entries = listOf(value);
    if (entries.some((entry) => entry === "")) problems.push(`${VARIABLES[field]}: an empty entry in the comma-separated list`);
    // Compared without case: the same private key in upper and lower case is one wallet.
    if (new Set(entries.map((entry) => entry.toLowerCase())).size < entries.length) {
      problems.push(`${VARIABLES[field]}: the same key is listed twice; each lane of a pool needs a key of its own`);
    }
  }
  if (typeof raw.keystorePath === "string" && typeof raw.keystorePasswordFile === "string") {
    const keystores = listOf(raw.keystorePath).length;
    const passwords = listOf(raw.keystorePasswordFile).length;
    if (passwords !== 1 && passwords !== keystores) {
      problems.push(`KEYSTORE_PASSWORD_FILE: ${passwords} files for ${keystores} keystores; give one for all, or one per keystore in the same order`);
    }
  }
}
