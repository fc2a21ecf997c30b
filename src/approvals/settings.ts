/** Which transfers wait for an admin's approval (amounts, new recipients), and for how long. */
import { Type } from "@sinclair/typebox";
import { TOKEN_UNITS, TOKEN_UNITS_EXPECTED, settingsPart } from "../settings/settings-part.js";

export const APPROVAL_SETTINGS = settingsPart({
  schema: {
    approvalAbove: Type.Optional(Type.String({ pattern: TOKEN_UNITS, description: "a transfer or payout above this many token units waits (202) until another admin key approves it" })),
    approvalAbovePerDay: Type.Optional(
      Type.String({
        pattern: TOKEN_UNITS,
        description: "a transfer or payout that takes its API key's holder's last 24 hours (API_KEY_HOLDERS: all their keys) past this many token units waits (202) for an admin's approval too",
      }),
    ),
    addressBook: Type.Boolean({
      default: false,
      description: "transfers and payouts to a recipient not in the address book (POST /address-book) wait (202) for an admin's approval",
    }),
    addressBookCoolingOffHours: Type.Number({ minimum: 0, maximum: 720, default: 24, description: "hours after it was added before an address book entry pays without approval" }),
    approvalTtlHours: Type.Number({ exclusiveMinimum: 0, maximum: 720, default: 24, description: "how long a transfer waits for its approval before it expires (never sent)" }),
  },
  variables: {
    approvalAbove: "APPROVAL_ABOVE",
    approvalAbovePerDay: "APPROVAL_ABOVE_PER_DAY",
    addressBook: "ADDRESS_BOOK",
    addressBookCoolingOffHours: "ADDRESS_BOOK_COOLING_OFF_HOURS",
    approvalTtlHours: "APPROVAL_TTL_HOURS",
  },
  expectations: { approvalAbove: TOKEN_UNITS_EXPECTED, approvalAbovePerDay: TOKEN_UNITS_EXPECTED },
  /**
   * An approval needs an admin key to approve with, one that is not the key that asked: without API keys
   * (AUTH_DISABLED) every request is the same caller, who could never approve its own transfer.
   */
  check(raw, problems) {
    for (const [variable, value] of [["APPROVAL_ABOVE", raw.approvalAbove], ["APPROVAL_ABOVE_PER_DAY", raw.approvalAbovePerDay], ["ADDRESS_BOOK", raw.addressBook === "true" ? "true" : undefined]] as const) {
      if (value === undefined) continue;
      const problem = approvalKeysProblem({ apiKeys: typeof raw.apiKeys === "string" ? raw.apiKeys : undefined, authDisabled: raw.authDisabled === "true" });
      if (problem) problems.push(`${variable}: ${problem}`);
    }
  },
});

/** Why no transfer that waits for approval could ever be approved with these keys; undefined when one can (keys generated for a dev run are an admin's). */
export function approvalKeysProblem(keys: { apiKeys: string | undefined; authDisabled: boolean }): string | undefined {
  if (keys.authDisabled) return "needs API keys (with AUTH_DISABLED=true every request is the same caller, who may not approve its own transfer)";
  if (keys.apiKeys === undefined) return undefined;
  const admins = keys.apiKeys.split(",").filter((entry) => entry.trim().startsWith("admin:"));
  return admins.length === 0 ? "API_KEYS needs an admin key to approve transfers with (admin:<key>; two, for transfers an admin key asks for)" : undefined;
}
