/**
 * The service started with its key in a keystore file and in a PKCS#11 HSM (SoftHSM2) instead of
 * PRIVATE_KEY: the startup log names the signer, and a transfer is signed by that key on a real chain.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Wallet, encryptKeystoreJsonSync, parseUnits } from "ethers";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPkcs11Signer } from "../../src/signers/pkcs11-signer.js";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION } from "../helpers/service.js";
import { type TestHsm, createTestHsm, softHsmMissing } from "../helpers/softhsm.js";
import { type TestChain, freshAddress, setEthBalance, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";

describe("the service with a key outside the environment", () => {
  let chain: TestChain;
  let dir: string;
  const running: ServerProcess[] = [];
  beforeAll(async () => {
    chain = await startTestChainOn("hardhat");
    dir = mkdtempSync(join(tmpdir(), "key-signers-"));
  }, 60_000);
  afterAll(async () => {
    for (const server of running) server.child.kill("SIGKILL");
    await Promise.all(running.map((server) => server.exited));
    await chain?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const fund = async (address: string) => {
    await setEthBalance(chain, address, "10");
    await (await chain.token.getFunction("transfer")(address, parseUnits("100", chain.decimals))).wait();
  };
  // One transfer through the service; the node must recover `address` as its sender.
  const transferFrom = async (address: string, env: Record<string, string>) => {
    const server = await startServerProcess({ RPC_URL: chain.rpcUrl, TOKEN_ADDRESS: chain.demo.tokenAddress, JOURNAL_PATH: join(dir, `${address}.sqlite`), ...env });
    running.push(server);
    const recipient = freshAddress();
    const response = await request(`${server.baseUrl}/transfer`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTHORIZATION },
      body: JSON.stringify({ toAddress: recipient, amount: "3" }),
    });
    expect(response.statusCode).toBe(200);
    const { result } = (await response.body.json()) as { result: { hash: string; from: string } };
    expect(result.from).toBe(address);
    await waitForReceipt(chain, result.hash, 10_000);
    expect((await chain.provider.getTransaction(result.hash))?.from).toBe(address);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("3", chain.decimals));
    return server;
  };

  it("a keystore (KEYSTORE_PATH, KEYSTORE_PASSWORD_FILE)", async () => {
    const wallet = new Wallet(Wallet.createRandom().privateKey);
    writeFileSync(join(dir, "wallet.json"), encryptKeystoreJsonSync(wallet, "s3cret passphrase", { scrypt: { N: 1 << 12 } }));
    writeFileSync(join(dir, "password"), "s3cret passphrase\n");
    await fund(wallet.address);
    // With webhooks on: the startup line names where events go, by host (the path may hold a receiver's token).
    const webhooks = { WEBHOOK_URL: "http://127.0.0.1:9/hooks?token=receiver-token-123", WEBHOOK_SECRET: `whsec_${randomBytes(32).toString("base64")}` };
    const server = await transferFrom(wallet.address, { KEYSTORE_PATH: join(dir, "wallet.json"), KEYSTORE_PASSWORD_FILE: join(dir, "password"), ...webhooks });
    expect(server.output()).toContain(`"signer":"keystore in ${join(dir, "wallet.json")}`);
    expect(server.output()).toContain('"webhooks":["127.0.0.1:9"]');
    expect(server.output()).not.toContain("s3cret");
    expect(server.output()).not.toContain("receiver-token-123");
  });

  // A pool of two HSM keys (PKCS11_KEY_LABEL=hot-1,hot-2): one library in the process, opened once for both
  // lanes; each lane's transfers are signed by its own key.
  const hsmMissingForPool = softHsmMissing();
  it.skipIf(hsmMissingForPool)(hsmMissingForPool ? `a pool of PKCS#11 keys: NOT RUN, ${hsmMissingForPool}` : "a pool of PKCS#11 keys on one HSM", async () => {
    const hsm: TestHsm = createTestHsm();
    try {
      const { pinFile } = hsm.createToken("pool", "564738");
      const addresses: string[] = [];
      for (const keyLabel of ["hot-1", "hot-2"]) {
        hsm.generateKey("pool", "564738", keyLabel);
        const probe = await openPkcs11Signer({ modulePath: hsm.modulePath, tokenLabel: "pool", keyLabel, pinFile });
        addresses.push(probe.address);
        await probe.close();
        await fund(probe.address);
      }
      const server = await startServerProcess({
        RPC_URL: chain.rpcUrl,
        TOKEN_ADDRESS: chain.demo.tokenAddress,
        JOURNAL_PATH: join(dir, "pkcs11-pool.sqlite"),
        ...hsm.env,
        PKCS11_MODULE: hsm.modulePath,
        PKCS11_TOKEN_LABEL: "pool",
        PKCS11_KEY_LABEL: "hot-1,hot-2",
        PKCS11_PIN_FILE: pinFile,
      });
      running.push(server);
      const recipients = Array.from({ length: 6 }, () => freshAddress());
      const answers = await Promise.all(
        recipients.map(async (recipient) => {
          const response = await request(`${server.baseUrl}/transfer`, {
            method: "POST",
            headers: { "content-type": "application/json", ...AUTHORIZATION },
            body: JSON.stringify({ toAddress: recipient, amount: "1" }),
          });
          return { statusCode: response.statusCode, body: (await response.body.json()) as { result: { hash: string; from: string } } };
        }),
      );
      expect(answers.map((answer) => answer.statusCode)).toEqual(recipients.map(() => 200));
      for (const [index, { body }] of answers.entries()) {
        await waitForReceipt(chain, body.result.hash, 10_000);
        expect(addresses).toContain((await chain.provider.getTransaction(body.result.hash))?.from);
        expect(await tokenBalanceOf(chain, recipients[index])).toBe(parseUnits("1", chain.decimals));
      }
      // Routed to the lane with the fewest unmined transactions: both keys signed.
      expect(new Set(answers.map(({ body }) => body.result.from))).toEqual(new Set(addresses));
      expect(server.output()).not.toContain("564738");
    } finally {
      hsm.remove();
    }
  }, 60_000);

  const hsmMissing = softHsmMissing();
  it.skipIf(hsmMissing)(hsmMissing ? `a PKCS#11 HSM: NOT RUN, ${hsmMissing}` : "a PKCS#11 HSM (SoftHSM2)", async () => {
    const hsm: TestHsm = createTestHsm();
    try {
      const { pinFile } = hsm.createToken("wallet", "918273");
      hsm.generateKey("wallet", "918273", "hot");
      const settings = { modulePath: hsm.modulePath, tokenLabel: "wallet", keyLabel: "hot", pinFile };
      const probe = await openPkcs11Signer(settings);
      const address = probe.address;
      await probe.close();
      await fund(address);
      const server = await transferFrom(address, { ...hsm.env, PKCS11_MODULE: hsm.modulePath, PKCS11_TOKEN_LABEL: "wallet", PKCS11_KEY_LABEL: "hot", PKCS11_PIN_FILE: pinFile });
      expect(server.output()).toContain('"signer":"pkcs11 key \\"hot\\" on token \\"wallet\\"');
      expect(server.output()).toContain('"webhooks":"off"');
      expect(server.output()).not.toContain("918273");
    } finally {
      hsm.remove();
    }
  }, 30_000);
});
