/** Prometheus metrics (prom-client), on a registry of the app's own so tests can build many apps. */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { RpcObserver } from "./chain/rpc-provider.js";


/** What the wallet gauges read at scrape time. */
export interface WalletReadings {
  ethBalanceWei: () => bigint;
  tokenBalanceUnits: () => bigint;
  tokenDecimals: number;
  transfersInFlight: () => number;
}

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #httpRequests = new Counter({
    name: "http_requests_total",
    help: "HTTP requests by route, method and status",
    labelNames: ["route", "method", "status"],
    registers: [this.registry],
  });
  readonly #httpDuration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP request latency by route, method and status",
    labelNames: ["route", "method", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly #transfers = new Counter({
    name: "transfers_total",
    help: "POST /transfer outcomes: sent, replayed (repeated Idempotency-Key) or refused, with the error code",
    labelNames: ["outcome", "code"],
    registers: [this.registry],
  });
  readonly #rpcRequests = new Counter({
    name: "rpc_requests_total",
    help: "JSON-RPC requests to the node by method and outcome",
    labelNames: ["method", "outcome"],
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

  readonly observeRpc: RpcObserver = (method, outcome, seconds) => {
    this.#rpcRequests.inc({ method, outcome });
    this.#rpcDuration.observe({ method }, seconds);
  };

  // prom-client hashes the label object on every call; the few (route, method, status) combinations
  // get their children once, which matters on the lookup path, answered in well under a millisecond.
  readonly #httpChildren = new Map<string, { requests: { inc(): void }; duration: { observe(value: number): void } }>();

  observeHttp(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let children = this.#httpChildren.get(key);
    if (!children) {
      const labels = { route, method, status: String(status) };
      children = { requests: this.#httpRequests.labels(labels), duration: this.#httpDuration.labels(labels) };
      this.#httpChildren.set(key, children);
    }
    children.requests.inc();
    children.duration.observe(seconds);
  }

  countTransfer(outcome: "sent" | "replayed" | "refused", code = ""): void {
    this.#transfers.inc({ outcome, code });
  }

  /** Registers the wallet gauges; they read the current values at every scrape. */
  watchWallet(wallet: WalletReadings): void {
    new Gauge({
      name: "wallet_eth_balance_wei",
      help: "hot wallet ETH balance, wei, as of the latest wallet snapshot",
      registers: [this.registry],
      collect() {
        this.set(Number(wallet.ethBalanceWei()));
      },
    });
    new Gauge({
      name: "wallet_token_balance",
      help: "hot wallet token balance, whole token units, as of the latest wallet snapshot",
      registers: [this.registry],
      collect() {
        this.set(Number(wallet.tokenBalanceUnits()) / 10 ** wallet.tokenDecimals);
      },
    });
    new Gauge({
      name: "transfers_in_flight",
      help: "transfers signed but not yet mined",
      registers: [this.registry],
      collect() {
        this.set(wallet.transfersInFlight());
      },
    });
  }
}
