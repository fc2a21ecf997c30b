/**
 * A wallet pool on both node implementations: several keys in PRIVATE_KEY, each a lane with its own
 * nonces. The contract of an answer holds across lanes and across a crash; a lane that cannot pay is
 * passed over; a one-wallet journal is taken over by a pool.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TransactionResponse, Wallet, parseEther } from "ethers";
import { request } from "undici";
import { afterEach, expect } from "vitest";
import { retryWhilePoolBusy } from "../helpers/pool-client.js";
import { waitUntil } from "../helpers/wait-until.js";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION, type TestService, postJson, startService } from "../helpers/service.js";
import { NODE_KINDS, type PoolWallet, type TestChain, addPoolWallets, freshAddress, setEthBalance, startTestChainOn, tokenBalanceOf } from "../helpers/test-chain.js";
import type { NetworkServices } from "../../src/network/network-services.js";
import { deployPayoutContract } from "../../src/dev/demo-chain.js";
import { describe, it } from "../helpers/suites-side-by-side.js";

interface Answer {
  statusCode: number;
  raw: string;
}

const BURST = 60;
const ONE_TOKEN = 10n ** 18n;

/** The sending wallet of a 200's record, lowercase; undefined for any other answer. */
function senderOf(answer: Answer | undefined): string | undefined {
  if (answer?.statusCode !== 200) return undefined;
  return String(JSON.parse(answer.raw).result.from).toLowerCase();
}

/**
 * Waits until `recipient` holds `units` of the token: what a paid transfer is, whatever hash carried it (anvil can
 * hold an answered transaction unmined, foundry-rs/foundry#10122, and the service then replaces it at its nonce).
 */
async function waitUntilHolds(chain: TestChain, recipient: string, units: bigint): Promise<void> {
  await waitUntil(async () => (await tokenBalanceOf(chain, recipient)) >= units, 10_000, `${recipient} paid ${units}`);
}

describe.each(NODE_KINDS)("a wallet pool on %s", (kind) => {
  let chain: TestChain | undefined;
  const servers: ServerProcess[] = [];
  const services: TestService[] = [];
  let journalDir: string | undefined;
  afterEach(async () => {
    for (const server of servers.splice(0)) server.child.kill("SIGKILL");
    for (const service of services.splice(0)) await service.close();
    await chain?.stop();
    if (journalDir) rmSync(journalDir, { recursive: true, force: true });
  });

  /** The hot wallet and `others` more, each lane holding `tokens` whole tokens. */
  async function poolOf(others: number, tokens: bigint): Promise<{ chain: TestChain; lanes: PoolWallet[] }> {
    chain = await startTestChainOn(kind, { supply: tokens * BigInt(others + 1) });
    const added = await addPoolWallets(chain, others, { tokens, ether: "10" });
    journalDir = mkdtempSync(join(tmpdir(), "pool-"));
    return { chain, lanes: [{ privateKey: chain.demo.privateKey, address: chain.demo.walletAddress }, ...added] };
  }

  it("4 lanes, a burst, kill -9 and a replay of every key: the first answers again, every 200 paid once, no 417 paid, each lane's nonces contiguous", async () => {
    // The pool can pay for 48 of the 60: some transfers are refused (417).
    const { chain: pooled, lanes } = await poolOf(3, 12n);
    const env = {
      RPC_URL: pooled.rpcUrl,
      PRIVATE_KEY: lanes.map((lane) => lane.privateKey).join(","),
      TOKEN_ADDRESS: pooled.demo.tokenAddress,
      JOURNAL_PATH: join(journalDir as string, "transfers.sqlite"),
      REBROADCAST_AFTER_MS: "500",
      CHAIN_REFRESH_INTERVAL_MS: "200",
    };
    const firstNonces = await Promise.all(lanes.map((lane) => pooled.provider.getTransactionCount(lane.address, "latest")));
    const bodies = Array.from({ length: BURST }, () => ({ toAddress: freshAddress(), amount: "1" }));
    const sendOnce = (server: ServerProcess, index: number): Promise<Answer | undefined> =>
      request(`${server.baseUrl}/transfer`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": `pool-${index}`, ...AUTHORIZATION },
        body: JSON.stringify(bodies[index]),
      }).then(
        async (response) => ({ statusCode: response.statusCode, raw: await response.body.text() }),
        () => undefined,
      );
    // Lanes all at MAX_IN_FLIGHT_PER_LANE answer 503 NO_LANE_AVAILABLE (nothing sent, the key unused): the
    // client asks again.
    const send = (server: ServerProcess, index: number) => retryWhilePoolBusy(() => sendOnce(server, index));
    const pendingTotal = async () => (await Promise.all(lanes.map((lane) => pooled.provider.getTransactionCount(lane.address, "pending")))).reduce((sum, count) => sum + count, 0);
    const firstTotal = firstNonces.reduce((sum, count) => sum + count, 0);

    const doomed = await startServerProcess(env);
    servers.push(doomed);
    const firstAnswers = bodies.map((_, index) => send(doomed, index));
    // Kill it once some transfers were sent and others are still under way.
    await waitUntil(async () => (await pendingTotal()) >= firstTotal + 8, 10_000, "8 transfers sent");
    doomed.child.kill("SIGKILL");
    const first = await Promise.all(firstAnswers);

    const restarted = await startServerProcess(env);
    servers.push(restarted);
    const replays = await Promise.all(bodies.map((_, index) => send(restarted, index)));
    const again = await Promise.all(bodies.map((_, index) => send(restarted, index)));
    for (const [index, replay] of replays.entries()) {
      const answer = first[index] ?? replay;
      expect([200, 417], `request ${index}: ${answer?.raw}`).toContain(answer?.statusCode);
      expect({ statusCode: replay?.statusCode, raw: replay?.raw }, `request ${index}`).toEqual({ statusCode: answer?.statusCode, raw: answer?.raw });
      expect({ statusCode: again[index]?.statusCode, raw: again[index]?.raw }).toEqual({ statusCode: answer?.statusCode, raw: answer?.raw });
    }

    const senders = replays.map(senderOf);
    const paid = senders.filter((sender) => sender !== undefined).length;
    expect(paid).toBeGreaterThan(0);
    expect(paid).toBeLessThanOrEqual(48);
    // Routing spreads the burst: every lane sent some of it.
    const sentBy = lanes.map((lane) => senders.filter((sender) => sender === lane.address.toLowerCase()).length);
    expect(sentBy.every((count) => count > 0), `transfers per lane: ${sentBy.join(", ")}`).toBe(true);
    expect(sentBy.reduce((sum, count) => sum + count, 0)).toBe(paid);
    // Each lane: exactly one nonce per transfer it answered 200 for, contiguous, nothing else sent.
    for (const [index, lane] of lanes.entries()) {
      const expected = firstNonces[index] + sentBy[index];
      await waitUntil(async () => (await pooled.provider.getTransactionCount(lane.address, "latest")) >= expected, 30_000, `lane ${index} mined ${sentBy[index]}`);
      expect(await pooled.provider.getTransactionCount(lane.address, "latest"), `lane ${index}`).toBe(expected);
      expect(await pooled.provider.getTransactionCount(lane.address, "pending"), `lane ${index}`).toBe(expected);
    }
    for (const [index, sender] of senders.entries()) {
      expect(await tokenBalanceOf(pooled, bodies[index].toAddress), `recipient ${index} (${replays[index]?.statusCode})`).toBe(sender ? ONE_TOKEN : 0n);
    }
  });

  it("passes over a lane drained of gas while another can pay, and takes it back once refilled", async () => {
    const { chain: pooled, lanes } = await poolOf(1, 10n);
    const [first, second] = lanes;
    const service = await startService(pooled.target, {
      PRIVATE_KEY: lanes.map((lane) => lane.privateKey).join(","),
      JOURNAL_PATH: join(journalDir as string, "transfers.sqlite"),
    });
    services.push(service);
    const firstLaneNonce = await pooled.provider.getTransactionCount(first.address, "latest");
    await setEthBalance(pooled, first.address, "0");
    // Routing reads balances at most CHAIN_REFRESH_INTERVAL_MS (100 ms here) old.
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let index = 0; index < 3; index++) {
      const recipient = freshAddress();
      const answer = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "1" });
      expect(answer.statusCode, answer.raw).toBe(200);
      expect(answer.body.result.from).toBe(second.address);
      await waitUntilHolds(pooled, recipient, ONE_TOKEN);
    }
    const wallet = JSON.parse((await service.app.inject({ method: "GET", url: "/wallet", headers: AUTHORIZATION })).body);
    expect(wallet.lanes.map((lane: { address: string; state: string; heldBecause: string | null }) => [lane.address, lane.state, lane.heldBecause])).toEqual([
      [first.address, "held", "gas-below-floor"],
      [second.address, "open", null],
    ]);
    expect(await pooled.provider.getTransactionCount(first.address, "pending")).toBe(firstLaneNonce);
    // The metrics say the same, per lane.
    const metrics = (await service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body;
    expect(metrics).toContain(`lane_held{network="31337",lane="${first.address}",reason="gas-below-floor"} 1`);
    expect(metrics).toContain(`lane_held{network="31337",lane="${second.address}",reason="gas-below-floor"} 0`);
    expect(metrics).toContain(`lane_eth_balance_wei{network="31337",lane="${first.address}"} 0`);

    await setEthBalance(pooled, first.address, "10");
    // The second lane's transfers are mined and counted so: the lanes tie, and the first lane wins a tie.
    await waitUntil(async () => service.services.networks[0].lanes[1].ledger.unminedCount === 0, 10_000, "the second lane's transfers counted mined");
    // What the second lane's gas cost shows once its snapshot counts them mined.
    const spent = (await service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body;
    expect(spent).toMatch(new RegExp(`lane_gas_spent_wei_total\\{network="31337",lane="${second.address}"\\} [1-9]`));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refilled = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(refilled.statusCode, refilled.raw).toBe(200);
    expect(refilled.body.result.from).toBe(first.address);
  });

  it("with gas top-up on, a funding key refills a drained lane once, through its journal, and the lane takes transfers again", async () => {
    const { chain: pooled, lanes: senders } = await poolOf(1, 10n);
    // The funding key holds ETH and none of the token: routing never sends a transfer from it.
    const [funder] = await addPoolWallets(pooled, 1, { tokens: 0n, ether: "20" });
    const lanes = [...senders, funder];
    const drained = senders[1];
    const service = await startService(pooled.target, {
      PRIVATE_KEY: lanes.map((lane) => lane.privateKey).join(","),
      JOURNAL_PATH: join(journalDir as string, "transfers.sqlite"),
      GAS_TOPUP_FROM: funder.address.toLowerCase(),
      GAS_TOPUP_BELOW: "1",
      GAS_TOPUP_TO: "5",
    });
    services.push(service);
    const firstBlock = await pooled.provider.getBlockNumber();
    await setEthBalance(pooled, drained.address, "0");
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A transfer reads the pool's balances: the drained lane is passed over, and the funding lane tops it up.
    const answer = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    expect(answer.statusCode, answer.raw).toBe(200);
    expect(answer.body.result.from).not.toBe(drained.address);
    await waitUntil(async () => (await pooled.provider.getBalance(drained.address)) > 0n, 10_000, "the drained lane topped up");
    // Exactly GAS_TOPUP_TO: one top-up of what it lacked. Later rounds, with its balance read again, send none.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await pooled.provider.getBalance(drained.address)).toBe(parseEther("5"));
    const topUps: TransactionResponse[] = [];
    for (let number = firstBlock + 1; number <= (await pooled.provider.getBlockNumber()); number++) {
      const block = await pooled.provider.getBlock(number, true);
      topUps.push(...(block?.prefetchedTransactions ?? []).filter((transaction) => transaction.to === drained.address));
    }
    expect(topUps.map((transaction) => [transaction.from, transaction.value])).toEqual([[funder.address, parseEther("5")]]);
    // The funding lane's own transaction, journaled like its transfers.
    const status = JSON.parse((await service.app.inject({ method: "GET", url: `/transactions/${topUps[0].hash}`, headers: AUTHORIZATION })).body);
    expect(status.state, JSON.stringify(status)).toBe("confirmed");
    expect(status.attempts.map((attempt: { kind: string }) => attempt.kind)).toEqual(["top-up"]);
    const metrics = (await service.app.inject({ method: "GET", url: "/metrics", headers: AUTHORIZATION })).body;
    expect(metrics).toContain(`lane_gas_top_ups_total{network="31337",lane="${drained.address}"} 1`);
    expect(metrics).toContain(`lane_held{network="31337",lane="${drained.address}",reason="gas-below-floor"} 0`);
    const wallet = JSON.parse((await service.app.inject({ method: "GET", url: "/wallet", headers: AUTHORIZATION })).body);
    expect(wallet.lanes.map((lane: { state: string; gasTopUp: unknown }) => [lane.state, lane.gasTopUp])).toEqual([
      ["open", { funds: false, inFlight: null, received: 0 }],
      ["open", { funds: false, inFlight: null, received: 1 }],
      ["open", { funds: true, inFlight: null, received: 0 }],
    ]);
    // Open again: a burst spreads over every lane, the refilled one too.
    const burst = await Promise.all(Array.from({ length: 6 }, () => postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" })));
    for (const sent of burst) expect(sent.statusCode, sent.raw).toBe(200);
    expect(new Set(burst.map((sent) => sent.body.result.from))).toEqual(new Set(senders.map((sender) => sender.address)));
  });

  // A pool of two lanes whose balances are read once a minute at most: routing still sees the first lane
  // funded after it is drained.
  async function twoLanesReadOnceAMinute() {
    const { chain: pooled, lanes } = await poolOf(1, 10n);
    const [first, second] = lanes;
    const service = await startService(pooled.target, {
      PRIVATE_KEY: lanes.map((lane) => lane.privateKey).join(","),
      JOURNAL_PATH: join(journalDir as string, "transfers.sqlite"),
      CHAIN_REFRESH_INTERVAL_MS: "60000",
    });
    services.push(service);
    return { pooled, first, second, service };
  }

  it("a lane drained after its balances were read is refused, nothing sent, and the transfer goes to another lane; a repeat of its key answers that", async () => {
    const { pooled, first, second, service } = await twoLanesReadOnceAMinute();
    const firstLaneNonce = await pooled.provider.getTransactionCount(first.address, "latest");
    await setEthBalance(pooled, first.address, "0");
    const body = { toAddress: freshAddress(), amount: "1" };
    const answer = await postJson(service.app, "/transfer", body, { "idempotency-key": "drained-lane" });
    expect(answer.statusCode, answer.raw).toBe(200);
    expect(answer.body.result.from).toBe(second.address);
    await waitUntilHolds(pooled, body.toAddress, ONE_TOKEN);
    expect(await tokenBalanceOf(pooled, body.toAddress)).toBe(ONE_TOKEN);
    expect(await pooled.provider.getTransactionCount(first.address, "pending")).toBe(firstLaneNonce);
    const repeat = await postJson(service.app, "/transfer", body, { "idempotency-key": "drained-lane" });
    expect(repeat.raw).toBe(answer.raw);
  });

  it("answers a repeat of the key 409 while a refused transfer is moved to another lane: never 417 and then 200 for one key", async () => {
    const { pooled, first, second, service } = await twoLanesReadOnceAMinute();
    await setEthBalance(pooled, first.address, "0");
    // The pool reads the refusing lane's balances again before routing on: held there until the repeat is answered.
    const drainedLane = service.services.networks[0].laneOf(first.address) as NonNullable<ReturnType<NetworkServices["laneOf"]>>;
    const readBalances = drainedLane.ensureBalances;
    let reachedRerouting!: () => void;
    const rerouting = new Promise<void>((resolve) => (reachedRerouting = resolve));
    let releaseRerouting!: () => void;
    const released = new Promise<void>((resolve) => (releaseRerouting = resolve));
    drainedLane.ensureBalances = async (maxAgeMs) => {
      if (maxAgeMs === 0) {
        reachedRerouting();
        await released;
      }
      return readBalances(maxAgeMs);
    };
    const body = { toAddress: freshAddress(), amount: "1" };
    const sending = postJson(service.app, "/transfer", body, { "idempotency-key": "rerouted" });
    await rerouting;
    // The first lane's refusal is recorded for the key, but the pool has not decided: in flight, not 417.
    const during = await postJson(service.app, "/transfer", body, { "idempotency-key": "rerouted" });
    expect(during.statusCode, during.raw).toBe(409);
    expect(during.body).toMatchObject({ code: "IDEMPOTENCY_KEY_IN_FLIGHT" });
    releaseRerouting();
    const answer = await sending;
    expect(answer.statusCode, answer.raw).toBe(200);
    expect(answer.body.result.from).toBe(second.address);
    await waitUntilHolds(pooled, body.toAddress, ONE_TOKEN);
    expect(await tokenBalanceOf(pooled, body.toAddress)).toBe(ONE_TOKEN);
    const repeat = await postJson(service.app, "/transfer", body, { "idempotency-key": "rerouted" });
    expect(repeat.raw).toBe(answer.raw);
  });

  it("takes over a one-wallet journal: the wallet's transfers keep their answers, new ones spread over the pool", async () => {
    const { chain: pooled, lanes } = await poolOf(1, 10n);
    const journalPath = join(journalDir as string, "transfers.sqlite");
    const alone = await startService(pooled.target, { JOURNAL_PATH: journalPath });
    const body = { toAddress: freshAddress(), amount: "1" };
    const firstAnswer = await postJson(alone.app, "/transfer", body, { "idempotency-key": "before-the-pool" });
    expect(firstAnswer.statusCode, firstAnswer.raw).toBe(200);
    await waitUntilHolds(pooled, body.toAddress, ONE_TOKEN);
    await alone.close();

    const pool = await startService(pooled.target, { JOURNAL_PATH: journalPath, PRIVATE_KEY: lanes.map((lane) => lane.privateKey).join(",") });
    services.push(pool);
    const repeat = await postJson(pool.app, "/transfer", body, { "idempotency-key": "before-the-pool" });
    expect(repeat.statusCode).toBe(200);
    expect(repeat.raw).toBe(firstAnswer.raw);
    const fresh = await Promise.all(Array.from({ length: 4 }, () => postJson(pool.app, "/transfer", { toAddress: freshAddress(), amount: "1" })));
    for (const answer of fresh) expect(answer.statusCode, answer.raw).toBe(200);
    expect(new Set(fresh.map((answer) => answer.body.result.from))).toEqual(new Set(lanes.map((lane) => lane.address)));
    const wallet = JSON.parse((await pool.app.inject({ method: "GET", url: "/wallet", headers: AUTHORIZATION })).body);
    expect(wallet.lanes.map((lane: { address: string }) => lane.address)).toEqual(lanes.map((lane) => lane.address));
  });

  it("pays payout batches from every lane: each lane approves the contract once (503, key unused, until mined), each batch paid once, every item once", async () => {
    const { chain: pooled, lanes } = await poolOf(1, 100n);
    const deployer = new Wallet(Wallet.createRandom().privateKey, pooled.provider);
    await setEthBalance(pooled, deployer.address, "1");
    const service = await startService(pooled.target, {
      PRIVATE_KEY: lanes.map((lane) => lane.privateKey).join(","),
      JOURNAL_PATH: join(journalDir as string, "transfers.sqlite"),
      PAYOUT_CONTRACT: await deployPayoutContract(deployer),
    });
    services.push(service);
    const batches = Array.from({ length: 6 }, (_, batch) => Array.from({ length: 3 }, (_, item) => ({ toAddress: freshAddress(), amount: `${item + 1}`, id: `pool-${batch}-${item}` })));
    // Sent at once, so that the pool spreads them; each asks again while its lane's approval is not mined.
    const payOnce = async (items: object[], key: string) => {
      for (const deadline = Date.now() + 30_000; ; await new Promise((resolve) => setTimeout(resolve, 200))) {
        const answer = await retryWhilePoolBusy(() => postJson(service.app, "/payouts", { items }, { "idempotency-key": key }));
        if (answer.statusCode !== 503 || Date.now() > deadline) return answer;
        expect(answer.body.code).toBe("PAYOUT_APPROVAL_PENDING");
      }
    };
    const answers = await Promise.all(batches.map((items, index) => payOnce(items, `pool-batch-${index}`)));
    for (const answer of answers) expect(answer.statusCode, answer.raw).toBe(200);
    // Paid is read from the chain, not from each answered hash: anvil can hold a transaction without mining it
    // (foundry-rs/foundry#10122), and the service then replaces it at its nonce, under another hash.
    const unpaid = async () => {
      const paid = await Promise.all(batches.flat().map(async (item) => (await tokenBalanceOf(pooled, item.toAddress)) === BigInt(item.amount) * ONE_TOKEN));
      return batches.flat().filter((_, index) => !paid[index]);
    };
    const statusOf = async (hash: string) => (await service.app.inject({ method: "GET", url: `/transactions/${hash}`, headers: AUTHORIZATION })).body;
    await waitUntil(async () => (await unpaid()).length === 0, 30_000, "every item paid").catch(async (error: unknown) => {
      // What the service and the chain say of each batch, so that a failure explains itself.
      const documents = await Promise.all(answers.map((answer) => statusOf(answer.body.transaction.hash)));
      throw new Error(`${String(error)}; unpaid ${JSON.stringify(await unpaid())}; batches ${documents.join("\n")}`);
    });
    expect(new Set(answers.map((answer) => answer.body.transaction.from))).toEqual(new Set(lanes.map((lane) => lane.address)));

    // Every item paid once: each recipient holds exactly its amount, and the lanes together spent the total.
    for (const item of batches.flat()) expect(await tokenBalanceOf(pooled, item.toAddress)).toBe(BigInt(item.amount) * ONE_TOKEN);
    const left = await Promise.all(lanes.map((lane) => tokenBalanceOf(pooled, lane.address)));
    expect(left.reduce((sum, balance) => sum + balance, 0n)).toBe((200n - 6n * 6n) * ONE_TOKEN);
    // One approval per lane, each mined; a repeat of a batch's key answers that batch.
    const history = (await service.app.inject({ method: "GET", url: "/transfers?limit=100", headers: AUTHORIZATION })).json() as { transfers: { kind: string; state: string; transfer: { from: string } }[] };
    const approvals = history.transfers.filter((entry) => entry.kind === "payout-approval");
    expect(approvals.map((entry) => [entry.transfer.from, entry.state]).sort()).toEqual(lanes.map((lane) => [lane.address, "mined"]).sort());
    const repeat = await postJson(service.app, "/payouts", { items: batches[4] }, { "idempotency-key": "pool-batch-4" });
    expect(repeat.statusCode, repeat.raw).toBe(200);
    expect(repeat.body).toMatchObject({ id: answers[4].body.id, transaction: answers[4].body.transaction });
  }, 90_000);
});
