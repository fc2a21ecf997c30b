/**
 * NETWORKS_FILE end to end: the real entry point reads the file (a variable filled in), pays on the network
 * it names with the token's own limit, names both in its answers, and refuses to start, naming the entry,
 * when the file and the chain disagree.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits } from "ethers";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { freePort } from "../helpers/free-port.js";
import { AUTHORIZATION } from "../helpers/service.js";
import { type TestChain, freshAddress, startTestChain, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";

describe("a service started with NETWORKS_FILE", () => {
  let chain: TestChain;
  let dir: string;
  let server: ServerProcess;

  const fileOf = (network: Record<string, unknown>) => ({
    networks: [{ name: "devnet", chainId: 31337, rpcUrls: ["${DEVNET_RPC_URL}"], tokens: { DEMO: { address: chain.demo.tokenAddress, maxTransferAmount: "100" } }, ...network }],
  });
  const startWith = (document: unknown, env: Record<string, string> = { DEVNET_RPC_URL: chain.rpcUrl }) => {
    const path = join(dir, `networks-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(path, JSON.stringify(document));
    return startServerProcess({ NETWORKS_FILE: path, PRIVATE_KEY: chain.target.privateKey, JOURNAL_PATH: join(dir, "journal.sqlite"), ...env });
  };
  const post = async (path: string, body: unknown) => {
    const response = await request(`${server.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...AUTHORIZATION }, body: JSON.stringify(body) });
    return { statusCode: response.statusCode, body: (await response.body.json()) as Record<string, any> };
  };
  const get = async (path: string) => {
    const response = await request(`${server.baseUrl}${path}`, { headers: AUTHORIZATION });
    return { statusCode: response.statusCode, body: (await response.body.json()) as Record<string, any> };
  };

  beforeAll(async () => {
    chain = await startTestChain();
    dir = mkdtempSync(join(tmpdir(), "networks-file-"));
    server = await startWith(fileOf({}));
  }, 60_000);
  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await server?.exited;
    await chain?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("pays on the file's network in its token, by name or by default, and names both everywhere", async () => {
    expect(server.output()).toMatch(/"network":"devnet".*"tokenSymbol":"DEMO".*"msg":"service ready"/);
    const recipient = freshAddress();
    const named = await post("/transfer", { toAddress: recipient, amount: "2", network: "devnet", token: "demo" });
    const byDefault = await post("/transfer", { toAddress: recipient, amount: "3" });
    expect([named.statusCode, byDefault.statusCode]).toEqual([200, 200]);
    for (const { body } of [named, byDefault]) await waitForReceipt(chain, body.result.hash, 10_000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("5", 18));

    const status = await get(`/transactions/${named.body.result.hash}`);
    expect(status.body).toMatchObject({ network: "devnet", chainId: 31337, transfer: { token: chain.demo.tokenAddress, tokenSymbol: "DEMO" } });
    const history = await get("/transfers?network=devnet&token=DEMO");
    expect(history.body.transfers.map((item: Record<string, any>) => [item.hash, item.network, item.chainId, item.transfer.tokenSymbol])).toEqual([
      [byDefault.body.result.hash, "devnet", 31337, "DEMO"],
      [named.body.result.hash, "devnet", 31337, "DEMO"],
    ]);
    expect((await post("/getTransaction", { Tx: named.body.result.hash, network: "devnet" })).body.result.hash).toBe(named.body.result.hash);
  });

  it("holds the token's own limit, and answers a network or token it does not serve with 400, moving nothing", async () => {
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
    const over = await post("/transfer", { toAddress: freshAddress(), amount: "101" });
    expect({ statusCode: over.statusCode, code: over.body.code }).toEqual({ statusCode: 403, code: "AMOUNT_ABOVE_LIMIT" });
    const elsewhere = await post("/transfer", { toAddress: freshAddress(), amount: "1", network: "base" });
    expect({ statusCode: elsewhere.statusCode, code: elsewhere.body.code }).toEqual({ statusCode: 400, code: "UNKNOWN_NETWORK" });
    const otherToken = await post("/transfer", { toAddress: freshAddress(), amount: "1", token: "USDC" });
    expect({ statusCode: otherToken.statusCode, code: otherToken.body.code }).toEqual({ statusCode: 400, code: "UNKNOWN_TOKEN" });
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending")).toBe(nonceBefore);
  });

  describe("refuses to start, naming the file's entry and never a value from the environment", () => {
    const failureOf = (document: unknown, env?: Record<string, string>) =>
      startWith(document, env).then(
        (started) => {
          started.child.kill("SIGKILL");
          throw new Error("the service started");
        },
        (error: Error) => error.message,
      );

    it("a chain id the endpoints do not serve", async () => {
      expect(await failureOf(fileOf({ chainId: 8453 }))).toMatch(/cannot start: NETWORKS_FILE networks "devnet" chainId: expected 8453, but the node at \S+ serves chain 31337/);
    });

    it("a token address without a contract on the chain", async () => {
      const empty = freshAddress();
      expect(await failureOf(fileOf({ tokens: { DEMO: empty } }))).toContain(`cannot start: NETWORKS_FILE networks "devnet" tokens.DEMO: no contract at ${empty} on chain 31337`);
    });

    it("its one network's endpoints answering nothing (with no other network to serve, it is not started without them)", async () => {
      const port = await freePort();
      expect(await failureOf(fileOf({}), { DEVNET_RPC_URL: `http://127.0.0.1:${port}` })).toMatch(/cannot start: NETWORKS_FILE networks "devnet" rpcUrls: the node at \S+ did not answer eth_chainId/);
    });

    it("an unknown field, and a variable that is not set", async () => {
      expect(await failureOf(fileOf({ rpcUrl: chain.rpcUrl }))).toContain("networks[0].rpcUrl: unknown field");
      expect(await failureOf(fileOf({}), { DEVNET_RPC_URL: "" })).toContain("networks[0].rpcUrls[0]: names ${DEVNET_RPC_URL}, which is not set");
    });

    it("an endpoint URL that is not one, without printing it (it may hold a provider's key)", async () => {
      const message = await failureOf(fileOf({}), { DEVNET_RPC_URL: "ftp://provider.example/key-4f1c9a" });
      expect(message).toContain("rpcUrls: endpoint 1 is not a valid http:// or https:// URL");
      expect(message).not.toContain("key-4f1c9a");
    });
  });
});
