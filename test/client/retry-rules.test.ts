/** The client's retry rules (packages/client/src/retry-rules.ts), against docs/api.md's table of error codes. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { connectionFailureOf, retriesAnswer, retriesWithoutAnswer, retryDelayMs } from "../../packages/client/src/retry-rules.js";

/** The codes of docs/api.md's error table, with their status. */
function documentedCodes(): { statusCode: number; code: string }[] {
  const rows = readFileSync("docs/api.md", "utf8").split("\n").filter((line) => /^\| [45]\d\d \| `/.test(line));
  return rows.flatMap((row) => {
    const [, status, codes] = row.split("|");
    return [...codes.matchAll(/`([A-Z0-9_]+)`/g)].map((match) => ({ statusCode: Number(status), code: match[1] }));
  });
}

describe("the client's retry rules", () => {
  it("retries a transfer only on the answers whose docs say nothing was done or the key answers what was done", () => {
    const retried = documentedCodes().filter(({ statusCode, code }) => retriesAnswer("keyed", statusCode, code));
    expect(retried.map(({ code }) => code).sort()).toEqual(
      ["IDEMPOTENCY_KEY_IN_FLIGHT", "LEADER_UNAVAILABLE", "NETWORK_ERROR", "NETWORK_UNAVAILABLE", "NODE_RATE_LIMITED", "NO_LANE_AVAILABLE", "PAYOUT_APPROVAL_PENDING", "PAYOUT_ITEM_IN_FLIGHT", "RATE_LIMITED", "SERVER_ERROR", "SIGNER_UNAVAILABLE", "TIMEOUT", "TRANSFER_OUTCOME_UNKNOWN"].sort(),
    );
    // Every 417 is final: nothing was or will be sent.
    for (const { statusCode, code } of documentedCodes()) if (statusCode === 417) expect(retriesAnswer("keyed", statusCode, code), code).toBe(false);
  });

  it("retries an operator's action only where nothing reached the service, or the rate limit refused it", () => {
    expect(retriesAnswer("action", 409, "APPROVAL_DECIDED")).toBe(false);
    expect(retriesAnswer("action", 503, "SIGNER_UNAVAILABLE")).toBe(false);
    expect(retriesAnswer("action", 429, "RATE_LIMITED")).toBe(true);
    expect(retriesWithoutAnswer("action", "not-reached")).toBe(true);
    expect(retriesWithoutAnswer("action", "unknown-outcome")).toBe(false);
    expect(retriesWithoutAnswer("keyed", "unknown-outcome")).toBe(true);
    expect(retriesWithoutAnswer("read", "unknown-outcome")).toBe(true);
  });

  it("tells a refused connection from one that may have reached the service", () => {
    const refused = Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }) });
    const reset = Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) });
    expect(connectionFailureOf(refused)).toBe("not-reached");
    expect(connectionFailureOf(reset)).toBe("unknown-outcome");
    expect(connectionFailureOf(new DOMException("The operation timed out", "TimeoutError"))).toBe("unknown-outcome");
  });

  it("waits what Retry-After says, else doubling from 250 ms to 5 s", () => {
    expect(retryDelayMs(1, 5)).toBe(5_000);
    expect(retryDelayMs(1, undefined, () => 1)).toBe(250);
    expect(retryDelayMs(3, undefined, () => 1)).toBe(1_000);
    expect(retryDelayMs(9, undefined, () => 1)).toBe(5_000);
    expect(retryDelayMs(9, undefined, () => 0)).toBe(2_500);
  });
});
