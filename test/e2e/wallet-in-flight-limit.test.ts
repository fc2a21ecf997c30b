/**
 * One wallet against a node that keeps 16 pending transactions per sender and mines a block a second
 * (anvil behind a proxy that refuses the 17th as "txpool is full"): the wallet holds at most
 * MAX_IN_FLIGHT_PER_LANE (16) unmined, so the node refuses nothing, no client gets a 417 for congestion,
 * no nonce is left in a gap, and every 200 is paid exactly once. A transfer that finds no room within
 * TRANSFER_SLOT_WAIT_MS is answered 503 with Retry-After and its key stays unused.
 *
 * Paid is read from the chain as a client's money: the wallet's mined count and each recipient's balance,
 * not the answered hash's receipt. anvil can hold a transaction in its pool without ever mining it
 * (foundry-rs/foundry#10122), and the service then replaces it at the same nonce, under another hash.
 */
import { parseUnits } from "ethers";
import { Pool } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { type PendingLimit, limitPendingPerSender } from "../helpers/pending-limit.js";
import { AUTHORIZATION, type ProxiedService, startServiceBehindProxy } from "../helpers/service.js";
import { type TestChain, freshAddress, startTestChain, tokenBalanceOf, waitForMinedCount } from "../helpers/test-chain.js";

const CONCURRENCY = 50;
const SECONDS = 6;

describe("one wallet against a node that keeps 16 pending per sender", () => {
  let chain: TestChain | undefined;
  let proxied: ProxiedService | undefined;
  let limit: PendingLimit | undefined;
  afterEach(async () => {
    await limit?.stop();
    await proxied?.close();
    await chain?.stop();
  });

  it("concurrency 50 for 6 s: nothing refused by the node, no 417, every 200 mined with contiguous nonces; the rest 503 with Retry-After, key unused", async () => {
    chain = await startTestChain(["--block-time", "1"]);
    // A wait shorter than a block: the transfers beyond what the wallet takes are answered 503.
    proxied = await startServiceBehindProxy(chain.target, { TRANSFER_SLOT_WAIT_MS: "300" });
    limit = limitPendingPerSender(proxied.proxy, chain.provider, 16);
    const firstNonce = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
    await proxied.service.app.listen({ host: "127.0.0.1", port: 0 });
    const address = proxied.service.app.server.address() as { port: number };
    const pool = new Pool(`http://127.0.0.1:${address.port}`, { connections: CONCURRENCY });
    const paid: { nonce: number; recipient: string }[] = [];
    const statuses: Record<string, number> = {};
    const busyKeys: string[] = [];
    let index = 0;
    const stopAt = Date.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (Date.now() < stopAt) {
          const key = `in-flight-${index++}`;
          const recipient = freshAddress();
          const response = await pool.request({
            path: "/transfer",
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": key, ...AUTHORIZATION },
            body: JSON.stringify({ toAddress: recipient, amount: "1" }),
          });
          const body = (await response.body.json()) as { result?: { nonce: number }; code?: string };
          statuses[`${response.statusCode} ${body.code ?? ""}`.trim()] = (statuses[`${response.statusCode} ${body.code ?? ""}`.trim()] ?? 0) + 1;
          if (response.statusCode === 200 && body.result) paid.push({ nonce: body.result.nonce, recipient });
          if (response.statusCode === 503) {
            expect(body.code).toBe("NO_LANE_AVAILABLE");
            expect(response.headers["retry-after"]).toBe("1");
            busyKeys.push(key);
          }
        }
      }),
    );
    await pool.close();
    expect(limit.refused).toBe(0);
    expect(Object.keys(statuses).filter((status) => status !== "200" && status !== "503 NO_LANE_AVAILABLE")).toEqual([]);
    // Room freed by the blocks is taken again (the rate is bench:pool's to measure, not a test's).
    expect(paid.length).toBeGreaterThan(32);
    const nonces = paid.map(({ nonce }) => nonce).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: paid.length }, (_, offset) => firstNonce + offset));
    await minedUpTo(firstNonce + paid.length);
    for (const { recipient } of paid) expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("1", 18));
    // A key answered 503 is unused: once the wallet has room again, the same key sends a transfer.
    expect(busyKeys.length).toBeGreaterThan(0);
    const recipient = freshAddress();
    const retried = await proxied.service.app.inject({
      method: "POST",
      url: "/transfer",
      headers: { "idempotency-key": busyKeys[0], ...AUTHORIZATION },
      payload: { toAddress: recipient, amount: "1" },
    });
    expect(retried.statusCode).toBe(200);
    expect(retried.json().result.nonce).toBe(firstNonce + paid.length);
    await minedUpTo(firstNonce + paid.length + 1);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("1", 18));
  }, 120_000);

  // The wallet's mined count reaches `count` and goes no further (nothing sent beside the 200s: no gap filled);
  // when it does not, what the service still holds and what it said are in the error.
  async function minedUpTo(count: number): Promise<void> {
    const { service } = proxied as ProxiedService;
    await waitForMinedCount(chain as TestChain, count, 60_000).catch((error: Error) => {
      const unsettled = service.services.journal.unsettled().map((entry) => `${entry.nonce}:${entry.state}:${entry.attempts.length}`);
      const notable = service.logs.filter((line) => !/request completed|request refused|transfer sent/.test(line));
      throw new Error(`${error.message}\nunsettled (nonce:state:attempts): ${unsettled.join(" ")}\n${notable.join("").slice(-6000)}`);
    });
    expect(await chain?.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(count);
  }
});
