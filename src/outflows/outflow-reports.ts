/**
 * What the service does with an unexpected outflow the watch found, on any network: journals it once (a
 * restart or a new leader that finds it again says nothing more), logs it, keeps it for /wallet and the
 * metric, stops signing (PAUSE_ON_UNEXPECTED_OUTFLOW), and journals its webhook event. And where the pause
 * is kept: the journal, so that a restart or a new leader takes it up.
 */
import type { FastifyBaseLogger } from "fastify";
import { steadyWallClockNow } from "../clock.js";
import type { TransferJournal } from "../journal/transfer-journal.js";
import type { SigningPause, SigningPauseStore } from "../signers/signing-pause.js";
import { outflowEvent } from "./outflow-event.js";
import type { UnexpectedOutflow } from "./outflow-watch.js";
import type { ReportedOutflow, UnexpectedOutflows } from "./unexpected-outflows.js";

export interface OutflowReportParts {
  journal: Pick<TransferJournal, "recordOutflow" | "recordEvent" | "recordAudit">;
  signing: SigningPause;
  /** What /wallet and the metric show. */
  outflows: UnexpectedOutflows;
  /** PAUSE_ON_UNEXPECTED_OUTFLOW. */
  pauseOnOutflow: boolean;
  /** The webhook endpoints (none: no event). */
  endpoints: readonly string[];
  /** Told that an event was journaled: the dispatcher looks for due deliveries at once. */
  onEvent: () => void;
}

/** The report of one network's outflows: `network` names it in every report and log line. */
export function outflowReporter(parts: OutflowReportParts, network: { name: string; chainId: number }, log: FastifyBaseLogger): (outflow: UnexpectedOutflow) => void {
  const { journal, signing, outflows, pauseOnOutflow, endpoints, onEvent } = parts;
  // A journal that takes no writes cannot tell: the outflow is reported (an alarm twice is better than none).
  const isNew = (reported: ReportedOutflow) => {
    try {
      const { hash, logIndex, logKey, wallet, block } = reported;
      return journal.recordOutflow({ chainId: String(network.chainId), hash, logIndex, logKey, wallet, blockNumber: block.number, detectedAt: Date.parse(reported.detectedAt) });
    } catch (error) {
      log.error({ err: error, hash: reported.hash }, "could not journal an unexpected outflow; reporting it");
      return true;
    }
  };
  // Stops signing (it stays stopped in this process when the journal cannot keep it: that is said, not thrown).
  const pause = (reported: ReportedOutflow) => {
    let begins = true;
    try {
      begins = signing.pause(`an unexpected outflow, transaction ${reported.hash} from ${reported.wallet} on ${network.name}`, reported.hash);
    } catch (error) {
      log.error({ err: error }, "could not journal the signing pause: it holds in this process only");
    }
    if (begins) log.error({ hash: reported.hash }, "SIGNING PAUSED (PAUSE_ON_UNEXPECTED_OUTFLOW): nothing is signed until an admin resumes with POST /wallet/resume");
  };
  // Journaled like a transfer's events (a restart delivers what it had not). A journal that fails takes no
  // more writes at all (the service sends nothing then); the report in /wallet, the metric and the log stand.
  const journalEvent = (reported: ReportedOutflow) => {
    try {
      journal.recordEvent(outflowEvent(reported, signing.paused !== undefined), endpoints);
      onEvent();
    } catch (error) {
      log.error({ err: error, hash: reported.hash }, "could not journal the wallet.unexpected_outflow webhook event");
    }
  };
  // In the audit log, in the commit that journals it.
  const audit = (reported: ReportedOutflow) => {
    try {
      const { wallet, hash, block, nonce, token, logIndex, to, amount, code } = reported;
      journal.recordAudit({ kind: "wallet.unexpected_outflow", actor: null, detail: { network: network.name, chainId: network.chainId, wallet, hash, block, nonce, token, logIndex, to, amount, code } });
    } catch (error) {
      log.error({ err: error, hash: reported.hash }, "could not enter an unexpected outflow in the audit log");
    }
  };
  return (outflow) => {
    const reported = { ...outflow, network: network.name, chainId: network.chainId, detectedAt: new Date().toISOString() };
    // Reported once: an earlier process (or leader) that reported it has paged, paused and sent the webhook.
    if (!isNew(reported)) return;
    audit(reported);
    if (reported.otherToken) {
      log.warn({ outflow: reported }, "a Transfer out of the wallet of a contract this network does not pay in, not made by this service: a token the wallet holds, moved by a spender or a permit, or a fake token's log (anyone can emit one): signing goes on");
    } else {
      log.error({ outflow: reported }, "UNEXPECTED OUTFLOW: a transaction or token transfer out of the wallet that this service never made (is the key used elsewhere, or compromised?)");
    }
    outflows.record(reported);
    // A Transfer of a contract the network does not pay in proves nothing of the key: anyone can emit one.
    if (pauseOnOutflow && !reported.otherToken) pause(reported);
    if (endpoints.length > 0) journalEvent(reported);
  };
}

/** The journal as the signing pause's store: times as ms there, ISO in the pause; a resume answers once committed. */
export function journaledPause(journal: Pick<TransferJournal, "signingPause" | "recordSigningPaused" | "recordSigningResumed" | "flushed">): SigningPauseStore {
  return {
    current: () => {
      const kept = journal.signingPause();
      return kept && { ...kept, since: new Date(kept.since).toISOString() };
    },
    paused: (pause) => journal.recordSigningPaused({ ...pause, since: Date.parse(pause.since) }),
    resumed: async (by) => {
      journal.recordSigningResumed(by, steadyWallClockNow());
      await journal.flushed();
    },
  };
}
