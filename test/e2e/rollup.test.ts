/**
 * The money path on a chain shaped as a rollup and its endpoint (rollup-endpoint.ts): a block every 250 ms,
 * state kept for 128 blocks only, a finalized tag 300 blocks behind the head whose first reads fail with a
 * rate limit. No transfer is reported final before the tag passes its block; a transfer signed, journaled
 * and never broadcast (a kill -9), whose nonce another sender of the key then used, is found displaced from
 * the block bodies after an outage of 300 blocks (its state long pruned) and signed again once that use is
 * final: every 200 paid exactly once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits, toQuantity } from "ethers";
import { request } from "undici";
import { type TestContext, describe, expect, it } from "vitest";
import { ROLLUP, type RollupEndpoint, rollupEndpoint, startRollupChain } from "../helpers/rollup-endpoint.js";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.js";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION } from "../helpers/service.js";
import { type TestChain, freshAddress, tokenBalanceOf } from "../helpers/test-chain.js";
import { waitUntil } from "../helpers/wait-until.js";

interface RollupRun {
  chain: TestChain;
  proxy: RpcProxy;
  rollup: RollupEndpoint;
  /** Starts the service (as a process) against the rollup's endpoint, on the run's journal. */
  start(env?: Record<string, string>): Promise<ServerProcess>;
}

/** A rollup chain behind its endpoint, a journal folder, and the services started on them: all stopped when the case ends. */
async function startRollup(onTestFinished: TestContext["onTestFinished"]): Promise<RollupRun> {
  const chain = await startRollupChain();
  onTestFinished(() => chain.stop());
  const proxy = await startRpcProxy(chain.rpcUrl);
  onTestFinished(() => proxy.close());
  const rollup = rollupEndpoint(chain.rpcUrl);
  onTestFinished(() => rollup.stop());
  proxy.fault = { kind: "script", answer: (call) => rollup.answer(call) };
  const journalDir = mkdtempSync(join(tmpdir(), "rollup-"));
  onTestFinished(() => rmSync(journalDir, { recursive: true, force: true }));
  const start = async (env: Record<string, string> = {}) => {
    const server = await startServerProcess({
      RPC_URL: proxy.url,
      PRIVATE_KEY: chain.demo.privateKey,
      TOKEN_ADDRESS: chain.demo.tokenAddress,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      CHAIN_REFRESH_INTERVAL_MS: "250",
      REBROADCAST_AFTER_MS: "500",
      RATE_LIMIT_MAX: "100000",
      ...env,
    });
    onTestFinished(async () => {
      server.child.kill("SIGKILL");
      await server.exited;
    });
    return server;
  };
  return { chain, proxy, rollup, start };
}

async function post(server: ServerProcess, body: object, key?: string): Promise<{ status: number; body: any }> {
  const response = await request(`${server.baseUrl}/transfer`, {
    method: "POST",
    headers: { "content-type": "application/json", ...AUTHORIZATION, ...(key && { "idempotency-key": key }) },
    body: JSON.stringify(body),
  });
  return { status: response.statusCode, body: await response.body.json() };
}

async function statusOf(server: ServerProcess, hash: string): Promise<{ state: string; finalized?: boolean; blockNumber?: number | null; carriedBy?: string }> {
  const response = await request(`${server.baseUrl}/transactions/${hash}`, { headers: AUTHORIZATION });
  return (await response.body.json()) as { state: string; finalized?: boolean; blockNumber?: number | null };
}

// The two cases start a rollup each: they run side by side.
describe.concurrent("a rollup: 250 ms blocks, 128 blocks of state, a finalized tag 300 blocks behind whose first reads fail once", () => {
  it("no transfer is reported final before the node's finalized tag passes its block; then each is", async ({ onTestFinished }) => {
    const { chain, rollup, start } = await startRollup(onTestFinished);
    const server = await start();
    const hashes: string[] = [];
    for (let index = 0; index < 4; index++) {
      const answer = await post(server, { toAddress: freshAddress(), amount: "1" });
      expect(answer.status).toBe(200);
      hashes.push(answer.body.result.hash);
    }
    const minedAt = new Map<string, number>();
    // Watched while the chain makes its blocks, and 100 more at once (deeper than the 64 blocks a depth rule
    // would take for final, short of the tag): a transfer reported final must be at or below the tag then.
    const watchUntil = Date.now() + 8_000;
    let minedMore = false;
    while (Date.now() < watchUntil) {
      if (!minedMore && minedAt.size === hashes.length) {
        await chain.provider.send("anvil_mine", [toQuantity(100)]);
        minedMore = true;
      }
      const finalizedTag = Math.max(0, (await chain.provider.getBlockNumber()) - ROLLUP.finalizedLagBlocks);
      for (const hash of hashes) {
        const receipt = await chain.provider.getTransactionReceipt(hash);
        if (receipt) minedAt.set(hash, receipt.blockNumber);
        const status = await statusOf(server, hash);
        if (status.finalized) expect(minedAt.get(hash), `${hash} reported final with the finalized tag at ${finalizedTag}`).toBeLessThanOrEqual(finalizedTag);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(minedMore).toBe(true);
    // The tag was read, and its first read refused with a rate limit: no reason to take depth for finality.
    expect(rollup.met.finalizedRefused).toBeGreaterThan(0);
    // The tag passes them: 300 blocks at once, as hours of a rollup would.
    await chain.provider.send("anvil_mine", [toQuantity(ROLLUP.finalizedLagBlocks + 10)]);
    await waitUntil(async () => (await Promise.all(hashes.map((hash) => statusOf(server, hash)))).every((status) => status.finalized === true), 20_000, "every transfer final");
  }, 90_000);

  it("a transfer journaled and never broadcast (kill -9), its nonce then used by another sender, after an outage of 300 blocks: found in the block bodies, signed again once final, every 200 paid once", async ({ onTestFinished }) => {
    const { chain, proxy, start } = await startRollup(onTestFinished);
    const walletTokens = await tokenBalanceOf(chain, chain.demo.walletAddress);
    const first = await start();
    const paid = freshAddress();
    expect((await post(first, { toAddress: paid, amount: "1" })).status).toBe(200);
    await waitUntil(async () => (await tokenBalanceOf(chain, paid)) > 0n, 20_000, "the first transfer paid");
    first.child.kill("SIGTERM");
    await first.exited;

    // Signed and journaled, then killed before its broadcast: its 200 was never answered, its key owns it.
    const doomed = await start({ TEST_FAULT_POINT: "after-sign" });
    const unpaid = freshAddress();
    const asked = post(doomed, { toAddress: unpaid, amount: "2" }, "rollup-crash-1").catch(() => undefined);
    await doomed.waitForOutput("TEST_FAULT_POINT reached: after-sign");
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    await asked;

    // Another sender of the key uses that nonce; then the endpoint is out while 300 blocks are made.
    const outside = await chain.hotWallet.sendTransaction({ to: chain.demo.walletAddress, value: 0n });
    const outsideMinedIn = (await outside.wait())?.blockNumber as number;
    await proxy.goDown();
    await chain.provider.send("anvil_mine", [toQuantity(300)]);
    await proxy.comeBack();

    const restarted = await start();
    // What used the nonce is older than any state a node keeps now: only the block bodies show it.
    expect(outsideMinedIn).toBeLessThan((await chain.provider.getBlockNumber()) - ROLLUP.stateBlocks);
    // The client retries with its key: the transfer it owns is paid once, at another nonce.
    const retried = await post(restarted, { toAddress: unpaid, amount: "2" }, "rollup-crash-1");
    expect(retried.status).toBe(200);
    // The outsider's block is already below the finalized tag (300 behind the head): signed again at once.
    await waitUntil(async () => (await tokenBalanceOf(chain, unpaid)) > 0n, 60_000, "the displaced transfer signed again and paid");
    expect(await tokenBalanceOf(chain, unpaid)).toBe(parseUnits("2", 18));
    expect(await tokenBalanceOf(chain, paid)).toBe(parseUnits("1", 18));
    expect(walletTokens - (await tokenBalanceOf(chain, chain.demo.walletAddress))).toBe(parseUnits("3", 18));
    const status = await statusOf(restarted, retried.body.result.hash);
    expect(status.state).toBe("confirmed");
  }, 150_000);
});
