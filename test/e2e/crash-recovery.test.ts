/**
 * kill -9 at a fault point between signing and answering: after a restart, the retry with the same
 * Idempotency-Key answers the journaled transaction, and that transaction is on chain exactly once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits } from "ethers";
import { request } from "undici";
import { afterAll, beforeAll, expect } from "vitest";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, startTestChain, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";
import { describe, it } from "../helpers/suites-side-by-side.js";

const CRASHES = NODE_KINDS.flatMap((kind) => ["after-sign", "after-broadcast"].map((faultPoint) => [faultPoint, kind] as const));

describe.each(CRASHES)("a crash %s on %s", (faultPoint, kind) => {
  let chain: TestChain;
  let journalDir: string;
  const running: ServerProcess[] = [];

  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    journalDir = mkdtempSync(join(tmpdir(), "crash-"));
  });
  afterAll(async () => {
    for (const server of running) server.child.kill("SIGKILL");
    await chain?.stop();
    rmSync(journalDir, { recursive: true, force: true });
  });

  const start = async (extraEnv: Record<string, string> = {}) => {
    const server = await startServerProcess({
      RPC_URL: chain.rpcUrl,
      PRIVATE_KEY: chain.demo.privateKey,
      TOKEN_ADDRESS: chain.demo.tokenAddress,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      ...extraEnv,
    });
    running.push(server);
    return server;
  };
  const transfer = (server: ServerProcess, body: object, key: string) =>
    request(`${server.baseUrl}/transfer`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key, ...AUTHORIZATION },
      body: JSON.stringify(body),
    });

  it("loses nothing and sends nothing twice", async () => {
    const body = { toAddress: freshAddress(), amount: "8" };
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");

    const doomed = await start({ TEST_FAULT_POINT: faultPoint });
    const unanswered = transfer(doomed, body, "crash-order").catch((error: Error) => error);
    await doomed.waitForOutput(`TEST_FAULT_POINT reached: ${faultPoint}`);
    doomed.child.kill("SIGKILL");
    expect(await doomed.exited).toBeNull();
    expect(await unanswered).toBeInstanceOf(Error);

    const restarted = await start();
    expect(restarted.output()).toMatch(/"msg":"journal reconciled with the chain"/);
    const retry = await transfer(restarted, body, "crash-order");
    expect(retry.statusCode).toBe(200);
    const { result } = (await retry.body.json()) as { result: { hash: string; nonce: number } };
    expect(result.nonce).toBe(nonceBefore);

    const again = await transfer(restarted, body, "crash-order");
    expect(((await again.body.json()) as { result: { hash: string } }).result.hash).toBe(result.hash);

    const mined = await waitForReceipt(chain, result.hash, 10_000);
    expect(mined.status).toBe(1);
    // Settled in the journal too: nothing is left looking unconfirmed to /wallet and the alerts.
    let wallet: { oldestUnconfirmed: unknown; transfersInFlight: number } | undefined;
    for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
      wallet = (await (await request(`${restarted.baseUrl}/wallet`, { headers: AUTHORIZATION })).body.json()) as typeof wallet;
      if (wallet?.oldestUnconfirmed === null) break;
    }
    expect(wallet).toMatchObject({ oldestUnconfirmed: null, transfersInFlight: 0 });
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(nonceBefore + 1);
    expect(await tokenBalanceOf(chain, body.toAddress)).toBe(parseUnits("8", 18));
    restarted.child.kill("SIGTERM");
    expect(await restarted.exited).toBe(0);
  });
});

describe.each(["SIGTERM", "SIGINT"] as const)("%s with transfers in flight", (signal) => {
  it("finishes them, answers each truthfully, and exits 0", async () => {
    const chain = await startTestChain();
    const journalDir = mkdtempSync(join(tmpdir(), "sigterm-"));
    const env = {
      RPC_URL: chain.rpcUrl,
      PRIVATE_KEY: chain.demo.privateKey,
      TOKEN_ADDRESS: chain.demo.tokenAddress,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
    };
    const servers = [await startServerProcess(env)];
    const [server] = servers;
    try {
      const recipients = Array.from({ length: 40 }, () => freshAddress());
      const replies = recipients.map((toAddress) =>
        request(`${server.baseUrl}/transfer`, { method: "POST", headers: { "content-type": "application/json", ...AUTHORIZATION }, body: JSON.stringify({ toAddress, amount: "1" }) })
          .then(async (response) => ({ statusCode: response.statusCode, body: (await response.body.json()) as any }))
          .catch((error: Error) => ({ statusCode: 0, body: error.message })),
      );
      await new Promise((resolve) => setTimeout(resolve, 30));
      server.child.kill(signal);
      const settled = await Promise.all(replies);
      expect(await server.exited).toBe(0);
      // Log lines are buffered (not a terminal): every one of them was written out before the exit.
      const sentLines = server.output().split("\n").filter((line) => line.includes('"msg":"transfer sent"'));
      expect(sentLines).toHaveLength(settled.filter((reply) => reply.statusCode === 200).length);
      expect(server.output()).toContain(`${signal} received: finishing requests in flight, then exiting`);

      const answered = settled.filter((reply) => reply.statusCode === 200);
      expect(answered.length).toBeGreaterThan(0);
      for (const reply of settled) expect([0, 200, 503]).toContain(reply.statusCode);
      // A 200 is owned until mined, not mined before the exit: anvil can leave the wallet's next
      // transaction queued behind a predecessor mined meanwhile (foundry-rs/foundry#10122), and only a
      // replacement at its nonce, which the running service sends, moves it. The next process on the same
      // journal finishes what the last one owned.
      const expected = settled.map((reply) => (reply.statusCode === 200 ? parseUnits("1", 18) : 0n));
      const balances = () => Promise.all(recipients.map((recipient) => tokenBalanceOf(chain, recipient)));
      const owner = await startServerProcess({ ...env, REBROADCAST_AFTER_MS: "300" });
      servers.push(owner);
      let paid = await balances();
      for (const deadline = Date.now() + 30_000; paid.some((balance, index) => balance !== expected[index]) && Date.now() < deadline; paid = await balances()) {
        // A transfer that was not answered 200 must never be paid: no waiting would change that.
        expect(paid.filter((balance, index) => expected[index] === 0n && balance !== 0n)).toEqual([]);
        await chain.provider.send("evm_mine", []);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // Each answered 200 paid exactly once, every other request never.
      expect(paid).toEqual(expected);
      owner.child.kill("SIGTERM");
      expect(await owner.exited).toBe(0);
    } finally {
      for (const each of servers) each.child.kill("SIGKILL");
      await chain.stop();
      rmSync(journalDir, { recursive: true, force: true });
    }
  });
});
