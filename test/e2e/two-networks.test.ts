/**
 * One deployment paying on two chains at once (two nodes with different chain ids; on the default, two
 * tokens and the native coin, on the other one token), as a NETWORKS_FILE describes them, through the real
 * entry point: transfers, lookups, history, webhooks and /wallet name the network and the token; each chain
 * keeps one nonce sequence for all its tokens; a key is one payment wherever it went; a pending native
 * transfer can be cancelled; an outage of one chain's node leaves the other's transfers untouched; kill -9
 * and a replay pay nothing twice.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Contract, parseEther, parseUnits } from "ethers";
import demoToken from "../../contracts/artifacts/DemoToken.json" with { type: "json" };
import { deployDemoToken } from "../../src/dev/demo-chain.js";
import { request } from "undici";
import { afterAll, beforeAll, expect } from "vitest";
import { type RpcProxy, startRpcProxy } from "../helpers/rpc-proxy.js";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { CHROMIUM_PATH, chromiumMissing } from "../helpers/chromium.js";
import { AUTHORIZATION, TEST_API_KEY } from "../helpers/service.js";
import { type TestChain, freshAddress, setEthBalance, startTestChain, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";
import { waitUntil } from "../helpers/wait-until.js";
import { type WebhookReceiver, startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { describe, it } from "../helpers/suites-side-by-side.js";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const run = promisify(execFile);
const noBrowser = chromiumMissing();

// The default network on each node implementation; the second is an anvil with another chain id.
describe.each(["anvil", "hardhat"] as const)("one deployment on two networks, the default on %s", (kind) => {
  let alpha: TestChain;
  let beta: TestChain;
  // Each node is reached through a proxy that can go down.
  let alphaNode: RpcProxy;
  let betaNode: RpcProxy;
  let receiver: WebhookReceiver;
  // A second token on alpha, of 6 decimals, held by the hot wallet.
  let ccc: Contract;
  let dir: string;
  let server: ServerProcess;

  const start = () =>
    startServerProcess({
      NETWORKS_FILE: join(dir, "networks.json"),
      ALPHA_RPC_URL: alphaNode.url,
      BETA_RPC_URL: betaNode.url,
      PRIVATE_KEY: alpha.target.privateKey,
      JOURNAL_PATH: join(dir, "journal.sqlite"),
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_RETRY_INITIAL_MS: "200",
      RPC_TIMEOUT_MS: "2000",
    });
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await request(`${server.baseUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...AUTHORIZATION, ...headers }, body: JSON.stringify(body) });
    return { statusCode: response.statusCode, headers: response.headers, body: (await response.body.json()) as Record<string, any> };
  };
  const get = async (path: string) => {
    const response = await request(`${server.baseUrl}${path}`, { headers: AUTHORIZATION });
    return { statusCode: response.statusCode, body: (await response.body.json()) as Record<string, any> };
  };
  const wallet = () => alpha.demo.walletAddress;

  beforeAll(async () => {
    alpha = await startTestChainOn(kind);
    beta = await startTestChain(["--chain-id", "31338"]);
    alphaNode = await startRpcProxy(alpha.rpcUrl);
    betaNode = await startRpcProxy(beta.rpcUrl);
    // One signer serves every network: alpha's wallet gets ETH and beta's token on beta too.
    await setEthBalance(beta, wallet(), "1000");
    await (await beta.token.getFunction("transfer")(wallet(), parseUnits("1000", 18))).wait();
    ccc = new Contract(await deployDemoToken(alpha.hotWallet, 6, 1_000_000n), demoToken.abi, alpha.provider);
    receiver = await startWebhookReceiver();
    dir = mkdtempSync(join(tmpdir(), "two-networks-"));
    writeFileSync(
      join(dir, "networks.json"),
      JSON.stringify({
        networks: [
          {
            name: "alpha",
            chainId: 31337,
            rpcUrls: ["${ALPHA_RPC_URL}"],
            tokens: { AAA: alpha.demo.tokenAddress, CCC: { address: await ccc.getAddress(), maxTransferAmount: "10" }, ETH: "native" },
          },
          { name: "beta", chainId: 31338, rpcUrls: ["${BETA_RPC_URL}"], tokens: { BBB: { address: beta.demo.tokenAddress, maxTransferAmount: "50" } } },
        ],
        default: { network: "alpha", token: "AAA" },
      }),
    );
    // The console's script, compiled as `npm run build` does, before the service reads it at its start.
    if (!noBrowser) await run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.console.json"]);
    server = await start();
  }, 90_000);
  afterAll(async () => {
    server?.child.kill("SIGKILL");
    await server?.exited;
    await receiver?.close();
    await betaNode?.close();
    await alphaNode?.close();
    await alpha?.stop();
    await beta?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("pays on each network in its token, each with its own nonces, and names the network everywhere", async () => {
    expect(server.output()).toMatch(/"networks":\["alpha \(chain 31337, AAA 0x[0-9a-fA-F]{40}, CCC 0x[0-9a-fA-F]{40}, ETH native\)","beta \(chain 31338, BBB 0x[0-9a-fA-F]{40}\)"\]/);
    const recipient = freshAddress();
    const onAlpha = await post("/transfer", { toAddress: recipient, amount: "2" });
    const onBeta = await post("/transfer", { toAddress: recipient, amount: "3", network: "beta", token: "bbb" });
    const byChainId = await post("/transfer", { toAddress: recipient, amount: "4", network: 31338 });
    expect([onAlpha, onBeta, byChainId].map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
    expect([onAlpha.body.result.chainId, onBeta.body.result.chainId, byChainId.body.result.chainId]).toEqual([31337, 31338, 31338]);
    // A wallet has a nonce sequence per chain: beta's first transfer is its nonce 0 there, whatever alpha did.
    const betaNonceBefore = onBeta.body.result.nonce;
    expect(byChainId.body.result.nonce).toBe(betaNonceBefore + 1);
    await waitForReceipt(alpha, onAlpha.body.result.hash, 10_000);
    for (const answer of [onBeta, byChainId]) await waitForReceipt(beta, answer.body.result.hash, 10_000);
    expect(await tokenBalanceOf(alpha, recipient)).toBe(parseUnits("2", 18));
    expect(await tokenBalanceOf(beta, recipient)).toBe(parseUnits("7", 18));

    // Lookups: a hash the journal knows is looked up on its own network, without naming it.
    const looked = await post("/getTransaction", { Tx: onBeta.body.result.hash });
    expect(looked.body.result).toMatchObject({ hash: onBeta.body.result.hash, chainId: 31338 });
    await waitUntil(async () => (await post("/getTransaction", { Tx: onBeta.body.result.hash })).body.result.confirmations >= 1, 10_000, "beta's transfer confirmed");
    const status = await get(`/transactions/${onBeta.body.result.hash}`);
    expect(status.body).toMatchObject({ network: "beta", chainId: 31338, state: "confirmed", transfer: { token: beta.demo.tokenAddress, tokenSymbol: "BBB", amountInTokens: "3" } });

    // History: each row names its network; the filter keeps one network's rows.
    const all = await get("/transfers?limit=10");
    expect(all.body.transfers.map((item: Record<string, any>) => [item.hash, item.network, item.transfer.tokenSymbol])).toEqual([
      [byChainId.body.result.hash, "beta", "BBB"],
      [onBeta.body.result.hash, "beta", "BBB"],
      [onAlpha.body.result.hash, "alpha", "AAA"],
    ]);
    expect((await get("/transfers?network=alpha")).body.transfers.map((item: Record<string, any>) => item.hash)).toEqual([onAlpha.body.result.hash]);
    expect((await get("/transfers?network=31338&token=BBB")).body.transfers).toHaveLength(2);

    // Webhooks: each event names the network and token it was paid on.
    await waitUntil(() => receiver.received.filter((hook) => hook.body.includes('"transfer.confirmed"')).length >= 3, 20_000, "three transfer.confirmed events");
    const confirmed = receiver.received.map((hook) => JSON.parse(hook.body)).filter((event) => event.type === "transfer.confirmed");
    const networkOfHash = new Map(confirmed.map((event) => [event.data.transferHash, [event.data.network, event.data.chainId, event.data.tokenSymbol]]));
    expect(networkOfHash.get(onAlpha.body.result.hash)).toEqual(["alpha", 31337, "AAA"]);
    expect(networkOfHash.get(onBeta.body.result.hash)).toEqual(["beta", 31338, "BBB"]);

    // Metrics: each network's gauges and counters under its own labels (a lane's address is the same on both).
    const metrics = await (await request(`${server.baseUrl}/metrics`, { headers: AUTHORIZATION })).body.text();
    expect(metrics).toMatch(/^wallet_eth_balance_wei\{network="alpha"\} \d/m);
    expect(metrics).toMatch(/^wallet_eth_balance_wei\{network="beta"\} \d/m);
    expect(metrics).toMatch(/^transfer_tokens_sent_total\{network="beta",token="BBB"\} 7$/m);
    expect(metrics).toMatch(/^transfer_tokens_sent_total\{network="alpha",token="AAA"\} 2$/m);
    expect(metrics).toContain(`lane_eth_balance_wei{network="beta",lane="${wallet()}"}`);
    expect(metrics).toMatch(/^rpc_endpoints_healthy\{network="beta"\} 1$/m);

    // /wallet: every network's wallet.
    const report = await get("/wallet");
    expect(report.body.networks.map((part: Record<string, any>) => [part.network, part.chainId, part.token.address])).toEqual([
      ["alpha", 31337, alpha.demo.tokenAddress],
      ["beta", 31338, beta.demo.tokenAddress],
    ]);
  });

  it("pays in a second token and the native coin on one network, one nonce sequence for all, each named by its symbol", async () => {
    const recipient = freshAddress();
    const inAaa = await post("/transfer", { toAddress: recipient, amount: "1" });
    const inCcc = await post("/transfer", { toAddress: recipient, amount: "2.5", token: "ccc" });
    const inEth = await post("/transfer", { toAddress: recipient, amount: "0.25", network: "alpha", token: "ETH" });
    expect([inAaa, inCcc, inEth].map((answer) => answer.statusCode)).toEqual([200, 200, 200]);
    // One wallet, one chain: one nonce sequence, whatever the token.
    expect([inCcc.body.result.nonce, inEth.body.result.nonce]).toEqual([inAaa.body.result.nonce + 1, inAaa.body.result.nonce + 2]);
    // The v5 record of a native transfer: to the recipient, the value, no call data.
    expect(inEth.body.result).toMatchObject({ to: recipient, data: "0x", value: { type: "BigNumber", hex: "0x03782dace9d90000" } });
    for (const answer of [inAaa, inCcc, inEth]) await waitForReceipt(alpha, answer.body.result.hash, 10_000);
    expect(await tokenBalanceOf(alpha, recipient)).toBe(parseUnits("1", 18));
    expect(await ccc.getFunction("balanceOf")(recipient)).toBe(parseUnits("2.5", 6));
    expect(await alpha.provider.getBalance(recipient)).toBe(parseEther("0.25"));

    // The status document describes each in its own token.
    await waitUntil(async () => (await get(`/transactions/${inEth.body.result.hash}`)).body.state === "confirmed", 10_000, "the native transfer confirmed");
    expect((await get(`/transactions/${inEth.body.result.hash}`)).body).toMatchObject({
      network: "alpha",
      transfer: { token: "native", tokenSymbol: "ETH", to: recipient, amount: "250000000000000000", amountInTokens: "0.25" },
    });
    expect((await get(`/transactions/${inCcc.body.result.hash}`)).body).toMatchObject({ transfer: { token: await ccc.getAddress(), tokenSymbol: "CCC", amount: "2500000", amountInTokens: "2.5" } });

    // History: each row names its token; the token filter keeps one token's rows of the network.
    const byHash = new Map(((await get("/transfers?limit=20")).body.transfers as Record<string, any>[]).map((item) => [item.hash, item.transfer]));
    expect(byHash.get(inEth.body.result.hash)).toMatchObject({ token: "native", tokenSymbol: "ETH", amountInTokens: "0.25" });
    expect(byHash.get(inCcc.body.result.hash)).toMatchObject({ tokenSymbol: "CCC", amountInTokens: "2.5" });
    const onlyCcc = (await get("/transfers?token=CCC")).body.transfers as Record<string, any>[];
    expect(onlyCcc.map((item) => item.hash)).toEqual([inCcc.body.result.hash]);
    const onlyNative = (await get("/transfers?network=alpha&token=native")).body.transfers as Record<string, any>[];
    expect(onlyNative.map((item) => item.hash)).toEqual([inEth.body.result.hash]);
    const csv = await (await request(`${server.baseUrl}/transfers?token=ETH`, { headers: { ...AUTHORIZATION, accept: "text/csv" } })).body.text();
    expect(csv.split("\r\n").filter(Boolean)).toHaveLength(2);
    expect(csv).toContain(inEth.body.result.hash);

    // Webhooks: each event names the token it paid in.
    await waitUntil(() => [inCcc, inEth].every((answer) => receiver.received.some((hook) => hook.body.includes(answer.body.result.hash) && hook.body.includes('"transfer.confirmed"'))), 20_000, "both confirmed");
    const confirmed = receiver.received.map((hook) => JSON.parse(hook.body)).filter((event) => event.type === "transfer.confirmed");
    const tokenOfHash = new Map(confirmed.map((event) => [event.data.transferHash, [event.data.token, event.data.tokenSymbol, event.data.amountInTokens]]));
    expect(tokenOfHash.get(inEth.body.result.hash)).toEqual(["native", "ETH", "0.25"]);
    expect(tokenOfHash.get(inCcc.body.result.hash)).toEqual([await ccc.getAddress(), "CCC", "2.5"]);

    // GET /networks: what requests may name, for any key.
    expect((await get("/networks")).body.networks).toEqual([
      {
        name: "alpha",
        chainId: 31337,
        default: true,
        running: true,
        tokens: [
          { symbol: "AAA", address: alpha.demo.tokenAddress, decimals: 18, displaySymbol: null },
          { symbol: "CCC", address: await ccc.getAddress(), decimals: 6, displaySymbol: null },
          { symbol: "ETH", address: "native", decimals: 18, displaySymbol: null },
        ],
      },
      { name: "beta", chainId: 31338, default: false, running: true, tokens: [{ symbol: "BBB", address: beta.demo.tokenAddress, decimals: 18, displaySymbol: null }] },
    ]);

    // /wallet: every token's balance on each network; metrics: a balance series per token.
    const alphaWallet = ((await get("/wallet")).body.networks as Record<string, any>[]).find((part) => part.network === "alpha") as Record<string, any>;
    expect(alphaWallet.balances.map((balance: Record<string, any>) => [balance.symbol, balance.address, balance.decimals])).toEqual([
      ["AAA", alpha.demo.tokenAddress, 18],
      ["CCC", await ccc.getAddress(), 6],
      ["ETH", "native", 18],
    ]);
    expect(alphaWallet.balances[1].balance).toBe(((await ccc.getFunction("balanceOf")(wallet())) as bigint).toString());
    const metrics = await (await request(`${server.baseUrl}/metrics`, { headers: AUTHORIZATION })).body.text();
    expect(metrics).toMatch(/^wallet_token_balance\{network="alpha",token="CCC"\} \d/m);
    expect(metrics).toMatch(/^wallet_token_balance\{network="alpha",token="ETH"\} \d/m);
    expect(metrics).toMatch(/^transfer_tokens_sent_total\{network="alpha",token="ETH"\} 0.25$/m);
  });

  it("holds each token's own limit and balance, and a key is one payment in one token", async () => {
    const recipient = freshAddress();
    const overLimit = await post("/transfer", { toAddress: recipient, amount: "11", token: "CCC" });
    expect({ statusCode: overLimit.statusCode, code: overLimit.body.code }).toEqual({ statusCode: 403, code: "AMOUNT_ABOVE_LIMIT" });
    // AAA has no limit on alpha: 11 of it is paid.
    expect((await post("/transfer", { toAddress: recipient, amount: "11" })).statusCode).toBe(200);
    const ethHeld = (await alpha.provider.getBalance(wallet())) / 10n ** 18n;
    const moreThanHeld = await post("/transfer", { toAddress: recipient, amount: (ethHeld + 1n).toString(), token: "ETH" }, { "idempotency-key": "too-much-eth" });
    expect({ statusCode: moreThanHeld.statusCode, code: moreThanHeld.body.code }).toEqual({ statusCode: 417, code: "INSUFFICIENT_FUNDS" });
    const unknown = await post("/transfer", { toAddress: recipient, amount: "1", token: "DAI" });
    expect({ statusCode: unknown.statusCode, code: unknown.body.code }).toEqual({ statusCode: 400, code: "UNKNOWN_TOKEN" });
    expect(unknown.body.message).toContain("AAA");
    const first = await post("/transfer", { toAddress: recipient, amount: "1", token: "CCC" }, { "idempotency-key": "one-token" });
    expect(first.statusCode).toBe(200);
    const inAnother = await post("/transfer", { toAddress: recipient, amount: "1", token: "AAA" }, { "idempotency-key": "one-token" });
    expect({ statusCode: inAnother.statusCode, code: inAnother.body.code }).toEqual({ statusCode: 422, code: "IDEMPOTENCY_KEY_REUSED" });
    const again = await post("/transfer", { toAddress: recipient, amount: "1", token: await ccc.getAddress() }, { "idempotency-key": "one-token" });
    expect({ statusCode: again.statusCode, hash: again.body.result?.hash }).toEqual({ statusCode: 200, hash: first.body.result.hash });
    await waitForReceipt(alpha, first.body.result.hash, 10_000);
    expect(await ccc.getFunction("balanceOf")(recipient)).toBe(parseUnits("1", 6));
    expect(await alpha.provider.getBalance(recipient)).toBe(0n);
  });

  it("cancels a pending native transfer: the cancel is mined in its place and nothing moves", async () => {
    const recipient = freshAddress();
    await alpha.provider.send("evm_setAutomine", [false]);
    try {
      const sent = await post("/transfer", { toAddress: recipient, amount: "0.5", token: "ETH" });
      expect(sent.statusCode).toBe(200);
      const cancel = await request(`${server.baseUrl}/transactions/${sent.body.result.hash}/cancel`, { method: "POST", headers: AUTHORIZATION });
      expect(cancel.statusCode).toBe(202);
      const { carriedBy } = (await cancel.body.json()) as { carriedBy: string };
      await alpha.provider.send("evm_mine", []);
      await waitForReceipt(alpha, carriedBy, 10_000);
      await waitUntil(async () => (await get(`/transactions/${sent.body.result.hash}`)).body.state === "cancelled", 10_000, "the transfer cancelled");
      expect((await get(`/transactions/${sent.body.result.hash}`)).body.transfer).toMatchObject({ token: "native", amount: "0" });
      await waitUntil(() => receiver.received.some((hook) => hook.body.includes('"transfer.cancelled"') && hook.body.includes(sent.body.result.hash)), 20_000, "transfer.cancelled");
    } finally {
      await alpha.provider.send("evm_setAutomine", [true]);
    }
    expect(await alpha.provider.getBalance(recipient)).toBe(0n);
  });

  // expect.poll with the case's own expect: the other network kind's suite runs beside this one.
  it.skipIf(noBrowser)("has a console whose network switcher shows each network's wallet, in every token, and its own transfers", async ({ expect }) => {
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox", "--disable-gpu"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${server.baseUrl}/console`);
      await page.getByLabel("API key").fill(TEST_API_KEY);
      await page.keyboard.press("Enter");
      await page.locator("#app").waitFor({ state: "visible" });
      const networks = page.getByLabel("Network");
      await networks.waitFor({ state: "visible" });
      expect(await networks.locator("option").allTextContents()).toEqual(["alpha (chain 31337: AAA, CCC, ETH)", "beta (chain 31338: BBB)"]);
      // The default network first: its wallet in each of its tokens, its transfers only.
      // The native coin in its own column, not again among the tokens (ETH twice, #56).
      const laneCells = page.locator("#wallet table tbody tr").first().locator("td");
      await expect.poll(() => laneCells.nth(2).textContent()).toMatch(/^[\d.]+ AAA, [\d.]+ CCC$/);
      expect(await laneCells.nth(1).textContent()).toMatch(/^[\d.]+ ETH$/);
      await expect.poll(() => page.locator("#recent").textContent()).toContain("0.25 ETH");
      // A symbol follows its amount and a space; an address (of hex digits, "0x0eA5EBBB…") has no space.
      expect(await page.locator("#recent").textContent()).not.toContain(" BBB");
      await networks.selectOption("beta");
      await expect.poll(() => page.locator("#wallet").textContent()).toMatch(/[\d.]+ BBB/);
      await expect.poll(() => page.locator("#recent").textContent()).toContain(" BBB");
      expect(await page.locator("#recent").textContent()).not.toMatch(/ (AAA|CCC)/);
    } finally {
      await browser.close();
    }
  });

  it("reports a reorganisation of one chain on that chain's transfer only: reorged, mined again, paid once; the other chain's transfer is untouched", async () => {
    const typesOf = (hash: string) =>
      receiver.received.map((hook) => JSON.parse(hook.body)).filter((event) => event.data.transferHash === hash).map((event) => event.type as string);
    const betaRecipient = freshAddress();
    const onBeta = await post("/transfer", { toAddress: betaRecipient, amount: "1", network: "beta" });
    expect(onBeta.statusCode).toBe(200);
    await waitUntil(() => typesOf(onBeta.body.result.hash).includes("transfer.confirmed"), 20_000, "beta's transfer confirmed");
    await beta.provider.send("anvil_reorg", [1, []]);
    const onAlpha = await post("/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(onAlpha.statusCode).toBe(200);
    await waitUntil(() => typesOf(onBeta.body.result.hash).filter((type) => type === "transfer.confirmed").length === 2, 30_000, "beta's transfer reorged and confirmed again");
    expect(typesOf(onBeta.body.result.hash)).toEqual(["transfer.confirmed", "transfer.reorged", "transfer.confirmed"]);
    await waitUntil(() => typesOf(onAlpha.body.result.hash).length > 0, 20_000, "alpha's transfer confirmed");
    expect(typesOf(onAlpha.body.result.hash)).toEqual(["transfer.confirmed"]);
    expect(await tokenBalanceOf(beta, betaRecipient)).toBe(parseUnits("1", 18));
  });

  it("holds each network's own token limit, and a key is one payment: the same key on the other network is refused", async () => {
    const over = await post("/transfer", { toAddress: freshAddress(), amount: "51", network: "beta" });
    expect({ statusCode: over.statusCode, code: over.body.code }).toEqual({ statusCode: 403, code: "AMOUNT_ABOVE_LIMIT" });
    // 51 on alpha is within its (absent) limit.
    const recipient = freshAddress();
    const first = await post("/transfer", { toAddress: recipient, amount: "1" }, { "idempotency-key": "one-payment" });
    expect(first.statusCode).toBe(200);
    const again = await post("/transfer", { toAddress: recipient, amount: "1", network: "alpha" }, { "idempotency-key": "one-payment" });
    expect({ statusCode: again.statusCode, hash: again.body.result?.hash }).toEqual({ statusCode: 200, hash: first.body.result.hash });
    const elsewhere = await post("/transfer", { toAddress: recipient, amount: "1", network: "beta" }, { "idempotency-key": "one-payment" });
    expect({ statusCode: elsewhere.statusCode, code: elsewhere.body.code }).toEqual({ statusCode: 422, code: "IDEMPOTENCY_KEY_REUSED" });
    await waitForReceipt(alpha, first.body.result.hash, 10_000);
    expect(await tokenBalanceOf(beta, recipient)).toBe(0n);
  });

  it("keeps paying on one network while the other's node hangs or is down; the other answers 503 with the key unused, and /ready names it", async () => {
    const recipient = freshAddress();
    // A node that hangs: alpha's transfer is answered while beta's still waits on its node (RPC_TIMEOUT_MS).
    betaNode.fault = { kind: "hang" };
    const answered: string[] = [];
    const onBetaHanging = post("/transfer", { toAddress: freshAddress(), amount: "1", network: "beta" }).then((answer) => {
      answered.push("beta");
      return answer;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const whileHanging = await post("/transfer", { toAddress: recipient, amount: "1" });
    answered.push("alpha");
    expect({ statusCode: whileHanging.statusCode, answered }).toEqual({ statusCode: 200, answered: ["alpha"] });
    expect((await onBetaHanging).statusCode).toBe(503);
    betaNode.fault = undefined;
    await betaNode.goDown();
    try {
      const onBeta = await post("/transfer", { toAddress: recipient, amount: "1", network: "beta" }, { "idempotency-key": "during-outage" });
      expect(onBeta.statusCode).toBe(503);
      const onAlpha = await post("/transfer", { toAddress: recipient, amount: "1" });
      expect(onAlpha.statusCode).toBe(200);
      await waitForReceipt(alpha, onAlpha.body.result.hash, 10_000);
      const ready = await request(`${server.baseUrl}/ready`);
      const { checks, message } = (await ready.body.json()) as { checks: Record<string, string>; message: string };
      expect(ready.statusCode).toBe(503);
      expect(message).toContain("beta.node (the Ethereum node did not answer)");
      expect({ node: checks.node, chainId: checks.chainId, betaNode: checks["beta.node"] }).toEqual({ node: "ok", chainId: "ok", betaNode: "the Ethereum node did not answer" });
    } finally {
      await betaNode.comeBack();
    }
    // The key was left unused: the same request now pays, once.
    const retried = await post("/transfer", { toAddress: recipient, amount: "1", network: "beta" }, { "idempotency-key": "during-outage" });
    expect(retried.statusCode).toBe(200);
    await waitForReceipt(beta, retried.body.result.hash, 10_000);
    // Nothing of the two 503s reached beta: the recipient holds the retry's token once.
    expect(await tokenBalanceOf(beta, recipient)).toBe(parseUnits("1", 18));
  });

  it("starts without a network whose node is down at startup: the others pay, its transfers are answered 503 with the key unused, and it joins once its node answers", async () => {
    server.child.kill("SIGTERM");
    await server.exited;
    await betaNode.goDown();
    try {
      server = await start();
      expect(server.output()).toMatch(/"network":"beta".*a network's node cannot be reached/);
      const onAlpha = await post("/transfer", { toAddress: freshAddress(), amount: "1" });
      expect(onAlpha.statusCode).toBe(200);
      const recipient = freshAddress();
      const onBeta = await post("/transfer", { toAddress: recipient, amount: "1", network: "beta" }, { "idempotency-key": "while-beta-never-answered" });
      expect({ statusCode: onBeta.statusCode, code: onBeta.body.code }).toEqual({ statusCode: 503, code: "NETWORK_UNAVAILABLE" });
      const ready = (await (await request(`${server.baseUrl}/ready`)).body.json()) as { checks: Record<string, string> };
      expect(ready.checks["beta.node"]).toMatch(/^not started: NETWORKS_FILE networks "beta" rpcUrls: the node at \S+ did not answer eth_chainId$/);
      // Its history stays readable from the journal, its rows named as configured.
      const history = await get("/transfers?network=beta&limit=1");
      expect(history.body.transfers[0]).toMatchObject({ network: "beta", chainId: 31338, transfer: { tokenSymbol: "BBB", amountInTokens: null } });
    } finally {
      await betaNode.comeBack();
    }
    await waitUntil(async () => (await post("/transfer", { toAddress: freshAddress(), amount: "0.5", network: "beta" })).statusCode === 200, 30_000, "beta to join");
    await server.waitForOutput("a network unreachable at startup answers now", 5_000);
    // The key the 503 left unused pays now, once.
    const retried = await post("/transfer", { toAddress: freshAddress(), amount: "1", network: "beta" }, { "idempotency-key": "while-beta-never-answered" });
    expect(retried.statusCode).toBe(200);
    await waitForReceipt(beta, retried.body.result.hash, 10_000);
    const ready = (await (await request(`${server.baseUrl}/ready`)).body.json()) as { checks: Record<string, string> };
    expect(ready.checks["beta.node"]).toBe("ok");
  });

  it("starts without the default network when its node is down at startup: the other pays, the default's transfers are answered 503 with the key unused, and it joins once its node answers", async () => {
    server.child.kill("SIGTERM");
    await server.exited;
    await alphaNode.goDown();
    const recipient = freshAddress();
    try {
      server = await start();
      expect(server.output()).toMatch(/"network":"alpha".*a network's node cannot be reached/);
      expect(server.output()).toMatch(/"node":"not reached yet[^"]*".*"network":"alpha"/);
      const onBeta = await post("/transfer", { toAddress: freshAddress(), amount: "1", network: "beta" });
      expect(onBeta.statusCode).toBe(200);
      const onAlpha = await post("/transfer", { toAddress: recipient, amount: "1", token: "CCC" }, { "idempotency-key": "while-alpha-never-answered" });
      expect({ statusCode: onAlpha.statusCode, code: onAlpha.body.code }).toEqual({ statusCode: 503, code: "NETWORK_UNAVAILABLE" });
      const ready = (await (await request(`${server.baseUrl}/ready`)).body.json()) as { checks: Record<string, string> };
      expect(ready.checks.node).toMatch(/^not started: NETWORKS_FILE networks "alpha" rpcUrls: the node at \S+ did not answer eth_chainId$/);
      expect(ready.checks["beta.node"]).toBe("ok");
      // Its history stays readable from the journal; /networks says it is not reached; /wallet shows the network that runs.
      expect((await get("/transfers?network=alpha&limit=1")).body.transfers[0]).toMatchObject({ network: "alpha", chainId: 31337 });
      expect(((await get("/networks")).body.networks as Record<string, any>[]).map((network) => [network.name, network.running])).toEqual([["alpha", false], ["beta", true]]);
      const report = await get("/wallet");
      expect({ statusCode: report.statusCode, network: report.body.network }).toEqual({ statusCode: 200, network: "beta" });
    } finally {
      await alphaNode.comeBack();
    }
    await waitUntil(async () => (await post("/transfer", { toAddress: freshAddress(), amount: "0.5" })).statusCode === 200, 30_000, "alpha to join");
    // The key the 503 left unused pays now, once, in the token it named.
    const retried = await post("/transfer", { toAddress: recipient, amount: "1", token: "CCC" }, { "idempotency-key": "while-alpha-never-answered" });
    expect(retried.statusCode).toBe(200);
    await waitForReceipt(alpha, retried.body.result.hash, 10_000);
    expect(await ccc.getFunction("balanceOf")(recipient)).toBe(parseUnits("1", 6));
    const ready = (await (await request(`${server.baseUrl}/ready`)).body.json()) as { checks: Record<string, string> };
    expect(ready.checks.node).toBe("ok");
    expect(((await get("/wallet")).body as Record<string, any>).network).toBe("alpha");
  });

  it("after kill -9, a replay on either network answers the first answer and pays nothing again", async () => {
    const recipient = freshAddress();
    const onBeta = await post("/transfer", { toAddress: recipient, amount: "5", network: "beta" }, { "idempotency-key": "before-the-crash" });
    expect(onBeta.statusCode).toBe(200);
    server.child.kill("SIGKILL");
    await server.exited;
    server = await start();
    const replay = await post("/transfer", { toAddress: recipient, amount: "5", network: "beta" }, { "idempotency-key": "before-the-crash" });
    expect({ statusCode: replay.statusCode, hash: replay.body.result?.hash, replayed: replay.headers["idempotent-replayed"] }).toEqual({
      statusCode: 200,
      hash: onBeta.body.result.hash,
      replayed: "true",
    });
    await waitForReceipt(beta, onBeta.body.result.hash, 15_000);
    expect(await tokenBalanceOf(beta, recipient)).toBe(parseUnits("5", 18));
    // A new transfer on beta follows on from the nonce the crashed process used.
    const next = await post("/transfer", { toAddress: recipient, amount: "1", network: "beta" });
    expect(next.body.result.nonce).toBe(onBeta.body.result.nonce + 1);
  });
});
