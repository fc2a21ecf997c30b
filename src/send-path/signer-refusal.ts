/**
 * Background work that signs (a transfer signed again, a re-price, a nonce filled) may meet a signer that
 * does not sign: paused (PAUSE_ON_UNEXPECTED_OUTFLOW) or down (a KMS or HSM out of reach). What it would
 * have signed stays owed and is tried again at the next round; the rest of the round (following what was
 * mined, sending signed bytes again, reporting) must go on, so the refusal ends the step, not the round.
 */
import type { FastifyBaseLogger } from "fastify";
import { ServiceError } from "../errors.js";
import { SigningPausedError } from "../signers/signing-pause.js";
import { SignerUnavailableError } from "../signers/wallet-signer.js";

/**
 * What `work` resolves with; undefined when the signer refused (logged, but for a pause: that was logged
 * when it began). Any other failure is thrown.
 */
export async function unlessSignerRefuses<T>(work: Promise<T>, log: FastifyBaseLogger, what: string): Promise<T | undefined> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof SignerUnavailableError)) throw error;
    if (!(error instanceof SigningPausedError)) log.warn({ err: error }, `${what}: the signer did not sign; tried again at the next round`);
    return undefined;
  }
}

/**
 * A signer's refusal as the client is answered it (503: nothing was signed or sent, so a transfer's key stays
 * unused); undefined for any other error. The one place these answers are worded.
 */
export function signerRefusalAnswer(error: unknown): ServiceError | undefined {
  if (error instanceof SigningPausedError) return new ServiceError("SIGNING_PAUSED", `${error.message}; nothing was signed or sent`);
  if (error instanceof SignerUnavailableError) return new ServiceError("SIGNER_UNAVAILABLE", `${error.message}; nothing was signed or sent. Retry later.`, { logDetail: error.detail });
  return undefined;
}
