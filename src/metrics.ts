/** Prometheus metrics (prom-client), on a registry of the app's own so tests can build many apps. */
import { Counter, Gauge, Histogram, type Metric, Registry, collectDefaultMetrics } from "prom-client";
import { steadyWallClockNow } from "./clock.js";
import type { EndpointReport } from "./node/endpoint-health.js";
import type { RpcObserver } from "./node/rpc-provider.js";

/** What the wallet gauges of one network read at scrape time (the network's first lane: "the wallet"). */
export interface WalletReadings {
  /** The label of its series: the network's name. */
  network: string;
  ethBalanceWei: () => bigint;
  /** Every token the network pays in (its native coin too), labelled with its symbol. */
  tokens: readonly { token: string; decimals: number; balanceUnits: () => bigint }[];
  transfersInFlight: () => number;
  /** What one more transfer may cost in ETH at the current fees: gas allowance x fee cap, plus any L1 data fee. */
  gasCostPerTransferWei: () => bigint;
  /** The unconfirmed transfers as operators watch them (see send-path/unconfirmed-transfers.ts). */
  unconfirmed: () => { oldestAgeSeconds: number; stuck: number; jammed: boolean };
  /** Transfers waiting underpriced while the fee caps allow nothing higher. */
  atFeeCap: () => number;
  /** What its wallets spent in fees in the last 24 hours, and FEE_BUDGET_PER_DAY (undefined: none set), wei. */
  feesOfDay: () => { spentWei: bigint; budgetWei: bigint | undefined };
}

/** What the gauges of one lane of a wallet pool read at scrape time (one wallet: one lane), on one network. */
export interface LaneReadings {
  /** The network's name: a lane's address is the same on every network. */
  network: string;
  address: string;
  tokenDecimals: number;
  ethBalanceWei: () => bigint;
  tokenBalanceUnits: () => bigint;
  transfersInFlight: () => number;
  jammed: () => boolean;
  /** Why the lane takes no new transfers (jammed, stuck, gas-below-floor, in-flight-limit), if it takes none. */
  hold: () => string | undefined;
  /** ETH the wallet's balance went down by since the service started: gas, for a wallet that only sends tokens. */
  gasSpentWei: () => bigint;
  /** Gas top-ups sent to the lane since the service started (GAS_TOPUP_*). */
  gasTopUps: () => number;
  /** Nonces the chain counts used whose user no block body where it could be holds, since the service started. */
  unexplainedNonces: () => number;
}

/** The reasons a lane can be held for, each a series of lane_held. */
const LANE_HOLDS = ["jammed", "stuck", "gas-below-floor", "in-flight-limit"];

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #http = new HttpRequestSeries(
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    this.registry,
  );
  readonly #transfers = new Counter({
    name: "transfers_total",
    help: "POST /transfer outcomes: sent, awaiting_approval (202, above APPROVAL_ABOVE), replayed (repeated Idempotency-Key) or refused, with the error code",
    labelNames: ["outcome", "code"],
    registers: [this.registry],
  });
  readonly #rpcRequests = new Counter({
    name: "rpc_requests_total",
    help: "JSON-RPC calls to the node by method and outcome (each call of a batch counts)",
    labelNames: ["method", "outcome"],
    registers: [this.registry],
  });
  readonly #endpointRequests = new Counter({
    name: "rpc_endpoint_requests_total",
    help: "JSON-RPC calls by endpoint (protocol and host of each RPC_URL endpoint) and outcome, each call of a batch counted: what each provider bills",
    labelNames: ["endpoint", "outcome"],
    registers: [this.registry],
  });
  readonly #tokensSent = new Counter({
    name: "transfer_tokens_sent_total",
    help: "tokens sent by transfers answered 200, whole token units, by network and token",
    labelNames: ["network", "token"],
    registers: [this.registry],
  });
  readonly #webhookDeliveries = new Counter({
    name: "webhook_deliveries_total",
    help: "webhook delivery attempts by outcome: delivered (2xx), retrying (another answer or none; tried again later), failed (410 Gone, or given up after 24 h)",
    labelNames: ["outcome"],
    registers: [this.registry],
  });
  readonly #rpcLastSuccess = new Gauge({
    name: "rpc_last_success_timestamp_seconds",
    help: "when the node last answered a request (Unix time, seconds); the service reads a block at least every 5 s",
    registers: [this.registry],
  });
  readonly #rpcDuration = new Histogram({
    name: "rpc_request_duration_seconds",
    help: "JSON-RPC request latency by method",
    labelNames: ["method"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  readonly observeRpc: RpcObserver = (method, outcome, seconds, endpoint) => {
    this.#rpcRequests.inc({ method, outcome });
    this.#endpointRequests.inc({ endpoint, outcome });
    this.#rpcDuration.observe({ method }, seconds);
    if (outcome !== "transport_error") this.#rpcLastSuccess.set(Date.now() / 1000);
  };

  observeHttp(route: string, method: string, status: number, seconds: number): void {
    this.#http.observe(route, method, status, seconds);
  }

  countTransfer(outcome: "sent" | "awaiting_approval" | "replayed" | "refused", code = ""): void {
    this.#transfers.inc({ outcome, code });
  }

  countTokensSent(tokens: number, labels: { network: string; token: string }): void {
    this.#tokensSent.inc(labels, tokens);
  }

  countWebhookDelivery(outcome: "delivered" | "retrying" | "failed"): void {
    this.#webhookDeliveries.inc({ outcome });
  }

  /** Registers the unexpected outflows' gauge (per network and wallet), read at every scrape. */
  watchOutflows(counts: () => readonly { network: string; wallet: string; count: number }[]): void {
    this.#gaugePerItem(
      "wallet_unexpected_outflows",
      "transactions and token transfers out of a wallet that this service never made, seen since this process started (the key used elsewhere, or compromised)",
      ["network", "wallet"],
      counts,
      ({ network, wallet }) => ({ network, wallet }),
      ({ count }) => count,
    );
  }

  /** Registers the gauges of the audit log's head as last published (AUDIT_HEAD_INTERVAL_MS): absent before the first. */
  watchAuditHead(published: () => { seq: number; hash: string; keyed: boolean; publishedAt: number } | undefined): void {
    const heads = () => {
      const head = published();
      return head ? [head] : [];
    };
    this.#gaugePerItem("audit_head_seq", "the audit log's last entry as last published outside the database; its hash is the label (npm run audit:verify -- --expect <seq>:<hash>)", ["hash", "keyed"], heads, ({ hash, keyed }) => ({ hash, keyed: String(keyed) }), ({ seq }) => seq);
    this.#gaugePerItem("audit_head_published_timestamp_seconds", "when the audit log's head was last published (unix seconds)", [], heads, () => ({}), ({ publishedAt }) => publishedAt / 1000);
  }

  /** Registers the gauge of the signing pause (PAUSE_ON_UNEXPECTED_OUTFLOW): 1 while nothing is signed. */
  watchSigningPause(paused: () => boolean): void {
    this.#gauge("wallet_signing_paused", "1 while the service signs nothing after an unexpected outflow (PAUSE_ON_UNEXPECTED_OUTFLOW) until an admin resumes; 0 otherwise", () => (paused() ? 1 : 0));
  }

  /** Registers the webhook backlog gauges, read from the journal at every scrape. */
  watchWebhooks(backlog: () => { pending: number; oldestCreatedAt: number | null }): void {
    this.#gauge("webhook_backlog", "webhook deliveries pending (not yet accepted by their endpoint)", () => backlog().pending);
    this.#gauge("webhook_oldest_pending_age_seconds", "age of the oldest pending webhook delivery, seconds (0 when there is none)", () => {
      const { oldestCreatedAt } = backlog();
      return oldestCreatedAt === null ? 0 : Math.max(0, (steadyWallClockNow() - oldestCreatedAt) / 1000);
    });
  }

  /** Registers the gauges of every network's RPC endpoints (labelled by network and host), read from their health at every scrape. */
  watchEndpoints(networks: () => readonly { network: string; reports: readonly EndpointReport[] }[]): void {
    const reports = () => networks().flatMap(({ network, reports: each }) => each.map((report) => ({ network, report })));
    const perEndpoint = (name: string, help: string, read: (report: EndpointReport) => number) =>
      this.#gaugePerItem(name, help, ["network", "endpoint"], reports, ({ network, report }) => ({ network, endpoint: report.endpoint }), ({ report }) => read(report));
    perEndpoint("rpc_endpoint_up", "1 while an RPC endpoint is in rotation (takes reads and broadcasts), 0 while it is left out (failing or lagging)", (report) => (report.state === "in" ? 1 : 0));
    perEndpoint("rpc_endpoint_head_lag_blocks", "blocks an RPC endpoint's head was behind the highest head seen, when it last showed one", (report) => report.headLagBlocks ?? 0);
    perEndpoint("rpc_endpoint_latency_seconds", "average latency of an RPC endpoint's recent calls, seconds", (report) => (report.latencyMs ?? 0) / 1000);
    const perNetwork = (name: string, help: string, read: (each: readonly EndpointReport[]) => number) =>
      this.#gaugePerItem(name, help, ["network"], networks, ({ network }) => ({ network }), ({ reports: each }) => read(each));
    perNetwork("rpc_endpoints_configured", "RPC endpoints configured for a network (RPC_URL, or its rpcUrls)", (each) => each.length);
    perNetwork("rpc_endpoints_healthy", "RPC endpoints of a network in rotation", (each) => each.filter((report) => report.state === "in").length);
  }

  /** One of several replicas on one database: which one this is, and whether it leads (does the sending). */
  watchReplica(id: string, leads: () => boolean): void {
    new Gauge({
      name: "replica_leader",
      help: "1 while this replica leads (sends transfers and runs background work), 0 while it forwards them to the leader",
      labelNames: ["replica"],
      registers: [this.registry],
      collect() {
        this.set({ replica: id }, leads() ? 1 : 0);
      },
    });
  }

  /** Registers the gauges of every lane of every network (labelled with the network and its address); they read the current values at every scrape. */
  watchLanes(lanes: () => readonly LaneReadings[]): void {
    const labelsOf = (lane: LaneReadings) => ({ network: lane.network, lane: lane.address });
    const perLane = (name: string, help: string, read: (lane: LaneReadings) => number) => this.#gaugePerItem(name, help, ["network", "lane"], lanes, labelsOf, read);
    perLane("lane_eth_balance_wei", "a lane's ETH balance, wei, as of its latest snapshot", (lane) => Number(lane.ethBalanceWei()));
    perLane("lane_token_balance", "a lane's token balance, whole token units, as of its latest snapshot", (lane) => Number(lane.tokenBalanceUnits()) / 10 ** lane.tokenDecimals);
    perLane("lane_transfers_in_flight", "transfers a lane signed that are not yet mined", (lane) => lane.transfersInFlight());
    perLane(
      "lane_nonces_unexplained",
      "nonces the chain counts used for a lane whose transaction the service could not find in the blocks where it could be (an EIP-7702 authorization, the key used elsewhere); a transfer there waits, never signed again without proof",
      (lane) => lane.unexplainedNonces(),
    );
    perLane("lane_nonce_jammed", "1 while a lane's oldest unconfirmed transfer is stuck and its nonce not mined", (lane) => (lane.jammed() ? 1 : 0));
    new Gauge({
      name: "lane_held",
      help: "1 for the reason a lane takes no new transfers (jammed, stuck, gas-below-floor, in-flight-limit), 0 for the others",
      labelNames: ["network", "lane", "reason"],
      registers: [this.registry],
      collect() {
        for (const lane of lanes()) {
          const hold = lane.hold();
          for (const reason of LANE_HOLDS) this.set({ ...labelsOf(lane), reason }, hold === reason ? 1 : 0);
        }
      },
    });
    // Counted at scrape time from each lane's running total.
    const perLaneTotal = (name: string, help: string, read: (lane: LaneReadings) => bigint) => {
      const reported = new Map<string, bigint>();
      new Counter({
        name,
        help,
        labelNames: ["network", "lane"],
        registers: [this.registry],
        collect() {
          for (const lane of lanes()) {
            const key = `${lane.network} ${lane.address}`;
            const total = read(lane);
            const increase = total - (reported.get(key) ?? 0n);
            reported.set(key, total);
            this.inc(labelsOf(lane), Number(increase));
          }
        },
      });
    };
    perLaneTotal(
      "lane_gas_spent_wei_total",
      "ETH a lane's balance went down by beside what its native transfers paid out (its gas; the funding lane's top-ups too), wei; with lane_eth_balance_wei, the gas runway",
      (lane) => lane.gasSpentWei(),
    );
    perLaneTotal("lane_gas_top_ups_total", "gas top-ups the funding lane (GAS_TOPUP_FROM) sent to a lane", (lane) => BigInt(lane.gasTopUps()));
  }

  /**
   * Registers the wallet gauges of every network (labelled with the network; the token balance with its
   * token too, as transfer_tokens_sent_total is); they read the current values at every scrape.
   */
  watchWallets(wallets: () => readonly WalletReadings[]): void {
    const perWallet = (name: string, help: string, read: (wallet: WalletReadings) => number) =>
      this.#gaugePerItem(name, help, ["network"], wallets, (wallet) => ({ network: wallet.network }), read);
    perWallet("wallet_eth_balance_wei", "hot wallet ETH balance (the network's coin), wei, as of the latest wallet snapshot", (wallet) => Number(wallet.ethBalanceWei()));
    this.#gaugePerItem(
      "wallet_token_balance",
      "hot wallet balance of each token the network pays in (its native coin too), whole token units, as of the latest wallet snapshot",
      ["network", "token"],
      () => wallets().flatMap((wallet) => wallet.tokens.map((token) => ({ network: wallet.network, ...token }))),
      ({ network, token }) => ({ network, token }),
      (token) => Number(token.balanceUnits()) / 10 ** token.decimals,
    );
    perWallet("wallet_transfer_gas_cost_wei", "what one more transfer may cost in ETH at the current fees (gas allowance x fee cap, plus the L1 data fee on OP Stack chains), wei", (wallet) => Number(wallet.gasCostPerTransferWei()));
    perWallet("transfers_oldest_unconfirmed_age_seconds", "age of the oldest transfer signed but not yet mined, seconds (0 when there is none)", (wallet) => wallet.unconfirmed().oldestAgeSeconds);
    perWallet("transfers_stuck", "transfers signed more than 120 s ago and not yet mined", (wallet) => wallet.unconfirmed().stuck);
    perWallet("transfers_at_fee_cap", "transfers whose fees the chain has outgrown while MAX_FEE_PER_GAS or MAX_PRIORITY_FEE_PER_GAS allow no higher: they wait, every later transfer behind them", (wallet) => wallet.atFeeCap());
    perWallet("wallet_nonce_jammed", "1 while the oldest unconfirmed transfer is stuck and the chain has not mined its nonce: every later transfer waits", (wallet) => (wallet.unconfirmed().jammed ? 1 : 0));
    perWallet("transfers_in_flight", "transfers signed but not yet mined", (wallet) => wallet.transfersInFlight());
    perWallet("wallet_fees_spent_day_wei", "what the network's wallets' ETH went down by in fees in the last 24 hours (since the process started, when less), wei", (wallet) => Number(wallet.feesOfDay().spentWei));
    this.#gaugePerItem(
      "wallet_fee_budget_spent_ratio",
      "the last 24 hours' fees as a share of FEE_BUDGET_PER_DAY (a network without one has no series): FeeBudgetNearlySpent at 0.8, FeeBudgetSpent at 1",
      ["network"],
      () => wallets().filter((wallet) => wallet.feesOfDay().budgetWei),
      (wallet) => ({ network: wallet.network }),
      (wallet) => {
        const { spentWei, budgetWei } = wallet.feesOfDay();
        return Number(spentWei) / Number(budgetWei);
      },
    );
  }

  /** Registers the journal's gauge: whether it commits. */
  watchJournal(writable: () => boolean): void {
    this.#gauge("journal_writable", "1 while the transfer journal commits; 0 after a failed commit (no transfer is taken until a restart)", () => (writable() ? 1 : 0));
  }

  // A gauge whose value is read when Prometheus scrapes.
  /** A gauge with one series per item (a network, a lane, an endpoint), labelled by `labelsOf`, read at every scrape. */
  #gaugePerItem<T>(name: string, help: string, labelNames: readonly string[], items: () => readonly T[], labelsOf: (item: T) => Record<string, string>, read: (item: T) => number): void {
    new Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [this.registry],
      collect() {
        // A network or lane that went away leaves no stale series behind.
        this.reset();
        for (const item of items()) this.set(labelsOf(item), read(item));
      },
    });
  }

  #gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

}

/** One (route, method, status) combination: non-cumulative bucket counts, as observed. */
interface HttpSeries {
  labels: { route: string; method: string; status: string };
  bucketCounts: number[];
  sum: number;
  count: number;
}

/**
 * http_requests_total and http_request_duration_seconds, from one tally. prom-client's own Counter and
 * Histogram validate and hash the label set on every observation (about a microsecond each, a tenth of a
 * cached lookup); here a request costs one Map read and a bucket search, and the two metrics are
 * rendered at scrape time through the registry's metric interface (name, help, type, get, reset).
 */
class HttpRequestSeries {
  readonly #upperBounds: number[];
  readonly #series = new Map<string, HttpSeries>();

  constructor(upperBounds: number[], registry: Registry) {
    this.#upperBounds = upperBounds;
    registry.registerMetric(
      this.#asMetric("http_requests_total", "HTTP requests by route, method and status", "counter", () =>
        [...this.#series.values()].map((series) => ({ labels: series.labels, value: series.count })),
      ),
    );
    registry.registerMetric(
      this.#asMetric("http_request_duration_seconds", "HTTP request latency by route, method and status", "histogram", () =>
        [...this.#series.values()].flatMap((series) => this.#histogramValues(series)),
      ),
    );
  }

  observe(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let series = this.#series.get(key);
    if (!series) {
      series = { labels: { route, method, status: String(status) }, bucketCounts: this.#upperBounds.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    const bucket = this.#upperBounds.findIndex((bound) => seconds <= bound);
    if (bucket >= 0) series.bucketCounts[bucket]++;
    series.sum += seconds;
    series.count++;
  }

  #histogramValues(series: HttpSeries) {
    const name = "http_request_duration_seconds";
    let cumulative = 0;
    const buckets = this.#upperBounds.map((bound, index) => {
      cumulative += series.bucketCounts[index];
      return { metricName: `${name}_bucket`, labels: { le: bound, ...series.labels }, value: cumulative };
    });
    return [
      ...buckets,
      { metricName: `${name}_bucket`, labels: { le: "+Inf", ...series.labels }, value: series.count },
      { metricName: `${name}_sum`, labels: series.labels, value: series.sum },
      { metricName: `${name}_count`, labels: series.labels, value: series.count },
    ];
  }

  // The registry renders any object with these members; prom-client's types only name its own classes.
  #asMetric(name: string, help: string, type: "counter" | "histogram", values: () => { metricName?: string; labels: object; value: number }[]): Metric {
    const metric = {
      name,
      help,
      type,
      aggregator: "sum",
      get: async () => ({ name, help, type, aggregator: "sum", values: values() }),
      // Registry.resetMetrics resets every metric, so clearing the shared tally for either is right.
      reset: () => this.#series.clear(),
    };
    return metric as unknown as Metric;
  }
}
