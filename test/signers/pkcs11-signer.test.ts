/** The PKCS#11 signer against SoftHSM2: keys generated on the token, signatures made by it. */
import { writeFileSync } from "node:fs";
import { Transaction, Wallet, keccak256, randomBytes, recoverAddress } from "ethers";
import pkcs11js from "pkcs11js";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SECP256K1_ORDER } from "../../src/signers/ecdsa-signature.js";
import { openPkcs11Signer } from "../../src/signers/pkcs11-signer.js";
import { SignerStartupError, SignerUnavailableError, type WalletSigner } from "../../src/signers/wallet-signer.js";
import { P256_PARAMS, type TestHsm, createTestHsm, softHsmMissing } from "../helpers/softhsm.js";

const missing = softHsmMissing();

describe.skipIf(missing)(missing ? `PKCS#11 signer: NOT RUN, ${missing}` : "PKCS#11 signer", () => {
  let hsm: TestHsm;
  let pinFile: string;
  let opened: WalletSigner | undefined;
  beforeAll(() => {
    hsm = createTestHsm();
    ({ pinFile } = hsm.createToken("wallet", "472913"));
    hsm.generateKey("wallet", "472913", "hot");
    hsm.generateKey("wallet", "472913", "p256", P256_PARAMS);
    hsm.generateKey("wallet", "472913", "hot-2");
  });
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });
  afterAll(() => hsm?.remove());

  const open = async (overrides: Partial<Parameters<typeof openPkcs11Signer>[0]> = {}) => {
    opened = await openPkcs11Signer({ modulePath: hsm.modulePath, tokenLabel: "wallet", keyLabel: "hot", pinFile, ...overrides });
    return opened;
  };

  it("signs with the token's key, low-s, recovering the address of its public key; many at once", async () => {
    const signer = await open();
    expect(signer.kind).toBe("pkcs11");
    expect(signer.description).not.toContain("472913");
    const digests = Array.from({ length: 40 }, () => keccak256(randomBytes(32)));
    // More signatures at once than the signer has sessions: they queue, none is lost or mixed up.
    const signatures = await Promise.all(digests.map((digest) => signer.sign(digest)));
    signatures.forEach((signature, index) => {
      expect(recoverAddress(digests[index], signature)).toBe(signer.address);
      expect(BigInt(signature.s) <= SECP256K1_ORDER / 2n).toBe(true);
    });
    const transaction = Transaction.from({ chainId: 1n, nonce: 0, to: Wallet.createRandom().address, gasLimit: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, type: 2 });
    transaction.signature = await signer.sign(transaction.unsignedHash);
    expect(Transaction.from(transaction.serialized).from).toBe(signer.address);
  });

  // C_Initialize without arguments promises the module a single thread, and SoftHSM then takes no locks:
  // signatures side by side on libuv's threads crashed the process (or hung it) in four runs out of five
  // here at 6,000 signatures, one in six at 1,000.
  it("tells the module it is called from several threads, and signs thousands side by side", async () => {
    const initialize = vi.spyOn(pkcs11js.PKCS11.prototype, "C_Initialize");
    let signer: WalletSigner;
    try {
      signer = await open();
      expect(initialize).toHaveBeenCalledWith({ flags: pkcs11js.CKF_OS_LOCKING_OK });
    } finally {
      initialize.mockRestore();
    }
    for (let batch = 0; batch < 10; batch++) {
      const digests = Array.from({ length: 200 }, () => keccak256(randomBytes(32)));
      const signatures = await Promise.all(digests.map((digest) => signer.sign(digest)));
      expect(signatures.filter((signature, index) => recoverAddress(digests[index], signature) !== signer.address)).toEqual([]);
    }
  }, 60_000);

  // A pool's lanes (PKCS11_KEY_LABEL=hot,hot-2) share one library in the process: PKCS#11 is initialised once
  // per process, and a lane that closes must not finalise it under the others.
  it("opens several keys of one library side by side, and closing one leaves the others signing", async () => {
    const initialize = vi.spyOn(pkcs11js.PKCS11.prototype, "C_Initialize");
    const finalize = vi.spyOn(pkcs11js.PKCS11.prototype, "C_Finalize");
    const first = await open();
    const second = await openPkcs11Signer({ modulePath: hsm.modulePath, tokenLabel: "wallet", keyLabel: "hot-2", pinFile });
    try {
      expect(second.address).not.toBe(first.address);
      const digest = keccak256(randomBytes(32));
      const [byFirst, bySecond] = await Promise.all([first.sign(digest), second.sign(digest)]);
      expect(recoverAddress(digest, byFirst)).toBe(first.address);
      expect(recoverAddress(digest, bySecond)).toBe(second.address);
      // A refused opening in between lets go of nothing the open signers use.
      await expect(openPkcs11Signer({ modulePath: hsm.modulePath, tokenLabel: "wallet", keyLabel: "nope", pinFile })).rejects.toThrow(/^PKCS11_KEY_LABEL/);
      await first.close();
      await first.close();
      opened = undefined;
      expect(recoverAddress(digest, await second.sign(digest))).toBe(second.address);
      // Initialised once for all, not finalised while a signer is open (a second close counts once).
      expect(initialize).toHaveBeenCalledTimes(1);
      expect(finalize).not.toHaveBeenCalled();
      await second.close();
      expect(finalize).toHaveBeenCalledTimes(1);
    } finally {
      await second.close();
      initialize.mockRestore();
      finalize.mockRestore();
    }
    // And the library opens again once every signer has closed.
    expect((await open()).address).toBe(first.address);
  });

  // A session closed or a library finalised under a signature on libuv's thread crashed the process.
  it("closes only once the signatures under way are done, refusing those still queued", async () => {
    const signer = await open();
    const other = await openPkcs11Signer({ modulePath: hsm.modulePath, tokenLabel: "wallet", keyLabel: "hot-2", pinFile });
    try {
      for (const closing of [signer, other]) {
        const digests = Array.from({ length: 12 }, () => keccak256(randomBytes(32)));
        const signing = Promise.allSettled(digests.map((digest) => closing.sign(digest)));
        await closing.close();
        const outcomes = await signing;
        // The first four had their sessions: signed. The rest were refused, nothing half done.
        outcomes.forEach((outcome, index) => {
          if (outcome.status === "fulfilled") expect(recoverAddress(digests[index], outcome.value)).toBe(closing.address);
          else expect(outcome.reason).toBeInstanceOf(SignerUnavailableError);
        });
        expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(4);
        await expect(closing.sign(digests[0])).rejects.toBeInstanceOf(SignerUnavailableError);
      }
    } finally {
      // Closing is once only: these do nothing more after the closes above, and free the library after a failure.
      await Promise.all([signer.close(), other.close()]);
      opened = undefined;
    }
  });

  it("refuses a wrong PIN, naming the PIN file and not the PIN", async () => {
    const wrong = `${pinFile}.wrong`;
    writeFileSync(wrong, "000000");
    const failure = await open({ pinFile: wrong }).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(SignerStartupError);
    expect((failure as Error).message).toBe('PKCS11_PIN_FILE: the PIN does not open token "wallet"');
  });

  it("refuses an unknown token, an unknown key and a P-256 key, naming the variable", async () => {
    await expect(open({ tokenLabel: "nope" })).rejects.toThrow(/^PKCS11_TOKEN_LABEL: no token labelled "nope"/);
    await expect(open({ keyLabel: "nope" })).rejects.toThrow(/^PKCS11_KEY_LABEL: token "wallet" holds no private key labelled "nope"/);
    await expect(open({ keyLabel: "p256" })).rejects.toThrow(/^PKCS11_KEY_LABEL: key "p256" is not a secp256k1 key/);
    await expect(open({ modulePath: "/nonexistent/libpkcs11.so" })).rejects.toThrow(/^PKCS11_MODULE: cannot load \/nonexistent\/libpkcs11.so/);
    // After every refusal the module was let go: the right settings still open.
    expect((await open()).address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });
});
