/**
 * RESUME_NEEDS_SECOND_ADMIN: a pause of signing ends only when a second admin, another person, confirms the
 * first's resume naming the same latest outflow; the asker (or another key of its holder) cannot; an ask
 * lapses after an hour, and when another outflow is reported.
 */
import { describe, expect, it } from "vitest";
import { KeyHolders } from "../../src/auth/key-holders.js";
import { RESUME_ASK_TTL_MS, SecondAdminNeededError, SecondAdminResume } from "../../src/signers/second-admin-resume.js";
import { PauseChangedError, SigningPause } from "../../src/signers/signing-pause.js";

const [ALICE_1, ALICE_2, BOB] = ["key_aaaaaaaaaaa1", "key_aaaaaaaaaaa2", "key_bbbbbbbbbbbb"];
const holders = KeyHolders.parse(`${ALICE_1}=alice,${ALICE_2}=alice`, [ALICE_1, ALICE_2, BOB]);
const [FIRST, SECOND] = [`0x${"1".repeat(64)}`, `0x${"2".repeat(64)}`];

function paused() {
  let now = 1_000_000;
  const signing = new SigningPause();
  signing.pause("an unexpected outflow", FIRST);
  const recorded: string[] = [];
  const resumes = new SecondAdminResume(signing, (keyId, other) => holders.samePerson(keyId, other), async (ask) => void recorded.push(ask.askedBy), () => now);
  return { signing, resumes, recorded, later: (ms: number) => (now += ms) };
}

describe("a resume that needs a second admin", () => {
  it("is asked by one admin and ends only when another person's admin confirms it; the asker's other key cannot", async () => {
    const { signing, resumes, recorded } = paused();
    const asked = await resumes.resume(ALICE_1, FIRST);
    expect(recorded).toEqual([ALICE_1]);
    expect(asked).toMatchObject({ asked: { askedBy: ALICE_1, latestHash: FIRST } });
    expect(signing.paused).toBeDefined();
    await expect(resumes.resume(ALICE_1, FIRST)).rejects.toBeInstanceOf(SecondAdminNeededError);
    await expect(resumes.resume(ALICE_2, FIRST)).rejects.toBeInstanceOf(SecondAdminNeededError);
    expect(signing.paused).toBeDefined();
    expect(await resumes.resume(BOB, FIRST)).toMatchObject({ resumed: { hash: FIRST } });
    expect(signing.paused).toBeUndefined();
  });

  it("lapses when another outflow is reported: the old hash is refused, and the new one asks afresh", async () => {
    const { signing, resumes } = paused();
    await resumes.resume(ALICE_1, FIRST);
    signing.pause("an unexpected outflow", SECOND);
    await expect(resumes.resume(BOB, FIRST)).rejects.toBeInstanceOf(PauseChangedError);
    expect(await resumes.resume(BOB, SECOND)).toMatchObject({ asked: { askedBy: BOB, latestHash: SECOND } });
    expect(await resumes.resume(ALICE_2, SECOND)).toMatchObject({ resumed: { latestHash: SECOND } });
  });

  it("holds an ask only once it is on record: one the record refused never stands", async () => {
    const signing = new SigningPause();
    signing.pause("an unexpected outflow", FIRST);
    let refuse = true;
    const resumes = new SecondAdminResume(signing, (keyId, other) => holders.samePerson(keyId, other), async () => {
      if (refuse) throw new Error("the journal takes no writes");
    });
    await expect(resumes.resume(ALICE_1, FIRST)).rejects.toThrow("the journal takes no writes");
    expect(resumes.asked).toBeUndefined();
    // Bob's call is an ask, not a confirmation of Alice's.
    refuse = false;
    expect(await resumes.resume(BOB, FIRST)).toMatchObject({ asked: { askedBy: BOB } });
    expect(signing.paused).toBeDefined();
  });

  it("lapses after an hour: the next call asks again", async () => {
    const { signing, resumes, later } = paused();
    await resumes.resume(ALICE_1, FIRST);
    later(RESUME_ASK_TTL_MS);
    expect(await resumes.resume(BOB, FIRST)).toMatchObject({ asked: { askedBy: BOB } });
    expect(signing.paused).toBeDefined();
  });
});
