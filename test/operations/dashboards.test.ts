/**
 * The Grafana dashboard and the Prometheus alerts ask only for metrics the running service exports: a
 * renamed metric would otherwise leave an empty panel or an alert that can never fire.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTHORIZATION, type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, startTestChain } from "../helpers/test-chain.js";

const DEPLOY = join(import.meta.dirname, "..", "..", "deploy");
const PROMQL_WORDS = new Set(["and", "or", "unless", "by", "without", "bool", "on", "ignoring", "group_left", "group_right", "offset", "inf", "nan"]);

/** The metric names a PromQL expression reads. */
export function metricNamesIn(expression: string): string[] {
  const bare = expression
    .replace(/"[^"]*"/g, "")
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, "");
  const names = [...bare.matchAll(/\b[a-zA-Z_:][a-zA-Z0-9_:]*\b(?!\s*\()/g)].map((match) => match[0]);
  return names.filter((name) => !PROMQL_WORDS.has(name.toLowerCase()) && !/^\d/.test(name) && !/^e\d+$/.test(name));
}

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(readFileSync(join(DEPLOY, "grafana", "token-transfer-service.json"), "utf8")) as { panels: { targets: { expr: string }[] }[] };
  return dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
}

function alertExpressions(): string[] {
  return [...readFileSync(join(DEPLOY, "prometheus", "alerts.yml"), "utf8").matchAll(/^\s+expr: (.+)$/gm)].map((match) => match[1]);
}

describe("dashboards and alerts", () => {
  let chain: TestChain;
  let service: TestService;
  beforeAll(async () => {
    chain = await startTestChain();
    service = await startService(chain.target);
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("reads metric names out of PromQL", () => {
    expect(metricNamesIn('histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{route="/x"}[5m])))')).toEqual(["http_request_duration_seconds_bucket"]);
    expect(metricNamesIn("time() - rpc_last_success_timestamp_seconds > 60")).toEqual(["rpc_last_success_timestamp_seconds"]);
    expect(metricNamesIn("wallet_eth_balance_wei / 1e18")).toEqual(["wallet_eth_balance_wei"]);
  });

  it("use only metrics the service exports", async () => {
    await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    const exposition = (await service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body;
    const exported = new Set<string>();
    for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      exported.add(name);
      if (type === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) exported.add(name + suffix);
    }
    const used = new Set([...dashboardExpressions(), ...alertExpressions()].flatMap(metricNamesIn));
    expect(used.size).toBeGreaterThan(10);
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
  });
});
