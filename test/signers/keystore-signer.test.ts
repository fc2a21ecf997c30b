/** The keystore signer against files written by ethers (the v3 format geth and clef write too). */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet, encryptKeystoreJsonSync, keccak256, randomBytes, recoverAddress } from "ethers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openKeystoreSigner } from "../../src/signers/keystore-signer.js";
import { SignerStartupError } from "../../src/signers/wallet-signer.js";

describe("keystore signer", () => {
  let dir: string;
  let wallet: Wallet;
  let keystorePath: string;
  let passwordFile: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "keystore-"));
    wallet = new Wallet(Wallet.createRandom().privateKey);
    keystorePath = join(dir, "wallet.json");
    passwordFile = join(dir, "password");
    // A cheap scrypt keeps the test fast; the format is the same as with the default cost.
    writeFileSync(keystorePath, encryptKeystoreJsonSync(wallet, "correct horse battery staple", { scrypt: { N: 1 << 10 } }));
    // Written by `echo ... > file`: the trailing newline is not part of the password.
    writeFileSync(passwordFile, "correct horse battery staple\n");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("decrypts once and signs as the wallet, naming no secret in its description", async () => {
    const signer = await openKeystoreSigner({ keystorePath, passwordFile });
    expect(signer.kind).toBe("keystore");
    expect(signer.address).toBe(wallet.address);
    expect(signer.description).not.toContain("staple");
    const digest = keccak256(randomBytes(32));
    expect((await signer.sign(digest)).serialized).toBe(wallet.signingKey.sign(digest).serialized);
    expect(recoverAddress(digest, await signer.sign(digest))).toBe(wallet.address);
  });

  it("refuses a wrong password, naming the password file and not the password", async () => {
    writeFileSync(passwordFile, "wrong password");
    const failure = await openKeystoreSigner({ keystorePath, passwordFile }).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(SignerStartupError);
    expect((failure as Error).message).toMatch(/^KEYSTORE_PASSWORD_FILE: the password does not decrypt /);
    expect((failure as Error).message).not.toContain("wrong password");
  });

  it("refuses a file that is not a keystore, and files it cannot read, naming the variable", async () => {
    writeFileSync(keystorePath, JSON.stringify({ hello: "world" }));
    await expect(openKeystoreSigner({ keystorePath, passwordFile })).rejects.toThrow(/^KEYSTORE_PATH: .* is not a version 3 JSON keystore/);
    await expect(openKeystoreSigner({ keystorePath: join(dir, "missing.json"), passwordFile })).rejects.toThrow(/^KEYSTORE_PATH: cannot read .*ENOENT/);
    await expect(openKeystoreSigner({ keystorePath, passwordFile: join(dir, "missing") })).rejects.toThrow(/KEYSTORE_PATH|KEYSTORE_PASSWORD_FILE/);
  });
});
