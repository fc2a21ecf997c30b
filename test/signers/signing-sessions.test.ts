/** The sessions an HSM signer lends its signatures: one each, a queue beyond them, and a close that waits. */
import { describe, expect, it } from "vitest";
import { SigningSessions } from "../../src/signers/signing-sessions.js";
import { SignerUnavailableError } from "../../src/signers/wallet-signer.js";

const settled = async (promise: Promise<unknown>): Promise<boolean> => {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
};

describe("an HSM signer's sessions", () => {
  it("lends each session to one signature at a time and queues the rest in order", async () => {
    const sessions = new SigningSessions(["a", "b"]);
    const first = await sessions.take();
    const second = await sessions.take();
    expect(new Set([first, second])).toEqual(new Set(["a", "b"]));
    const third = sessions.take();
    const fourth = sessions.take();
    expect(await settled(third)).toBe(false);
    sessions.give(first);
    expect(await third).toBe(first);
    expect(await settled(fourth)).toBe(false);
    sessions.give(second);
    expect(await fourth).toBe(second);
  });

  it("closes at once when nothing is lent out, and refuses signatures from then on", async () => {
    const sessions = new SigningSessions(["a"]);
    sessions.give(await sessions.take());
    await sessions.close();
    await expect(sessions.take()).rejects.toBeInstanceOf(SignerUnavailableError);
  });

  it("waits for the signatures under way, refuses the queued ones, and closes once", async () => {
    const sessions = new SigningSessions(["a", "b"]);
    const first = await sessions.take();
    const second = await sessions.take();
    const queued = sessions.take();
    const closing = sessions.close();
    await expect(queued).rejects.toBeInstanceOf(SignerUnavailableError);
    expect(sessions.close()).toBe(closing);
    expect(await settled(closing)).toBe(false);
    sessions.give(first);
    expect(await settled(closing)).toBe(false);
    sessions.give(second);
    await closing;
    await expect(sessions.take()).rejects.toBeInstanceOf(SignerUnavailableError);
  });

  it("counts a session handed from one signature straight to a waiting one as still lent", async () => {
    const sessions = new SigningSessions(["a"]);
    const first = await sessions.take();
    const waiting = sessions.take();
    sessions.give(first);
    // Closed before the waiting signature has even resumed: the close waits for it.
    const closing = sessions.close();
    const handedOver = await waiting;
    expect(handedOver).toBe("a");
    expect(await settled(closing)).toBe(false);
    sessions.give(handedOver);
    await closing;
  });

  it("ignores a session given back twice: it is never lent to two signatures, and close still waits", async () => {
    const sessions = new SigningSessions(["a", "b"]);
    const first = await sessions.take();
    const second = await sessions.take();
    sessions.give(first);
    sessions.give(first);
    const again = await sessions.take();
    expect(again).toBe(first);
    const waiting = sessions.take();
    expect(await settled(waiting)).toBe(false);
    const closing = sessions.close();
    await expect(waiting).rejects.toBeInstanceOf(SignerUnavailableError);
    sessions.give(second);
    expect(await settled(closing)).toBe(false);
    sessions.give(again);
    await closing;
  });
});
