/**
 * The contract of an answer across a crash, on the three node implementations: a burst of keyed transfers, the
 * process killed (-9) in the middle, restarted, and every request replayed with its Idempotency-Key. A
 * replay answers exactly what the first request was answered (200 and 417 alike); a request that got no
 * answer gets one now; every transfer answered 200 is on chain exactly once, none answered 417 is, and the
 * wallet's nonces have no hole. Ganache mines a block a second, so the kill leaves transactions in its pool,
 * some of them above a nonce that never reached it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION } from "../helpers/service.js";
import { ALL_NODE_KINDS, type TestChain, freshAddress, startTestChainOn, tokenBalanceOf } from "../helpers/test-chain.js";

interface Answer {
  statusCode: number;
  raw: string;
}

const BURST = 60;

describe.each(ALL_NODE_KINDS)("a burst, kill -9 and replay of every request on %s", (kind) => {
  let chain: TestChain | undefined;
  const servers: ServerProcess[] = [];
  let journalDir: string | undefined;
  afterEach(async () => {
    for (const server of servers.splice(0)) server.child.kill("SIGKILL");
    await chain?.stop();
    if (journalDir) rmSync(journalDir, { recursive: true, force: true });
  });

  it("replays answer what was answered, every 200 is paid once, no 417 is paid, and no nonce hole remains", async () => {
    // A wallet that can pay for about two thirds of the burst, so that some transfers are refused (417).
    chain = await startTestChainOn(kind, { supply: 40n });
    journalDir = mkdtempSync(join(tmpdir(), "burst-"));
    const env = {
      RPC_URL: chain.rpcUrl,
      PRIVATE_KEY: chain.demo.privateKey,
      TOKEN_ADDRESS: chain.demo.tokenAddress,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      REBROADCAST_AFTER_MS: "500",
    };
    const firstNonce = await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest");
    const bodies = Array.from({ length: BURST }, () => ({ toAddress: freshAddress(), amount: "1" }));
    const send = (server: ServerProcess, index: number): Promise<Answer | undefined> =>
      request(`${server.baseUrl}/transfer`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": `burst-${index}`, ...AUTHORIZATION },
        body: JSON.stringify(bodies[index]),
      }).then(
        async (response) => ({ statusCode: response.statusCode, raw: await response.body.text() }),
        () => undefined,
      );
    // A 503 says nothing was sent and the key is unused (docs/api.md): the client asks again, as one does
    // (ganache, busy with a restart's re-sends, sometimes answers estimates past RPC_TIMEOUT_MS).
    const sendUntilDecided = async (server: ServerProcess, index: number): Promise<Answer | undefined> => {
      for (let tries = 1; ; tries++) {
        const answer = await send(server, index);
        if (answer?.statusCode !== 503 || tries === 20) return answer;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    };

    const doomed = await startServerProcess(env);
    servers.push(doomed);
    const firstAnswers = bodies.map((_, index) => sendUntilDecided(doomed, index));
    // Kill it once some transfers were answered and others are still under way.
    const deadline = Date.now() + 10_000;
    while ((await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending")) < firstNonce + 5 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    doomed.child.kill("SIGKILL");
    const first = await Promise.all(firstAnswers);

    const restarted = await startServerProcess(env);
    servers.push(restarted);
    const replays = await Promise.all(bodies.map((_, index) => sendUntilDecided(restarted, index)));
    const again = await Promise.all(bodies.map((_, index) => send(restarted, index)));
    for (const [index, replay] of replays.entries()) {
      expect(replay, `replay ${index}`).toBeDefined();
      const answer = first[index] ?? replay;
      expect([200, 417], `request ${index}: ${answer?.raw}`).toContain(answer?.statusCode);
      // The same status and body as the first answer (or, where none reached the client, as the replay).
      expect({ statusCode: replay?.statusCode, raw: replay?.raw }, `request ${index}`).toEqual({ statusCode: answer?.statusCode, raw: answer?.raw });
      expect({ statusCode: again[index]?.statusCode, raw: again[index]?.raw }).toEqual({ statusCode: answer?.statusCode, raw: answer?.raw });
    }

    const paid = replays.filter((replay) => replay?.statusCode === 200).length;
    expect(paid).toBeGreaterThan(0);
    expect(paid).toBeLessThanOrEqual(40);
    const minedDeadline = Date.now() + 30_000;
    while ((await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")) < firstNonce + paid && Date.now() < minedDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Nonces: exactly one per transfer answered 200, contiguous, nothing else sent.
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(firstNonce + paid);
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending")).toBe(firstNonce + paid);
    for (const [index, replay] of replays.entries()) {
      const expected = replay?.statusCode === 200 ? 10n ** 18n : 0n;
      expect(await tokenBalanceOf(chain, bodies[index].toAddress), `recipient ${index} (${replay?.statusCode})`).toBe(expected);
    }
  });
});
