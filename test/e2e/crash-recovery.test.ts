/**
 * kill -9 at a fault point between signing and answering: after a restart, the retry with the same
 * Idempotency-Key answers the journaled transaction, and that transaction is on chain exactly once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits } from "ethers";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, startTestChain, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";

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
    const server = await startServerProcess({
      RPC_URL: chain.rpcUrl,
      PRIVATE_KEY: chain.demo.privateKey,
      TOKEN_ADDRESS: chain.demo.tokenAddress,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
    });
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
      // anvil can keep a transaction that arrived while it was mining in its pool until the next block.
      await chain.provider.send("evm_mine", []);
      for (const reply of settled) expect([0, 200, 503]).toContain(reply.statusCode);
      for (const [index, reply] of settled.entries()) {
        const balance = await tokenBalanceOf(chain, recipients[index]);
        // A transfer is on chain exactly when it was answered 200.
        expect(balance).toBe(reply.statusCode === 200 ? parseUnits("1", 18) : 0n);
      }
    } finally {
      server.child.kill("SIGKILL");
      await chain.stop();
      rmSync(journalDir, { recursive: true, force: true });
    }
  });
});

describe("a crash after signing, then another transaction takes that nonce", () => {
  it("answers the retry with the journaled record (never a second transaction), proves the nonce used by another, checking twice, and signs the transfer again at a new nonce: paid once", async () => {
    // Blocks keep coming: the proof needs the chain to have grown since the first missing receipt.
    const chain = await startTestChain(["--block-time", "1"]);
    const journalDir = mkdtempSync(join(tmpdir(), "replaced-"));
    const env = {
      RPC_URL: chain.rpcUrl,
      PRIVATE_KEY: chain.demo.privateKey,
      TOKEN_ADDRESS: chain.demo.tokenAddress,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      REBROADCAST_AFTER_MS: "300",
    };
    const servers: ServerProcess[] = [];
    const send = (server: ServerProcess, body: object) =>
      request(`${server.baseUrl}/transfer`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "replaced-order", ...AUTHORIZATION },
        body: JSON.stringify(body),
      });
    try {
      const body = { toAddress: freshAddress(), amount: "9" };
      const doomed = await startServerProcess({ ...env, TEST_FAULT_POINT: "after-sign" });
      servers.push(doomed);
      const unanswered = send(doomed, body).catch((error: Error) => error);
      await doomed.waitForOutput("TEST_FAULT_POINT reached: after-sign");
      doomed.child.kill("SIGKILL");
      await unanswered;

      // While the service is down, an operator uses the wallet: the journaled nonce goes to their transaction.
      await (await chain.hotWallet.sendTransaction({ to: freshAddress(), value: 1n })).wait();
      const nonceAfterOperator = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");

      const restarted = await startServerProcess(env);
      servers.push(restarted);
      // One missing receipt is no proof (a lagging backend answers like that): not replaced at startup.
      expect(restarted.output()).toMatch(/"replaced":0/);
      const retry = await send(restarted, body);
      expect(retry.statusCode).toBe(200);
      const { result } = (await retry.body.json()) as { result: { hash: string; nonce: number } };
      expect(result.nonce).toBe(nonceAfterOperator - 1);

      await restarted.waitForOutput('"outcomes":["signed again"]', 15_000);
      await restarted.waitForOutput("signed it again at a new nonce", 5_000);
      let document: any;
      for (let waited = 0; waited < 50 && document?.state !== "confirmed"; waited++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        document = await (await request(`${restarted.baseUrl}/transactions/${result.hash}`, { headers: AUTHORIZATION })).body.json();
      }
      expect(document).toMatchObject({ hash: result.hash, state: "confirmed", transfer: { to: body.toAddress, amountInTokens: "9" } });
      expect(document.attempts).toEqual([
        expect.objectContaining({ hash: result.hash, fate: "replaced", replacedBy: document.carriedBy }),
        expect.objectContaining({ hash: document.carriedBy, fate: "mined" }),
      ]);
      // The repeat still answers what the transfer was answered, and sends nothing more.
      const again = await send(restarted, body);
      expect(((await again.body.json()) as { result: { hash: string } }).result.hash).toBe(result.hash);
      expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending")).toBe(nonceAfterOperator + 1);
      expect(await tokenBalanceOf(chain, body.toAddress)).toBe(parseUnits("9", 18));
    } finally {
      for (const server of servers) server.child.kill("SIGKILL");
      await chain.stop();
      rmSync(journalDir, { recursive: true, force: true });
    }
  });
});
