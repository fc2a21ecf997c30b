/**
 * The service with its key in AWS KMS (moto_server, see helpers/moto-kms.ts) as its only key: transfers,
 * records, a keyed burst cut by kill -9, replays, a KMS outage, and the keys it must refuse to start with.
 * No AWS secret may appear in anything the service prints.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ethers as ethers5 } from "ethers5";
import { parseUnits } from "ethers";
import { request } from "undici";
import { afterAll, beforeAll, expect } from "vitest";
import { openAwsKmsSigner } from "../../src/signers/aws-kms-signer.js";
import { type TestKms, motoMissing, startTestKms } from "../helpers/moto-kms.js";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION } from "../helpers/service.js";
import { NODE_KINDS, type TestChain, freshAddress, setEthBalance, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";
import { describe, it } from "../helpers/suites-side-by-side.js";

const missing = motoMissing();

describe.skipIf(missing).each(NODE_KINDS)(missing ? `AWS KMS as the only key: NOT RUN, ${missing} (%s)` : "AWS KMS as the only key, on %s", (kind) => {
  let chain: TestChain;
  let kms: TestKms;
  let keyId: string;
  let kmsAddress: string;
  let journalDir: string;
  const running: ServerProcess[] = [];

  beforeAll(async () => {
    [chain, kms] = await Promise.all([startTestChainOn(kind), startTestKms()]);
    keyId = await kms.createKey("ECC_SECG_P256K1", "alias/hot-wallet");
    kmsAddress = (await openAwsKmsSigner(keyId, kms.client)).address;
    await setEthBalance(chain, kmsAddress, "10");
    await (await chain.token.getFunction("transfer")(kmsAddress, parseUnits("1000", chain.decimals))).wait();
    journalDir = mkdtempSync(join(tmpdir(), "kms-e2e-"));
  }, 60_000);
  afterAll(async () => {
    for (const server of running) server.child.kill("SIGKILL");
    await Promise.all(running.map((server) => server.exited));
    await kms?.stop();
    await chain?.stop();
    rmSync(journalDir, { recursive: true, force: true });
  });

  const start = async (env: Record<string, string> = {}) => {
    const server = await startServerProcess({
      RPC_URL: chain.rpcUrl,
      TOKEN_ADDRESS: chain.demo.tokenAddress,
      AWS_KMS_KEY_ID: "alias/hot-wallet",
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      ...kms.env,
      ...env,
    });
    running.push(server);
    return server;
  };
  const transfer = async (server: ServerProcess, body: object, key?: string) => {
    const response = await request(`${server.baseUrl}/transfer`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTHORIZATION, ...(key ? { "idempotency-key": key } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.statusCode, body: await response.body.text() };
  };

  it("sends from the KMS key's address; the record and the lookup are ethers v5's, byte for byte", async () => {
    const server = await start();
    expect(server.output()).toMatch(new RegExp(`"wallet":"${kmsAddress}".*"signer":"aws-kms key alias/hot-wallet"`));
    const recipient = freshAddress();
    const sent = await transfer(server, { toAddress: recipient, amount: "2.5" });
    expect(sent.status).toBe(200);
    const { result } = JSON.parse(sent.body) as { result: { hash: string; from: string; confirmations: number } };
    expect(result).toMatchObject({ from: kmsAddress, confirmations: 0 });
    const receipt = await waitForReceipt(chain, result.hash, 10_000);
    expect(receipt.status).toBe(1);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("2.5", chain.decimals));
    // The node recovered the KMS key's address from the signature on chain.
    expect((await chain.provider.getTransaction(result.hash))?.from).toBe(kmsAddress);
    const lookup = await request(`${server.baseUrl}/getTransaction`, { method: "POST", headers: { "content-type": "application/json", ...AUTHORIZATION }, body: JSON.stringify({ Tx: result.hash }) });
    const v5 = JSON.stringify({ result: await new ethers5.providers.JsonRpcProvider(chain.rpcUrl).getTransaction(result.hash) });
    expect(await lookup.body.text()).toBe(v5);
    server.child.kill("SIGTERM");
    await server.exited;
  });

  it("a keyed burst cut by kill -9: after the restart every key answers its first answer, and each recipient is paid once", async () => {
    const burst = Array.from({ length: 10 }, (_, index) => ({ key: `kms-burst-${kind}-${index}`, body: { toAddress: freshAddress(), amount: String(index + 1) } }));
    const doomed = await start();
    const answers = burst.map((item) => transfer(doomed, item.body, item.key).catch(() => undefined));
    await new Promise((resolve) => setTimeout(resolve, 120));
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    const first = await Promise.all(answers);

    const restarted = await start();
    const replays = [];
    for (const [index, item] of burst.entries()) {
      const replay = await transfer(restarted, item.body, item.key);
      const before = first[index];
      // An answer the client got is repeated exactly; one it never got is given now.
      if (before && before.status !== 503) expect(replay).toEqual(before);
      expect([200, 417]).toContain(replay.status);
      replays.push(replay);
    }
    for (const [index, replay] of replays.entries()) {
      const expected = replay.status === 200 ? parseUnits(burst[index].body.amount, chain.decimals) : 0n;
      if (replay.status === 200) await waitForReceipt(chain, (JSON.parse(replay.body) as { result: { hash: string } }).result.hash, 15_000);
      expect(await tokenBalanceOf(chain, burst[index].body.toAddress)).toBe(expected);
    }
    expect(await chain.provider.getTransactionCount(kmsAddress, "latest")).toBe(await chain.provider.getTransactionCount(kmsAddress, "pending"));
    // Replayed once more, nothing changes.
    for (const [index, item] of burst.entries()) expect(await transfer(restarted, item.body, item.key)).toEqual(replays[index]);
  }, 60_000);

  it("answers 503 SIGNER_UNAVAILABLE with nothing sent while KMS is unreachable, and prints no AWS secret anywhere", async () => {
    const cutOff = await start();
    const nonce = await chain.provider.getTransactionCount(kmsAddress, "pending");
    // KMS goes away after the service started with it.
    await kms.stop();
    const refused = await transfer(cutOff, { toAddress: freshAddress(), amount: "1" }, "kms-outage");
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ code: "SIGNER_UNAVAILABLE" });
    // The SDK's words (the endpoint, an account or a key's ARN) are for the log, not for a client.
    expect(refused.body).not.toContain(new URL(kms.env.AWS_ENDPOINT_URL_KMS).host);
    expect(refused.body).not.toMatch(/ECONNREFUSED|arn:aws/);
    expect(await chain.provider.getTransactionCount(kmsAddress, "pending")).toBe(nonce);
    await cutOff.waitForOutput("SIGNER_UNAVAILABLE", 5_000);
    expect(cutOff.output()).toMatch(/"detail":"[^"]*ECONNREFUSED/);
    for (const each of running) expect(each.output()).not.toContain(kms.env.AWS_SECRET_ACCESS_KEY);
  }, 60_000);
});

describe.skipIf(missing)(missing ? `AWS KMS keys the service refuses: NOT RUN, ${missing}` : "AWS KMS keys the service refuses to start with", () => {
  let chain: TestChain;
  let kms: TestKms;
  beforeAll(async () => {
    [chain, kms] = await Promise.all([startTestChainOn("anvil"), startTestKms()]);
  }, 60_000);
  afterAll(async () => {
    await kms?.stop();
    await chain?.stop();
  });

  const startupFailure = async (keyId: string) => {
    const failure = await startServerProcess({ RPC_URL: chain.rpcUrl, TOKEN_ADDRESS: chain.demo.tokenAddress, AWS_KMS_KEY_ID: keyId, JOURNAL_PATH: join(tmpdir(), `never-${Date.now()}.sqlite`), ...kms.env }).then(
      (server) => {
        server.child.kill("SIGKILL");
        throw new Error("the service started");
      },
      (error: Error) => error.message,
    );
    expect(failure).not.toContain(kms.env.AWS_SECRET_ACCESS_KEY);
    return failure;
  };

  it("a P-256 key: says the key spec is wrong", async () => {
    expect(await startupFailure(await kms.createKey("ECC_NIST_P256"))).toMatch(/cannot start: AWS_KMS_KEY_ID: key \S+ is ECC_NIST_P256|cannot start: AWS_KMS_KEY_ID: key \S+ is prime256v1/);
  });

  it("an unknown key id: says KMS does not know it", async () => {
    expect(await startupFailure("0b0e1e5a-0000-4000-8000-000000000000")).toMatch(/cannot start: AWS_KMS_KEY_ID: cannot read the public key of 0b0e1e5a-0000-4000-8000-000000000000 \(kms:GetPublicKey\): NotFoundException/);
  });
});
