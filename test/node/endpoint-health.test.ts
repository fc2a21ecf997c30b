/** The health rules of one RPC endpoint among several: when it is left out, and when it comes back. */
import { describe, expect, it } from "vitest";
import { EndpointHealth, FAULT_WINDOW_MS, PROBE_AFTER_MS } from "../../src/node/endpoint-health.js";

function healthAt(clock: { now: number }, leavesOut = true) {
  const changes: string[] = [];
  const health = new EndpointHealth("https://a.example", (_endpoint, state, reason) => changes.push(`${state}${reason ? `: ${reason}` : ""}`), () => clock.now, leavesOut);
  return { health, changes };
}

describe("an RPC endpoint's health", () => {
  it("stays in after two faults, and is left out at the third within 60 s", () => {
    const clock = { now: 0 };
    const { health, changes } = healthAt(clock);
    health.recordFault("refused", 1);
    clock.now += 10_000;
    health.recordFault("time-out", 10_000);
    expect(health.state).toBe("in");
    health.recordFault("no-answer", 5);
    expect(health.state).toBe("failing");
    expect(changes).toEqual(["failing: 3 faults in 60 s, the last: no-answer"]);
    expect(health.report()).toMatchObject({ calls: 3, faults: 3, reason: "3 faults in 60 s, the last: no-answer" });
  });

  it("forgets faults older than the window", () => {
    const clock = { now: 0 };
    const { health } = healthAt(clock);
    health.recordFault("refused", 1);
    health.recordFault("refused", 1);
    clock.now += FAULT_WINDOW_MS;
    health.recordFault("refused", 1);
    expect(health.state).toBe("in");
  });

  it("is left out at once when rate-limited", () => {
    const { health } = healthAt({ now: 0 });
    health.recordFault("rate-limited", 3);
    expect(health.report()).toMatchObject({ state: "failing", reason: "rate-limited (HTTP 429, or a rate limit in JSON-RPC words)" });
  });

  it("is probed only after PROBE_AFTER_MS, and comes back when the probe is answered near the head", () => {
    const clock = { now: 0 };
    const { health, changes } = healthAt(clock);
    health.recordFault("rate-limited", 3);
    expect(health.probeDue).toBe(false);
    clock.now += PROBE_AFTER_MS;
    expect(health.probeDue).toBe(true);
    health.recordProbe(false, 5);
    expect(health.probeDue).toBe(false);
    clock.now += PROBE_AFTER_MS;
    health.recordHead(100, 102, 5);
    health.recordProbe(true, 5);
    expect(health.state).toBe("in");
    expect(changes).toEqual(["failing: rate-limited (HTTP 429, or a rate limit in JSON-RPC words)", "in"]);
  });

  it("is left out while its head is more than the allowed lag behind the highest, and back once it caught up", () => {
    const { health, changes } = healthAt({ now: 0 });
    health.recordHead(95, 100, 5);
    expect(health.state).toBe("in");
    health.recordHead(90, 101, 5);
    expect(health.report()).toMatchObject({ state: "lagging", headLagBlocks: 11, reason: "head 11 blocks behind the highest" });
    health.recordHead(99, 102, 5);
    expect(health.state).toBe("in");
    expect(changes).toEqual(["lagging: head 11 blocks behind the highest", "in"]);
  });

  it("a failing endpoint that answers its probe from far behind is left out as lagging", () => {
    const clock = { now: 0 };
    const { health } = healthAt(clock);
    health.recordFault("rate-limited", 1);
    clock.now += PROBE_AFTER_MS;
    health.recordHead(80, 100, 5);
    health.recordProbe(true, 5);
    expect(health.state).toBe("lagging");
  });

  it("the only endpoint is never left out, whatever it does", () => {
    const { health, changes } = healthAt({ now: 0 }, false);
    for (let fault = 0; fault < 5; fault++) health.recordFault("refused", 1);
    health.recordFault("rate-limited", 1);
    health.recordHead(1, 100, 5);
    health.leaveOut("did not answer");
    expect(health.state).toBe("in");
    expect(changes).toEqual([]);
  });

  it("averages latency, weighting the newest call", () => {
    const { health } = healthAt({ now: 0 });
    health.recordAnswer(100);
    health.recordAnswer(200);
    expect(health.report().latencyMs).toBe(120);
  });
});
