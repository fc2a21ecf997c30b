/**
 * The typed client (packages/client) against the real service, as a child process on anvil: its types are
 * the service's OpenAPI document's; a transfer's key is kept for its retries, so a dropped connection after
 * the service answered and a 409 in flight each end with the transfer paid once; a 503 with the key unused
 * is retried and a 417 is not; the waits; a real webhook delivery verified; and, installed from its package
 * into a fresh project, a transfer through a kill -9 of the service mid-request paid once. Node faults come
 * from an RPC proxy, lost answers from a TCP proxy in front of the service.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { toBeHex } from "ethers";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NoAnswerError, ServiceError, TransferServiceClient, WebhookVerificationError, verifyWebhook } from "../../packages/client/src/index.js";
import { type OpenApiDocument, clientTypesOf } from "../../scripts/client-types.js";
import { freePort } from "../helpers/free-port.js";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.js";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { TEST_API_KEY } from "../helpers/service.js";
import { type TcpProxy, startTcpProxy } from "../helpers/tcp-proxy.js";
import { type TestChain, freshAddress, startTestChain, tokenBalanceOf } from "../helpers/test-chain.js";
import { type WebhookReceiver, startWebhookReceiver } from "../helpers/webhook-receiver.js";

const runFile = promisify(execFile);
const TYPES_FILE = new URL("../../packages/client/src/api-types.ts", import.meta.url);
const ROOT = new URL("../../", import.meta.url).pathname;
const SECRET = `whsec_${Buffer.from("a webhook secret of thirty-two bytes").toString("base64")}`;
const tokens = (whole: number) => BigInt(whole) * 10n ** 18n;

describe("the typed client against the service", () => {
  let chain: TestChain;
  let rpc: RpcProxy;
  let receiver: WebhookReceiver;
  let server: ServerProcess;
  let lossy: TcpProxy;
  let env: Record<string, string>;
  let journalDir: string;
  let baseUrl: string;
  // Each wait between two attempts, as the client took it (an attempt without a wait before it is the first).
  const waits: number[] = [];
  const clientOf = (url: string, options: { attempts?: number } = {}) =>
    new TransferServiceClient({
      baseUrl: url,
      apiKey: TEST_API_KEY,
      ...options,
      sleep: (ms) => {
        waits.push(ms);
        return new Promise((resolve) => setTimeout(resolve, Math.min(ms, 1_000)));
      },
    });

  beforeAll(async () => {
    chain = await startTestChain();
    rpc = await startRpcProxy(chain.rpcUrl);
    receiver = await startWebhookReceiver();
    journalDir = mkdtempSync(join(tmpdir(), "client-"));
    const port = await freePort();
    env = {
      RPC_URL: rpc.url,
      PRIVATE_KEY: chain.demo.privateKey,
      TOKEN_ADDRESS: chain.demo.tokenAddress,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      PORT: String(port),
      RPC_TIMEOUT_MS: "3000",
      REBROADCAST_AFTER_MS: "500",
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: SECRET,
    };
    server = await startServerProcess(env);
    baseUrl = `http://127.0.0.1:${port}`;
    lossy = await startTcpProxy(port);
  });
  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await lossy?.close();
    await receiver?.close();
    await rpc?.close();
    await chain?.stop();
    if (journalDir) rmSync(journalDir, { recursive: true, force: true });
  });

  it("is typed from the service's OpenAPI document as the service serves it now (UPDATE_CLIENT_TYPES=1 writes it again)", async () => {
    const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as OpenApiDocument;
    const written = clientTypesOf(document);
    if (process.env.UPDATE_CLIENT_TYPES === "1") writeFileSync(TYPES_FILE, written);
    expect(readFileSync(TYPES_FILE, "utf8"), "packages/client/src/api-types.ts is not what the service's OpenAPI document says: UPDATE_CLIENT_TYPES=1 npx vitest run test/client/client.test.ts").toBe(written);
  });

  it("makes a transfer's key and keeps it: a connection dropped after the service answered is retried with it, and the transfer is paid once", async () => {
    const recipient = freshAddress();
    waits.length = 0;
    lossy.loseRepliesOfNextConnections(1);
    const answer = await clientOf(`http://127.0.0.1:${lossy.port}`).transfer({ toAddress: recipient, amount: "2" });
    expect(answer.kind).toBe("sent");
    expect(answer.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    // The first request was answered and its answer lost: the retry carried its key, and got that answer again.
    expect(answer.replayed).toBe(true);
    expect(waits).toHaveLength(1);
    if (answer.kind !== "sent") throw new Error("not sent");
    expect(answer.body.confirmations).toBe(0);
    await chain.provider.waitForTransaction(answer.body.hash, 1, 10_000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(tokens(2));
  });

  it("two calls with one key at once: the second's 409 in flight is retried and answers the first's transfer; paid once", async () => {
    const recipient = freshAddress();
    let delayed = 0;
    rpc.fault = {
      kind: "script",
      answer: async ({ method }) => {
        if (method === "eth_sendRawTransaction" && delayed++ === 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
        return undefined;
      },
    };
    const client = clientOf(baseUrl);
    const first = client.transfer({ toAddress: recipient, amount: "1" }, { idempotencyKey: "client-twice" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await client.transfer({ toAddress: recipient, amount: "1" }, { idempotencyKey: "client-twice" });
    const answered = await first;
    rpc.fault = undefined;
    if (answered.kind !== "sent" || second.kind !== "sent") throw new Error("not sent");
    expect(second.replayed).toBe(true);
    expect(second.body.hash).toBe(answered.body.hash);
    await chain.provider.waitForTransaction(answered.body.hash, 1, 10_000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(tokens(1));
  });

  it("retries a 503 whose key is unused, and never a 417", async () => {
    const recipient = freshAddress();
    let hangs = 1;
    // The first estimate never answers: 503 TIMEOUT, nothing sent.
    rpc.fault = { kind: "script", answer: ({ method }) => (method === "eth_estimateGas" && hangs-- > 0 ? "hang" : undefined) };
    waits.length = 0;
    const answer = await clientOf(baseUrl).transfer({ toAddress: recipient, amount: "1" });
    rpc.fault = undefined;
    expect(answer.kind).toBe("sent");
    expect(answer.replayed).toBe(false);
    expect(waits).toHaveLength(1);

    waits.length = 0;
    const refused = await clientOf(baseUrl)
      .transfer({ toAddress: freshAddress(), amount: "100000000" })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused).toMatchObject({ statusCode: 417, code: "INSUFFICIENT_TOKEN_BALANCE" });
    expect(waits).toEqual([]);
  });

  it("says a request without an answer is repeated with its key, and does not repeat an operator's action that may have reached the service", async () => {
    const down = `http://127.0.0.1:${await freePort()}`;
    const noAnswer = await clientOf(down, { attempts: 2 })
      .transfer({ toAddress: freshAddress(), amount: "1" }, { idempotencyKey: "client-nowhere" })
      .catch((error: unknown) => error);
    expect(noAnswer).toBeInstanceOf(NoAnswerError);
    expect((noAnswer as NoAnswerError).message).toContain("client-nowhere");
    // An approval whose answer was lost is not sent again: it may have been decided.
    waits.length = 0;
    lossy.loseNextReplies();
    lossy.loseRepliesOfNextConnections(1);
    const lost = await clientOf(`http://127.0.0.1:${lossy.port}`)
      .call("POST /transfers/{id}/approve", { params: { id: "999999" } })
      .catch((error: unknown) => error);
    expect(lost).toBeInstanceOf(NoAnswerError);
    expect(waits).toEqual([]);
  });

  it("waits for a confirmation, then for finality", async () => {
    const client = clientOf(baseUrl);
    const answer = await client.transfer({ toAddress: freshAddress(), amount: "1" });
    if (answer.kind !== "sent") throw new Error("not sent");
    const confirmed = await client.waitForConfirmation(answer.body.hash, { pollMs: 100, timeoutMs: 15_000 });
    expect(confirmed).toMatchObject({ state: "confirmed", finalized: false });
    expect(confirmed.confirmations).toBeGreaterThanOrEqual(1);
    // Finality counts from the block the service settled it at (transfer.confirmed tells): anvil's finalized
    // block is 64 below its head.
    const deadline = Date.now() + 15_000;
    while (!receiver.received.some((each) => each.body.includes(answer.body.hash) && each.body.includes("transfer.confirmed")) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await chain.provider.send("anvil_mine", [toBeHex(70)]);
    const final = await client.waitForFinal(answer.body.hash, { pollMs: 100, timeoutMs: 15_000 });
    expect(final).toMatchObject({ state: "confirmed", finalized: true });
    // A typed call of any other route.
    const listed = await client.call("GET /transactions/{hash}", { params: { hash: answer.body.hash } });
    expect(listed.statusCode).toBe(200);
  });

  it("verifies a real webhook delivery, and refuses one altered or replayed", async () => {
    const answer = await clientOf(baseUrl).transfer({ toAddress: freshAddress(), amount: "1" });
    if (answer.kind !== "sent") throw new Error("not sent");
    const deadline = Date.now() + 15_000;
    const deliveryOf = () => receiver.received.find((each) => each.body.includes(answer.body.hash) && each.body.includes("transfer.confirmed"));
    while (!deliveryOf() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const delivery = deliveryOf();
    if (!delivery) throw new Error("no transfer.confirmed delivered");
    const headers = delivery.headers as Record<string, string>;
    const event = verifyWebhook(SECRET, headers, delivery.body);
    expect(event).toMatchObject({ type: "transfer.confirmed", data: { transferHash: answer.body.hash } });
    // What the Standard Webhooks library reads the same way.
    expect(new Webhook(SECRET).verify(delivery.body, headers)).toEqual(event);
    expect(() => verifyWebhook(SECRET, headers, delivery.body.replace('"amountInTokens":"1"', '"amountInTokens":"9"'))).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(SECRET, headers, delivery.body, { nowSeconds: Number(headers["webhook-timestamp"]) + 3_600 })).toThrow(/too far/);
    expect(() => verifyWebhook(`whsec_${Buffer.from("another secret").toString("base64")}`, headers, delivery.body)).toThrow(/no webhook-signature/);
  });

  it("installs into a fresh project from its package with one npm install, type-checks there, runs the README's example, and pays once through a kill -9 of the service mid-request", async () => {
    const project = mkdtempSync(join(tmpdir(), "client-project-"));
    try {
      execFileSync("npm", ["pack", join(ROOT, "packages/client"), "--pack-destination", project, "--silent"], { cwd: ROOT, stdio: "pipe" });
      const tarball = readdirSync(project).find((name) => name.endsWith(".tgz"));
      expect(tarball).toBeDefined();
      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "a-backend", private: true, type: "module" }));
      // No dependencies of its own: nothing is fetched.
      execFileSync("npm", ["install", `./${tarball}`, "--offline", "--no-audit", "--no-fund", "--silent"], { cwd: project, stdio: "pipe" });
      writeFileSync(
        join(project, "consumer.ts"),
        [
          'import { type TransferRequest, TransferServiceClient } from "token-transfer-client";',
          'const client = new TransferServiceClient({ baseUrl: "http://127.0.0.1:3000", apiKey: "key" });',
          'export const request: TransferRequest = { toAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", amount: "1.5" };',
          "// @ts-expect-error amount is required",
          'export const missing: TransferRequest = { toAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" };',
          "export const confirmations = async (hash: string): Promise<number> => (await client.status(hash)).confirmations;",
          "// @ts-expect-error a status has no such field",
          "export const wrong = async (hash: string) => (await client.status(hash)).confirmationCount;",
          "",
        ].join("\n"),
      );
      const tsc = join(ROOT, "node_modules/.bin/tsc");
      execFileSync(tsc, ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", "--skipLibCheck", "--types", "node", "--typeRoots", join(ROOT, "node_modules/@types"), "consumer.ts"], { cwd: project, stdio: "pipe" });

      const readme = readFileSync(join(ROOT, "README.md"), "utf8");
      const example = /client-example[^\n]*\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
      expect(example, "README's client example").toBeDefined();
      writeFileSync(join(project, "example.mjs"), (example as string).replace("http://127.0.0.1:3000", baseUrl));
      // Not execFileSync: the node's proxy runs in this process, and must answer meanwhile.
      const { stdout: printed } = await runFile(process.execPath, ["example.mjs"], { cwd: project, env: { ...process.env, KEY: TEST_API_KEY }, encoding: "utf8", timeout: 60_000 });
      expect(printed.trim()).toBe("confirmed 1 1.5");

      // The node takes the broadcast and its answer never comes: the service is mid-request when it dies,
      // and the project's client asks again with its key until the service is back.
      writeFileSync(
        join(project, "pay.mjs"),
        [
          'import { TransferServiceClient } from "token-transfer-client";',
          "const client = new TransferServiceClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.KEY, attempts: 30 });",
          'const sent = await client.transfer({ toAddress: process.env.TO, amount: "3" }, { idempotencyKey: "order-kill-9" });',
          "console.log(JSON.stringify({ kind: sent.kind, hash: sent.body.hash, replayed: sent.replayed }));",
          "",
        ].join("\n"),
      );
      const recipient = freshAddress();
      const wallet = chain.demo.walletAddress;
      const before = await chain.provider.getTransactionCount(wallet, "latest");
      rpc.fault = { kind: "swallow-reply", methods: ["eth_sendRawTransaction"] };
      const payer = spawn(process.execPath, ["pay.mjs"], { cwd: project, env: { ...process.env, BASE_URL: baseUrl, KEY: TEST_API_KEY, TO: recipient }, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      payer.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      payer.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const payerExited = new Promise<number | null>((resolve) => payer.once("exit", resolve));
      const deadline = Date.now() + 15_000;
      while ((await chain.provider.getTransactionCount(wallet, "latest")) === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      server.child.kill("SIGKILL");
      await server.exited;
      rpc.fault = undefined;
      server = await startServerProcess(env);
      expect(await payerExited, output).toBe(0);
      const answer = JSON.parse(output.trim()) as { kind: string; hash: string; replayed: boolean };
      // Answered by the restarted service from its journal: the transaction the dead one signed and sent.
      expect(answer).toMatchObject({ kind: "sent", replayed: true });
      expect((await chain.provider.getTransaction(answer.hash))?.nonce).toBe(before);
      expect(await chain.provider.getTransactionCount(wallet, "latest")).toBe(before + 1);
      expect(await tokenBalanceOf(chain, recipient)).toBe(tokens(3));
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
