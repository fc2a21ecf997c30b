/**
 * The journal's disk fills up (a real tmpfs, filled by the test) while the service runs: nothing is sent
 * without its record, the client hears 503 JOURNAL_UNAVAILABLE (its key unused), readiness says why, and
 * after the disk is freed and the service restarted the same request runs once, with no nonce gap.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseUnits } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READINESS_CACHE_MS } from "../../src/http/routes/health.js";
import { type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, startTestChain, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";
import { fillFilesystem, mountTinyFilesystem } from "../helpers/tiny-filesystem.js";

describe("a journal disk that fills up while the service runs", () => {
  let chain: TestChain;
  let tinyFilesystem: ReturnType<typeof mountTinyFilesystem>;
  let service: TestService | undefined;

  beforeAll(async () => {
    chain = await startTestChain();
    tinyFilesystem = mountTinyFilesystem(1024);
  });
  afterAll(async () => {
    await service?.close();
    tinyFilesystem?.unmount();
    await chain?.stop();
  });

  it("sends nothing without its record, answers 503 with the key unused, and loses nothing after a restart", async () => {
    const env = { JOURNAL_PATH: join(tinyFilesystem.mountPoint, "transfers.sqlite") };
    service = await startService(chain.target, env);
    const transfer = (body: object, headers: Record<string, string> = {}) => postJson((service as TestService).app, "/transfer", body, headers);
    const firstBody = { toAddress: freshAddress(), amount: "1" };
    const first = await transfer(firstBody, { "idempotency-key": "before-full" });
    expect(first.statusCode).toBe(200);
    expect((await waitForReceipt(chain, first.body.result.hash, 5000)).status).toBe(1);
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");

    fillFilesystem(tinyFilesystem.mountPoint);
    const keyed = { toAddress: freshAddress(), amount: "2" };
    const refused = await transfer(keyed, { "idempotency-key": "while-full" });
    expect(refused.statusCode).toBe(503);
    expect(refused.body.code).toBe("JOURNAL_UNAVAILABLE");
    const unkeyed = { toAddress: freshAddress(), amount: "3" };
    const alsoRefused = await transfer(unkeyed);
    expect(alsoRefused.statusCode).toBe(503);
    expect(alsoRefused.body.code).toBe("JOURNAL_UNAVAILABLE");
    // A repeat of a key the journal holds gets its first answer, though the journal takes no writes.
    const repeated = await transfer(firstBody, { "idempotency-key": "before-full" });
    expect(repeated.statusCode, repeated.raw).toBe(200);
    expect(repeated.raw).toBe(first.raw);
    await new Promise((resolve) => setTimeout(resolve, READINESS_CACHE_MS + 50));
    const ready = await service.app.inject({ method: "GET", url: "/ready" });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.journal).toMatch(/failed to commit/);
    // Nothing reached the node.
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending")).toBe(nonceBefore);
    expect(await tokenBalanceOf(chain, keyed.toAddress)).toBe(0n);
    expect(await tokenBalanceOf(chain, unkeyed.toAddress)).toBe(0n);

    // The operator frees the disk and restarts the service.
    for (const name of readdirSync(tinyFilesystem.mountPoint)) if (name.startsWith("filler-")) rmSync(join(tinyFilesystem.mountPoint, name));
    await service.close();
    service = await startService(chain.target, env);
    const retried = await transfer(keyed, { "idempotency-key": "while-full" });
    expect(retried.statusCode).toBe(200);
    expect(retried.body.result.nonce).toBe(nonceBefore);
    const next = await transfer(unkeyed);
    expect(next.body.result.nonce).toBe(nonceBefore + 1);
    expect((await transfer(firstBody, { "idempotency-key": "before-full" })).raw).toBe(first.raw);
    await waitForReceipt(chain, next.body.result.hash, 5000).catch(async (error: Error) => {
      const pool = await chain.provider.send("txpool_status", []).catch(() => "unknown");
      const notable = (service as TestService).logs.filter((line) => !/request completed/.test(line)).slice(-20);
      throw new Error(`${error.message}; node pool ${JSON.stringify(pool)}; the service's last notable log lines:\n${notable.join("")}`);
    });
    expect(await tokenBalanceOf(chain, keyed.toAddress)).toBe(parseUnits("2", 18));
    expect(await tokenBalanceOf(chain, unkeyed.toAddress)).toBe(parseUnits("3", 18));
  });
});
