/**
 * How one of several JSON-RPC endpoints of a chain is doing, scored from the calls the service makes anyway:
 * its faults (time-outs, refused or reset connections, HTTP 5xx and 429), its latency, and its head against
 * the highest head any endpoint has shown. An endpoint that faults too often, is rate-limited, or lags is left
 * out of rotation until a probe finds it well again (see endpoint-set.ts).
 */
import { monotonicNow } from "../clock.js";

/** in: takes reads and broadcasts; failing: left out after faults; lagging: left out, its head too far behind. */
export type EndpointState = "in" | "failing" | "lagging";

/** What went wrong with a call, as far as the endpoint's health goes. */
export type EndpointFault = "time-out" | "rate-limited" | "no-answer" | "refused";

/** Faults within this window that leave an endpoint out (OpenZeppelin Relayer pauses after 3 in 60 s). */
export const FAULTS_TO_LEAVE_OUT = 3;
export const FAULT_WINDOW_MS = 60_000;
/** An endpoint left out is probed again this long after it was left out or last probed. */
export const PROBE_AFTER_MS = 30_000;
// The weight of the newest call in the latency average.
const LATENCY_WEIGHT = 0.2;

/** One endpoint's figures, for /wallet and /metrics. */
export interface EndpointReport {
  /** Protocol and host only: the path and query of a provider's URL carry its key. */
  endpoint: string;
  state: EndpointState;
  /** Why it is left out (the last fault, or its lag); null while in rotation. */
  reason: string | null;
  /** The highest head seen from any endpoint minus this endpoint's head, when it last showed one. */
  headLagBlocks: number | null;
  calls: number;
  faults: number;
  /** Average latency of its recent calls, milliseconds; null before the first. */
  latencyMs: number | null;
}

export class EndpointHealth {
  #state: EndpointState = "in";
  #reason: string | null = null;
  #recentFaults: number[] = [];
  #head: number | undefined;
  #lag: number | undefined;
  #latencyMs: number | undefined;
  #calls = 0;
  #faults = 0;
  /** When a probe is due, while left out. */
  #probeAt = 0;

  constructor(
    readonly endpoint: string,
    private readonly onChange: (endpoint: string, state: EndpointState, reason: string | null) => void = () => {},
    private readonly now: () => number = monotonicNow,
    /** False for the only endpoint: it is used whatever its health (as a single RPC_URL always was). */
    private readonly leavesOut = true,
  ) {}

  get state(): EndpointState {
    return this.#state;
  }

  /** The head this endpoint last showed; undefined before it showed one. */
  get head(): number | undefined {
    return this.#head;
  }

  /** How far its head was behind the highest head when it last showed one (0 before it showed one). */
  get lagBlocks(): number {
    return this.#lag ?? 0;
  }

  /** True while left out and a probe is due. */
  get probeDue(): boolean {
    return this.#state !== "in" && this.now() >= this.#probeAt;
  }

  /** A call was answered (a result or the node's own error: both say the endpoint works). */
  recordAnswer(latencyMs: number): void {
    this.#calls++;
    this.#latencyMs = this.#latencyMs === undefined ? latencyMs : this.#latencyMs + LATENCY_WEIGHT * (latencyMs - this.#latencyMs);
  }

  /** A call got no usable answer. A rate limit leaves the endpoint out at once; other faults when they pile up. */
  recordFault(fault: EndpointFault, latencyMs: number): void {
    this.#calls++;
    this.#faults++;
    if (fault !== "refused") this.#latencyMs = this.#latencyMs === undefined ? latencyMs : this.#latencyMs + LATENCY_WEIGHT * (latencyMs - this.#latencyMs);
    const now = this.now();
    this.#recentFaults = [...this.#recentFaults.filter((at) => now - at < FAULT_WINDOW_MS), now].slice(-FAULTS_TO_LEAVE_OUT);
    if (this.#state === "in" && (fault === "rate-limited" || this.#recentFaults.length >= FAULTS_TO_LEAVE_OUT)) {
      this.#leaveOut("failing", fault === "rate-limited" ? "rate-limited (HTTP 429, or a rate limit in JSON-RPC words)" : `${FAULTS_TO_LEAVE_OUT} faults in ${FAULT_WINDOW_MS / 1000} s, the last: ${fault}`);
    }
  }

  /**
   * The endpoint showed head `head`, while the highest head any endpoint has shown is `highest`. Behind by
   * more than `maxLagBlocks`, it is left out; an endpoint left out for its lag comes back once it caught up.
   */
  recordHead(head: number, highest: number, maxLagBlocks: number): void {
    this.#head = head;
    this.#lag = Math.max(0, highest - head);
    if (this.#lag > maxLagBlocks && this.#state === "in") this.#leaveOut("lagging", `head ${this.#lag} blocks behind the highest`);
    else if (this.#state === "lagging" && this.#lag <= maxLagBlocks) this.#comeBack();
  }

  /** A probe of an endpoint left out: it answered (and its head was recorded), or it did not. */
  recordProbe(answered: boolean, maxLagBlocks: number): void {
    if (this.#state === "in") return;
    if (answered && this.lagBlocks <= maxLagBlocks) return this.#comeBack();
    if (answered && this.#state === "failing") return this.#leaveOut("lagging", `head ${this.lagBlocks} blocks behind the highest`);
    this.#probeAt = this.now() + PROBE_AFTER_MS;
  }

  /** The endpoint serves another chain than the others: it stays out, and is asked again later. */
  recordWrongChain(chainId: bigint): void {
    if (this.#state === "in") this.#leaveOut("failing", `serves chain ${chainId}`);
    else {
      this.#reason = `serves chain ${chainId}`;
      this.#probeAt = this.now() + PROBE_AFTER_MS;
    }
  }

  /** Leaves the endpoint out as failing, for `reason` (it did not answer at startup). */
  leaveOut(reason: string): void {
    if (this.#state === "in") this.#leaveOut("failing", reason);
  }

  report(): EndpointReport {
    return {
      endpoint: this.endpoint,
      state: this.#state,
      reason: this.#reason,
      headLagBlocks: this.#lag ?? null,
      calls: this.#calls,
      faults: this.#faults,
      latencyMs: this.#latencyMs === undefined ? null : Math.round(this.#latencyMs * 10) / 10,
    };
  }

  #leaveOut(state: "failing" | "lagging", reason: string): void {
    if (!this.leavesOut) return;
    this.#state = state;
    this.#reason = reason;
    this.#probeAt = this.now() + PROBE_AFTER_MS;
    this.onChange(this.endpoint, state, reason);
  }

  #comeBack(): void {
    this.#state = "in";
    this.#reason = null;
    this.#recentFaults = [];
    this.onChange(this.endpoint, "in", null);
  }
}
