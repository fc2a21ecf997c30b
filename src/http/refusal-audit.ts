/**
 * Refusals of a control, in the audit log: who tried what a control stopped (a route its key's role may
 * not call, an approval by the key or person that asked, a resume over an outflow the admin had not seen).
 * The same refusal (key, route, code) is entered once a minute at most, with how many times it came again
 * in the minute before: a key calling a route it may not in a loop cannot grow the log by its rate limit.
 */
import type { FastifyInstance } from "fastify";
import type { TransferJournal } from "../journal/transfer-journal.js";
import { steadyWallClockNow } from "../clock.js";
import { ServiceError } from "../errors.js";

/** The codes of refused control actions that the audit log keeps (a re-price past its limit is audited by its route). */
const AUDITED_REFUSALS: ReadonlySet<string> = new Set(["FORBIDDEN_FOR_ROLE", "APPROVER_IS_REQUESTER", "PAUSE_CHANGED", "RESUME_NEEDS_SECOND_ADMIN"]);

/** How long the same refusal is counted instead of entered again. */
const REPEATS_WINDOW_MS = 60_000;
/** Refusals remembered for their repeats; the oldest forgotten first. */
const REMEMBERED = 1_000;

/** Enters every request refused with one of AUDITED_REFUSALS as `operator.refused`: the key, the route, the code. */
export function auditRefusedControls(app: FastifyInstance, journal: Pick<TransferJournal, "recordAudit">, now: () => number = steadyWallClockNow): void {
  // (key, route, code) -> when it was last entered, and how many times it came again since.
  const entered = new Map<string, { at: number; repeats: number }>();
  app.addHook("onError", (request, _reply, error, done) => {
    if (error instanceof ServiceError && AUDITED_REFUSALS.has(error.code)) {
      const params = request.params as Record<string, string> | undefined;
      const route = `${request.method} ${request.routeOptions.url ?? request.url.split("?")[0]}`;
      const transferId = params?.id !== undefined && /^[0-9]+$/.test(params.id) ? Number(params.id) : null;
      // Not by transfer id: a loop over ids is the same refusal again.
      const key = `${request.apiKeyId}|${route}|${error.code}`;
      const last = entered.get(key);
      if (last && now() - last.at < REPEATS_WINDOW_MS) {
        last.repeats++;
        return done();
      }
      entered.delete(key);
      entered.set(key, { at: now(), repeats: 0 });
      if (entered.size > REMEMBERED) entered.delete(entered.keys().next().value as string);
      try {
        journal.recordAudit({
          kind: "operator.refused",
          actor: request.apiKeyId || null,
          transferId,
          detail: { code: error.code, route, role: request.apiKeyRole, ...(last && last.repeats > 0 && { repeatedBefore: last.repeats }) },
        });
      } catch (failure) {
        // A journal that takes no writes refuses everything else too; the refusal is in the request's log line.
        request.log.error({ err: failure }, "could not enter a refused control action in the audit log");
      }
    }
    done();
  });
}
