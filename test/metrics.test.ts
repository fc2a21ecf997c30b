import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ServiceMetrics } from "../src/metrics.js";

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const OBSERVATIONS: [string, string, number, number][] = [
  ["/getTransaction", "POST", 200, 0.0004],
  ["/getTransaction", "POST", 200, 0.003],
  ["/getTransaction", "POST", 200, 0.0025],
  ["/transfer", "POST", 417, 0.07],
  ["/transfer", "POST", 200, 75],
  ["unmatched", "GET", 404, 0],
];

/** The same observations through prom-client's own Counter and Histogram. */
async function renderedByPromClient(): Promise<string> {
  const registry = new Registry();
  const labelNames = ["route", "method", "status"];
  const requests = new Counter({ name: "http_requests_total", help: "HTTP requests by route, method and status", labelNames, registers: [registry] });
  const duration = new Histogram({ name: "http_request_duration_seconds", help: "HTTP request latency by route, method and status", labelNames, buckets: BUCKETS, registers: [registry] });
  for (const [route, method, status, seconds] of OBSERVATIONS) {
    requests.inc({ route, method, status: String(status) });
    duration.observe({ route, method, status: String(status) }, seconds);
  }
  return registry.metrics();
}

describe("HTTP request metrics", () => {
  it("render exactly as prom-client's Counter and Histogram would", async () => {
    const metrics = new ServiceMetrics();
    for (const [route, method, status, seconds] of OBSERVATIONS) metrics.observeHttp(route, method, status, seconds);
    const ours = await metrics.registry.metrics();
    const theirs = await renderedByPromClient();
    for (const name of ["http_requests_total", "http_request_duration_seconds"]) {
      const block = (text: string) => text.split("\n\n").find((part) => part.startsWith(`# HELP ${name} `))?.trimEnd();
      expect(block(ours), name).toBeDefined();
      expect(block(ours)).toBe(block(theirs));
    }
  });

  it("are in the JSON form too, and reset with the registry", async () => {
    const metrics = new ServiceMetrics();
    metrics.observeHttp("/transfer", "POST", 200, 0.2);
    const json = await metrics.registry.getMetricsAsJSON();
    expect(json.find((metric) => metric.name === "http_requests_total")?.values).toEqual([
      { labels: { route: "/transfer", method: "POST", status: "200" }, value: 1 },
    ]);
    metrics.registry.resetMetrics();
    expect(await metrics.registry.getSingleMetricAsString("http_requests_total")).toBe("# HELP http_requests_total HTTP requests by route, method and status\n# TYPE http_requests_total counter");
  });
});
