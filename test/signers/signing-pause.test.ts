/** The signing pause (PAUSE_ON_UNEXPECTED_OUTFLOW): a wrapped signer signs nothing while paused, and signs again once resumed. */
import { Wallet, keccak256, recoverAddress, toUtf8Bytes } from "ethers";
import { describe, expect, it } from "vitest";
import { PauseChangedError, SigningPause, type SigningPauseStore, type SigningPaused, SigningPausedError, pausableSigner } from "../../src/signers/signing-pause.js";
import { localKeySigner } from "../../src/signers/local-key-signer.js";
import { SignerUnavailableError, type WalletSigner } from "../../src/signers/wallet-signer.js";

const DIGEST = keccak256(toUtf8Bytes("a transfer"));

describe("the signing pause", () => {
  it("refuses every signature while paused, as a signer that did not sign, and signs again once resumed", async () => {
    const key = Wallet.createRandom();
    const pause = new SigningPause();
    const signer = pausableSigner(localKeySigner(key.privateKey, "private-key"), pause);
    expect(signer.address).toBe(key.address);
    expect(recoverAddress(DIGEST, await signer.sign(DIGEST))).toBe(key.address);

    expect(pause.pause("an unexpected outflow, transaction 0xabc", "0xabc", new Date("2026-11-27T03:00:00Z"))).toBe(true);
    const refused = signer.sign(DIGEST);
    await expect(refused).rejects.toBeInstanceOf(SigningPausedError);
    // Whatever treats a signer that did not sign (nothing signed, the nonce given back) treats a pause the same.
    await expect(refused).rejects.toBeInstanceOf(SignerUnavailableError);
    await expect(refused).rejects.toThrow("signing is paused since 2026-11-27T03:00:00.000Z: an unexpected outflow, transaction 0xabc; an admin resumes it with POST /wallet/resume");

    expect(await pause.resume("admin-1", "0xabc")).toEqual({ since: "2026-11-27T03:00:00.000Z", reason: "an unexpected outflow, transaction 0xabc", hash: "0xabc", latestHash: "0xabc", outflows: 1 });
    expect(pause.paused).toBeUndefined();
    expect(recoverAddress(DIGEST, await signer.sign(DIGEST))).toBe(key.address);
    expect(await pause.resume("admin-1", "0xabc")).toBeUndefined();
  });

  it("keeps the first reason while paused and counts later outflows; a resume must name the latest, so that it ends no pause over one the admin has not seen", async () => {
    const pause = new SigningPause();
    expect(pause.pause("first", "0x01")).toBe(true);
    expect(pause.pause("second", "0x02")).toBe(false);
    expect(pause.paused).toMatchObject({ reason: "first", hash: "0x01", latestHash: "0x02", outflows: 2 });
    await expect(pause.resume("admin-1", "0x01")).rejects.toBeInstanceOf(PauseChangedError);
    expect(() => pause.assertSigning()).toThrow(SigningPausedError);
    expect(await pause.resume("admin-1", "0x02")).toMatchObject({ latestHash: "0x02", outflows: 2 });
    expect(pause.paused).toBeUndefined();
  });

  it("stays paused when another outflow is reported while the resume is being kept", async () => {
    let keepResume: () => void = () => undefined;
    const pause = new SigningPause();
    pause.keepIn({ current: () => undefined, paused: () => undefined, resumed: () => new Promise<void>((resolve) => (keepResume = resolve)) });
    pause.pause("first", "0x01");
    const resuming = pause.resume("admin-1", "0x01");
    pause.pause("during the resume", "0x02");
    keepResume();
    await expect(resuming).rejects.toBeInstanceOf(PauseChangedError);
    expect(pause.paused).toMatchObject({ latestHash: "0x02", outflows: 2 });
  });

  it("takes up the pause its store kept (an earlier process's) and keeps every change there; a resume the store cannot keep leaves it paused", async () => {
    const kept: string[] = [];
    let current: SigningPaused | undefined = { since: "2026-11-26T10:00:00.000Z", reason: "an unexpected outflow before the restart", hash: "0x01", latestHash: "0x01", outflows: 1 };
    let storeFails = false;
    const store: SigningPauseStore = {
      current: () => current,
      paused: (paused) => {
        kept.push(`paused: ${paused.reason}`);
        current = paused;
      },
      resumed: async (by) => {
        if (storeFails) throw new Error("the journal takes no writes");
        kept.push(`resumed by ${by}`);
        current = undefined;
      },
    };
    const pause = new SigningPause();
    pause.keepIn(store);
    expect(pause.paused).toMatchObject({ reason: "an unexpected outflow before the restart" });
    expect(() => pause.assertSigning()).toThrow(SigningPausedError);

    storeFails = true;
    await expect(pause.resume("admin-1", "0x01")).rejects.toThrow("the journal takes no writes");
    expect(pause.paused).toBeDefined();
    storeFails = false;
    expect(await pause.resume("admin-1", "0x01")).toMatchObject({ hash: "0x01" });
    expect(pause.pause("another outflow", "0x02")).toBe(true);
    expect(kept).toEqual(["resumed by admin-1", "paused: another outflow"]);

    // A process that starts after that keeps the new pause.
    const restarted = new SigningPause();
    restarted.keepIn(store);
    expect(restarted.paused).toMatchObject({ reason: "another outflow", hash: "0x02" });
  });

  it("never reaches the key while paused, and closes the signer it wraps", async () => {
    const calls: string[] = [];
    const inner: WalletSigner = {
      kind: "aws-kms",
      address: "0x0000000000000000000000000000000000000001",
      description: "a remote key",
      sign: async () => {
        calls.push("sign");
        throw new Error("not reached");
      },
      close: async () => {
        calls.push("close");
      },
    };
    const pause = new SigningPause();
    pause.pause("paused", null);
    const signer = pausableSigner(inner, pause);
    expect({ kind: signer.kind, description: signer.description }).toEqual({ kind: "aws-kms", description: "a remote key" });
    await expect(signer.sign(DIGEST)).rejects.toBeInstanceOf(SigningPausedError);
    await signer.close();
    expect(calls).toEqual(["close"]);
  });
});
