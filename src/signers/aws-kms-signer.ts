/**
 * The wallet's key in AWS KMS (key spec ECC_SECG_P256K1, usage SIGN_VERIFY): it never leaves KMS, which
 * signs each transaction's digest. Credentials, region and endpoint come from the AWS SDK's own chain
 * (AWS_REGION, AWS_PROFILE, AWS_ACCESS_KEY_ID, web identity, instance roles, AWS_ENDPOINT_URL_KMS, ...).
 * KMS answers a DER signature with either s and no parity: see ecdsa-signature.ts.
 */
import { createPublicKey } from "node:crypto";
import { GetPublicKeyCommand, KMSClient, SignCommand } from "@aws-sdk/client-kms";
import { ECDSASigValue } from "@peculiar/asn1-ecc";
import { AsnConvert } from "@peculiar/asn1-schema";
import { getBytes, keccak256, sha256, toBigInt } from "ethers";
import { addressOfPublicKey, ethereumSignature } from "./ecdsa-signature.js";
import { SignerStartupError, SignerUnavailableError, type WalletSigner } from "./wallet-signer.js";

/** How long one KMS call may take before it counts as failed (the SDK retries throttling within it). */
const KMS_REQUEST_TIMEOUT_MS = 10_000;

/** The part of the KMS client used here; tests pass one of their own. */
export type KmsClient = Pick<KMSClient, "send" | "destroy">;

/**
 * Reads the key's public key (the wallet's address comes from it), checks it is a secp256k1 signing key,
 * and makes one signature to prove kms:Sign is allowed: a key policy missing it fails at startup, not at
 * the first transfer.
 */
export async function openAwsKmsSigner(keyId: string, given?: KmsClient): Promise<WalletSigner> {
  const client = given ?? defaultClient();
  // A client passed in (tests) is its owner's to close.
  const closeClient = () => {
    if (!given) client.destroy();
  };
  try {
    const address = await readAddress(client, keyId);
    await checkSigning(client, keyId, address);
    return {
      kind: "aws-kms",
      address,
      description: `aws-kms key ${keyId}`,
      sign: (digest) => signDigest(client, keyId, address, digest),
      close: async () => closeClient(),
    };
  } catch (error) {
    closeClient();
    throw error;
  }
}

function defaultClient(): KMSClient {
  return new KMSClient({ requestHandler: { requestTimeout: KMS_REQUEST_TIMEOUT_MS, connectionTimeout: KMS_REQUEST_TIMEOUT_MS } });
}

async function readAddress(client: KmsClient, keyId: string): Promise<string> {
  let answer;
  try {
    answer = await client.send(new GetPublicKeyCommand({ KeyId: keyId }));
  } catch (error) {
    throw new SignerStartupError(`AWS_KMS_KEY_ID: cannot read the public key of ${keyId} (kms:GetPublicKey): ${describeAwsError(error)}`);
  }
  if (answer.KeyUsage !== undefined && answer.KeyUsage !== "SIGN_VERIFY") {
    throw new SignerStartupError(`AWS_KMS_KEY_ID: key ${keyId} is for ${answer.KeyUsage}; a wallet key must be SIGN_VERIFY`);
  }
  if (!answer.PublicKey) throw new SignerStartupError(`AWS_KMS_KEY_ID: KMS returned no public key for ${keyId}`);
  // The key itself decides, not the spec KMS names (an emulator may not name one).
  let curve: string | undefined;
  let jwk: JsonWebKey;
  try {
    const publicKey = createPublicKey({ key: Buffer.from(answer.PublicKey), format: "der", type: "spki" });
    curve = publicKey.asymmetricKeyDetails?.namedCurve;
    jwk = publicKey.export({ format: "jwk" });
  } catch {
    throw new SignerStartupError(`AWS_KMS_KEY_ID: key ${keyId} (${answer.KeySpec ?? "unknown spec"}) is not an elliptic-curve key; it must be ECC_SECG_P256K1`);
  }
  if (curve !== "secp256k1" || !jwk.x || !jwk.y) {
    throw new SignerStartupError(`AWS_KMS_KEY_ID: key ${keyId} is ${answer.KeySpec ?? curve ?? "not secp256k1"}; an Ethereum wallet key must be ECC_SECG_P256K1`);
  }
  const uncompressed = new Uint8Array([4, ...Buffer.from(jwk.x, "base64url"), ...Buffer.from(jwk.y, "base64url")]);
  return addressOfPublicKey(uncompressed);
}

/**
 * One signature at startup, checked like every other: a key policy without kms:Sign fails here, not at the
 * first transfer, and so does an endpoint that does not sign the digest as given. The moto_server AWS
 * emulator (before getmoto/moto#10202) ignores MessageType=DIGEST and signs the SHA-256 of the digest;
 * no node would accept that signature, so the service must not start on it.
 */
async function checkSigning(client: KmsClient, keyId: string, address: string): Promise<void> {
  const digest = keccak256(new TextEncoder().encode("token-transfer-service startup check"));
  let signed: { r: bigint; s: bigint };
  try {
    signed = await signDer(client, keyId, digest);
  } catch (error) {
    throw new SignerStartupError(`AWS_KMS_KEY_ID: key ${keyId} did not sign (kms:Sign): ${(error as Error).message}`);
  }
  // Which hash the endpoint signed tells what is wrong with it.
  const recovers = (hash: string) => {
    try {
      ethereumSignature(signed.r, signed.s, hash, address);
      return true;
    } catch {
      return false;
    }
  };
  if (recovers(digest)) return;
  throw new SignerStartupError(
    recovers(sha256(digest))
      ? `AWS_KMS_KEY_ID: the KMS endpoint ignored MessageType=DIGEST and signed the SHA-256 of the digest (as the moto_server emulator does before getmoto/moto#10202); AWS KMS signs the digest as given. Such signatures are invalid on chain.`
      : `AWS_KMS_KEY_ID: key ${keyId} signed, but its signature does not recover the address of its own public key`,
  );
}

async function signDigest(client: KmsClient, keyId: string, address: string, digest: string) {
  let signed: { r: bigint; s: bigint };
  try {
    signed = await signDer(client, keyId, digest);
  } catch (error) {
    throw new SignerUnavailableError("AWS KMS did not sign (the service's log says why)", (error as Error).message);
  }
  return ethereumSignature(signed.r, signed.s, digest, address);
}

// KMS's answer: a DER ECDSA-Sig-Value (SEQUENCE of the integers r and s).
async function signDer(client: KmsClient, keyId: string, digest: string): Promise<{ r: bigint; s: bigint }> {
  let der: Uint8Array | undefined;
  try {
    der = (await client.send(new SignCommand({ KeyId: keyId, Message: getBytes(digest), MessageType: "DIGEST", SigningAlgorithm: "ECDSA_SHA_256" }))).Signature;
  } catch (error) {
    throw new Error(describeAwsError(error));
  }
  if (!der) throw new Error("KMS returned no signature");
  const { r, s } = AsnConvert.parse(der, ECDSASigValue);
  return { r: toBigInt(new Uint8Array(r)), s: toBigInt(new Uint8Array(s)) };
}

// An AWS error's name and message say what is wrong (NotFoundException, AccessDeniedException, a missing
// region or credentials) and carry no secret.
function describeAwsError(error: unknown): string {
  const { name, message } = error as Error;
  return name && name !== "Error" ? `${name}: ${message}` : String(message ?? error);
}
