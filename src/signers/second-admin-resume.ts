/**
 * A resume of signing that takes two people (RESUME_NEEDS_SECOND_ADMIN): the first admin's POST
 * /wallet/resume asks, and a second admin of another person (API_KEY_HOLDERS) naming the same latest outflow
 * ends the pause. A thief who holds one admin key, or one person with two, cannot end a pause alone. An ask
 * lapses after RESUME_ASK_TTL_MS, and when another outflow is reported (it named the one before).
 */
import { steadyWallClockNow } from "../clock.js";
import type { PauseChangedError, SigningPause, SigningPaused } from "./signing-pause.js";

/** How long the first admin's ask waits for a second admin. */
export const RESUME_ASK_TTL_MS = 3_600_000;

/** The first admin's ask, waiting for the second. */
export interface ResumeAsk {
  askedBy: string;
  /** ms, wall clock. */
  askedAt: number;
  expiresAt: number;
  latestHash: string;
}

/** The second admin is the person who asked (the same key, or another key of its holder): nothing was resumed. */
export class SecondAdminNeededError extends Error {
  override name = "SecondAdminNeededError";
}

export type ResumeOutcome = { resumed: SigningPaused | undefined } | { asked: ResumeAsk };

export class SecondAdminResume {
  #asked: ResumeAsk | undefined;

  constructor(
    private readonly signing: Pick<SigningPause, "paused" | "resume" | "checkLatest">,
    private readonly samePerson: (keyId: string, other: string) => boolean,
    /** Keeps an ask on record (the audit log) before it stands: it resolves once that is durable. */
    private readonly recordAsk: (ask: ResumeAsk) => Promise<void>,
    private readonly now: () => number = steadyWallClockNow,
  ) {}

  /** The ask waiting for a second admin, while it holds. */
  get asked(): ResumeAsk | undefined {
    const asked = this.#asked;
    const latest = this.signing.paused?.latestHash ?? "none";
    if (asked && (asked.expiresAt <= this.now() || asked.latestHash !== latest.toLowerCase())) this.#asked = undefined;
    return this.#asked;
  }

  /**
   * The first admin's call asks; another person's, naming the same latest outflow, resumes. Throws
   * PauseChangedError ({@link PauseChangedError}) for another latest outflow, SecondAdminNeededError for the
   * asker again.
   */
  async resume(by: string, latestHash: string): Promise<ResumeOutcome> {
    if (!this.signing.paused) return { resumed: undefined };
    this.signing.checkLatest(latestHash);
    const asked = this.asked;
    if (!asked) {
      const askedAt = this.now();
      const ask = { askedBy: by, askedAt, expiresAt: askedAt + RESUME_ASK_TTL_MS, latestHash: latestHash.toLowerCase() };
      // On record first: an ask the audit log does not hold never stands.
      await this.recordAsk(ask);
      this.#asked = ask;
      return { asked: ask };
    }
    if (this.samePerson(asked.askedBy, by)) throw new SecondAdminNeededError(`${by} asked for this resume already (or another key of its holder did): a second admin, another person, must confirm it`);
    const resumed = await this.signing.resume(by, latestHash);
    this.#asked = undefined;
    return { resumed };
  }
}
