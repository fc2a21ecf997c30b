/**
 * Refusals of a control, in the audit log: who tried what a control stopped (a route its key's role may
 * not call, an approval by the key or person that asked, a resume over an outflow the admin had not seen).
 * Bounded by the rate limit per key, as every request is.
 */
import type { FastifyInstance } from "fastify";
import type { TransferJournal } from "../journal/transfer-journal.js";
import { ServiceError } from "../errors.js";

/** The codes of refused control actions that the audit log keeps (a re-price past its limit is audited by its route). */
const AUDITED_REFUSALS: ReadonlySet<string> = new Set(["FORBIDDEN_FOR_ROLE", "APPROVER_IS_REQUESTER", "PAUSE_CHANGED", "RESUME_NEEDS_SECOND_ADMIN"]);

/** Enters every request refused with one of AUDITED_REFUSALS as `operator.refused`: the key, the route, the code. */
export function auditRefusedControls(app: FastifyInstance, journal: Pick<TransferJournal, "recordAudit">): void {
  app.addHook("onError", (request, _reply, error, done) => {
    if (error instanceof ServiceError && AUDITED_REFUSALS.has(error.code)) {
      const params = request.params as Record<string, string> | undefined;
      try {
        journal.recordAudit({
          kind: "operator.refused",
          actor: request.apiKeyId || null,
          transferId: params?.id !== undefined && /^[0-9]+$/.test(params.id) ? Number(params.id) : null,
          detail: { code: error.code, route: `${request.method} ${request.routeOptions.url ?? request.url.split("?")[0]}`, role: request.apiKeyRole },
        });
      } catch (failure) {
        // A journal that takes no writes refuses everything else too; the refusal is in the request's log line.
        request.log.error({ err: failure }, "could not enter a refused control action in the audit log");
      }
    }
    done();
  });
}
