/** The AWS KMS signer against moto_server, the AWS API emulator: real API calls, real DER signatures. */
import { Transaction, Wallet, keccak256, randomBytes, recoverAddress } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openAwsKmsSigner } from "../../src/signers/aws-kms-signer.js";
import { SECP256K1_ORDER } from "../../src/signers/ecdsa-signature.js";
import { SignerStartupError, SignerUnavailableError } from "../../src/signers/wallet-signer.js";
import { type TestKms, motoMissing, startTestKms } from "../helpers/moto-kms.js";

const missing = motoMissing();

describe.skipIf(missing)(missing ? `AWS KMS signer: NOT RUN, ${missing}` : "AWS KMS signer", () => {
  let kms: TestKms;
  beforeAll(async () => {
    kms = await startTestKms();
  }, 30_000);
  afterAll(async () => kms?.stop());

  it("takes the wallet's address from the key, and signs every digest low-s with the parity that recovers it", async () => {
    const signer = await openAwsKmsSigner(await kms.createKey(), kms.client);
    expect(signer.kind).toBe("aws-kms");
    for (let index = 0; index < 40; index++) {
      const digest = keccak256(randomBytes(32));
      const signature = await signer.sign(digest);
      expect(recoverAddress(digest, signature)).toBe(signer.address);
      expect(BigInt(signature.s) <= SECP256K1_ORDER / 2n).toBe(true);
    }
    // A signed transaction from it is what any node accepts: its sender is the wallet.
    const transaction = Transaction.from({ chainId: 1n, nonce: 0, to: Wallet.createRandom().address, gasLimit: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, type: 2 });
    transaction.signature = await signer.sign(transaction.unsignedHash);
    expect(Transaction.from(transaction.serialized).from).toBe(signer.address);
  });

  it("finds a key by alias and by ARN as well as by id", async () => {
    const keyId = await kms.createKey("ECC_SECG_P256K1", "alias/hot-wallet-test");
    const byId = await openAwsKmsSigner(keyId, kms.client);
    const byAlias = await openAwsKmsSigner("alias/hot-wallet-test", kms.client);
    const byArn = await openAwsKmsSigner(`arn:aws:kms:us-east-1:123456789012:key/${keyId}`, kms.client);
    expect(byAlias.address).toBe(byId.address);
    expect(byArn.address).toBe(byId.address);
  });

  it("refuses to start with a P-256 key, naming the key spec", async () => {
    const keyId = await kms.createKey("ECC_NIST_P256");
    await expect(openAwsKmsSigner(keyId, kms.client)).rejects.toThrow(SignerStartupError);
    await expect(openAwsKmsSigner(keyId, kms.client)).rejects.toThrow(/AWS_KMS_KEY_ID: .*ECC_SECG_P256K1/);
  });

  it("refuses to start with an RSA key and with a key that does not exist, saying which", async () => {
    const rsa = await kms.createKey("RSA_2048");
    await expect(openAwsKmsSigner(rsa, kms.client)).rejects.toThrow(/AWS_KMS_KEY_ID: .*ECC_SECG_P256K1/);
    await expect(openAwsKmsSigner("11111111-2222-3333-4444-555555555555", kms.client)).rejects.toThrow(/AWS_KMS_KEY_ID: cannot read the public key .*NotFoundException/);
    await expect(openAwsKmsSigner("alias/no-such-key", kms.client)).rejects.toThrow(/AWS_KMS_KEY_ID: .*NotFoundException/);
  });

  it("says the signer is unavailable, signing nothing, when KMS cannot be reached", async () => {
    const signer = await openAwsKmsSigner(await kms.createKey(), kms.client);
    const other = await startTestKms();
    const unreachable = await openAwsKmsSigner(await other.createKey(), other.client);
    await other.stop();
    await expect(unreachable.sign(keccak256(randomBytes(32)))).rejects.toThrow(SignerUnavailableError);
    // The first signer is untouched.
    const digest = keccak256(randomBytes(32));
    expect(recoverAddress(digest, await signer.sign(digest))).toBe(signer.address);
  }, 30_000);

  it("refuses to start on an endpoint that hashes the digest again (the emulator as shipped), saying so", async () => {
    const shipped = await startTestKms({ asShipped: true });
    try {
      await expect(openAwsKmsSigner(await shipped.createKey(), shipped.client)).rejects.toThrow(/ignored MessageType=DIGEST and signed the SHA-256 of the digest/);
    } finally {
      await shipped.stop();
    }
  }, 30_000);
});
