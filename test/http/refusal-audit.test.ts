/**
 * Refused control actions in the audit log: each (key, route, code) entered once a minute at most, with how
 * many times it came again before, so that a key calling a route it may not in a loop does not grow the log.
 */
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { ServiceError } from "../../src/errors.js";
import { auditRefusedControls } from "../../src/http/refusal-audit.js";
import type { AuditEntry } from "../../src/journal/audit/audit-chain.js";

describe("refused control actions in the audit log", () => {
  it("enters the same refusal once a minute, with its repeats; another route or key at once", async () => {
    let now = 1_000_000;
    const entries: AuditEntry[] = [];
    const app = Fastify();
    app.decorateRequest("apiKeyId", "");
    app.decorateRequest("apiKeyRole", "transfer");
    app.addHook("onRequest", (request, _reply, done) => {
      request.apiKeyId = String(request.headers["x-key"]);
      done();
    });
    auditRefusedControls(app, { recordAudit: (entry) => void entries.push(entry) }, () => now);
    app.post("/wallet/resume", async () => {
      throw new ServiceError("FORBIDDEN_FOR_ROLE", "not for this role");
    });
    app.get("/audit", async () => {
      throw new ServiceError("FORBIDDEN_FOR_ROLE", "not for this role");
    });
    const call = (method: "GET" | "POST", url: string, key: string) => app.inject({ method, url, headers: { "x-key": key } });
    for (let index = 0; index < 5; index++) expect((await call("POST", "/wallet/resume", "key_a")).statusCode).toBe(403);
    await call("GET", "/audit", "key_a");
    await call("POST", "/wallet/resume", "key_b");
    expect(entries.map((entry) => [entry.actor, entry.detail.route])).toEqual([
      ["key_a", "POST /wallet/resume"],
      ["key_a", "GET /audit"],
      ["key_b", "POST /wallet/resume"],
    ]);
    now += 61_000;
    await call("POST", "/wallet/resume", "key_a");
    expect(entries.at(-1)).toMatchObject({ actor: "key_a", detail: { code: "FORBIDDEN_FOR_ROLE", route: "POST /wallet/resume", repeatedBefore: 4 } });
    await app.close();
  });
});
