/** The watch for money leaving the wallets that the service did not send, and the pause of signing it may trigger. */
import { Type } from "@sinclair/typebox";
import { ApiKeyRing } from "../auth/api-keys.js";
import { KeyHolders } from "../auth/key-holders.js";
import { type RawSettings, settingsPart } from "../settings/settings-part.js";

export const OUTFLOW_SETTINGS = settingsPart({
  schema: {
    outflowCheckIntervalMs: Type.Integer({
      minimum: 0,
      maximum: 3_600_000,
      default: 5000,
      description: "how often each network's wallets are checked for transactions and token transfers the service never made (4 x this while the service sends nothing); 0: never",
    }),
    pauseOnUnexpectedOutflow: Type.Boolean({
      default: false,
      description: "stop signing (new transfers answered 503 SIGNING_PAUSED) when an unexpected outflow is seen, until an admin resumes with POST /wallet/resume",
    }),
    resumeNeedsSecondAdmin: Type.Boolean({
      default: false,
      description: "a pause of signing ends only when a second admin, another person (API_KEY_HOLDERS), confirms the first's POST /wallet/resume within an hour",
    }),
  },
  variables: {
    outflowCheckIntervalMs: "OUTFLOW_CHECK_INTERVAL_MS",
    pauseOnUnexpectedOutflow: "PAUSE_ON_UNEXPECTED_OUTFLOW",
    resumeNeedsSecondAdmin: "RESUME_NEEDS_SECOND_ADMIN",
  },
  check(raw, problems) {
    if (raw.resumeNeedsSecondAdmin === "true") {
      const problem = secondAdminProblem(raw);
      if (problem) problems.push(`RESUME_NEEDS_SECOND_ADMIN: ${problem}`);
    }
    if (raw.pauseOnUnexpectedOutflow === "true" && raw.outflowCheckIntervalMs === "0") {
      problems.push("PAUSE_ON_UNEXPECTED_OUTFLOW: needs the outflow watch, which OUTFLOW_CHECK_INTERVAL_MS=0 turns off");
    }
  },
});

// Two admins of two people, or a pause could never end.
function secondAdminProblem(raw: RawSettings): string | undefined {
  if (raw.authDisabled === "true") return "needs API keys (with AUTH_DISABLED=true every request is the same caller)";
  if (typeof raw.apiKeys !== "string") return "needs API_KEYS with admin keys of two people";
  try {
    const ring = ApiKeyRing.parse(raw.apiKeys);
    const holders = KeyHolders.parse(typeof raw.apiKeyHolders === "string" ? raw.apiKeyHolders : undefined, ring.ids);
    const people = new Set(ring.keys.filter((key) => key.role === "admin").map((key) => holders.personOf(key.id)));
    return people.size >= 2 ? undefined : "needs admin keys of two people in API_KEYS (and API_KEY_HOLDERS): a pause could never end";
  } catch {
    // API_KEYS or API_KEY_HOLDERS is malformed: said for that variable.
    return undefined;
  }
}
