/**
 * A seeded fault simulation of the send path, in the way TigerBeetle and FoundationDB test: one seed decides
 * every fault and when it strikes, and after every run the answer contract's invariants are checked
 * against the chain. The service runs as a real process (so it can be killed -9) behind a fault-injecting
 * JSON-RPC proxy in front of a real dev node with a 1 s block time (so transactions wait in a pool).
 *
 * Faults: refusals in known and unknown wordings, time-outs before and after the node takes a
 * transaction, lost answers, a node that empties its pool (as after a restart), reorganisations (anvil
 * only: Hardhat Network cannot replace blocks), another sender using the wallet's key, a transfer waiting
 * in the pool displaced by another sender's transaction that a reorganisation then removes (anvil), kill -9
 * of the service mid-burst, the endpoint as a fleet (receipts, logs and mined lookups lagging the head by
 * 0-30 s per call; a backend stuck at an old head for up to 60 s while others advance), several endpoints
 * (in 40 % of runs two or three, each a proxy of its own; per wave an extra one may die mid-burst, follow the
 * chain 2-11 blocks behind, or be rate-limited), a first endpoint that keeps one broadcast for good, counted as
 * pending, and never passes it on, holding it or taking it afresh at each re-send to drop it unseen (half
 * the runs on anvil, never-passed-on.ts), and the journal's
 * disk filling up (a real tmpfs, where the process may mount one:
 * root, as in CI; elsewhere that fault is left out and the report says so). The seed fixes which call and which step meet which fault; the operating
 * system's scheduling still varies, so a failing seed is replayed to see it again, not always the same.
 *
 * Among the transfers, payout batches (POST /payouts, 2 to 4 items, always with an Idempotency-Key) on the
 * default network's token, each item checked as a transfer is: paid once or not at all, never after a 417 or
 * a 503, and every item of a batch answered 200 paid or reported failed by GET /payouts/:id.
 *
 * Transfers and batches of the default token above APPROVAL_ABOVE_TOKENS wait for a second admin key; their
 * decisions (approve, reject, both, twice, none) are sent among the wave's faults and kill (approvals.ts):
 * never paid unless approved, paid once when approved, one decision each.
 *
 * The audit log's hash chain holds after every run, whatever was killed when (its entries are sealed in the
 * commit that makes them).
 *
 * The outflow watch runs throughout (every 300 ms): every unexpected outflow any run of the service logged
 * must be a transaction the outside sender made, never one of the service's own, whatever the faults.
 *
 * With `profile: "rollup"` (anvil only) the default chain is shaped as a rollup and its endpoint
 * (rollup-endpoint.ts): a block every 250 ms, state kept for 128 blocks (older state reads refused in geth's
 * words), a finalized tag 300 blocks behind the head whose first reads fail with a rate limit; and between
 * waves, in some runs, an outage of every endpoint longer than the state kept (150 to 400 blocks made
 * while no endpoint answers), with or without a kill -9 before it: what used a nonce before it is found
 * from block bodies only.
 *
 * With `networks: 2` the service pays on a second chain too (an anvil with another chain id, behind a
 * faulting proxy of its own), as NETWORKS_FILE describes both: each transfer goes to one of them (on the
 * default, some in its native coin), the waves' events (reorganisation, an emptied pool, an outside sender)
 * strike either, and every invariant is checked on each chain and for each token.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUnits, toBeHex } from "ethers";
import { request } from "undici";
import { type AuditBreak, findAuditBreak } from "../../src/journal/audit/audit-chain.js";
import { sqliteAuditRows } from "../../src/journal/audit/sqlite-audit-rows.js";
import { openKeptDatabase } from "../../src/journal/sqlite-keep-alive.js";
import { type BehindNode, watchBehindNode } from "../helpers/behind-node.js";
import { watchLaggingFleet } from "../helpers/lagging-fleet.js";
import { rollupEndpoint, startRollupChain } from "../helpers/rollup-endpoint.js";
import { type RpcProxy, type ScriptedAnswer, startRpcProxy } from "../helpers/rpc-proxy.js";
import { type ServerProcess, startServerProcess } from "../helpers/server-process.js";
import { AUTHORIZATION } from "../helpers/service.js";
import { type NodeKind, type TestChain, freshAddress, setEthBalance, startTestChain, startTestChainOn, tokenBalanceOf } from "../helpers/test-chain.js";
import { fillFilesystem, mountTinyFilesystem } from "../helpers/tiny-filesystem.js";
import { drawNeverPassedOn } from "./never-passed-on.js";
import {
  APPROVAL_ABOVE_TOKENS,
  APPROVAL_SETTINGS,
  type ApprovalPlan,
  type Waiting,
  answeredHash,
  approvalViolations,
  decideAgain,
  decideIfWaiting,
  drawPlan,
  finishDecisions,
  listedTransfers,
  noteAnswer,
  sentAs,
  waitedAndSentViolations,
} from "./approvals.js";

/** A small, fast, well-mixed generator (mulberry32): the same seed gives the same sequence everywhere. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export interface SimulationOptions {
  node: NodeKind;
  /** Transfers asked for in one run. */
  transfers: number;
  /** How likely a broadcast meets a fault, and an other call. */
  broadcastFaultRate: number;
  callFaultRate: number;
  /** 2: the service pays on a second chain too (an anvil with chain id 31338); default 1. */
  networks?: 1 | 2;
  /** Printed as the run goes, for the command line. */
  log?: (line: string) => void;
  /** A folder to copy the run's journal into (its SQLite files), once every process of the service is gone. */
  keepJournalIn?: string;
  /** "rollup": the default chain shaped as a rollup and its endpoint (anvil only); default: a dev chain. */
  profile?: "default" | "rollup";
}

export const DEFAULT_SIMULATION: Omit<SimulationOptions, "node"> = { transfers: 24, broadcastFaultRate: 0.3, callFaultRate: 0.03 };

/** A request as the client saw it. */
interface Asked {
  /** The chain it pays on. */
  chain: TestChain;
  recipient: string;
  /** Whole tokens; thousandths of the coin for a native transfer. */
  amount: bigint;
  /** A transfer of the native coin (two networks: some of the default network's). */
  native: boolean;
  key: string | undefined;
  /** A payout batch (POST /payouts): its items, each with its own recipient; `recipient` and `amount` are its first's. */
  payout?: { id: string; recipient: string; amount: bigint }[];
  body: string;
  /** The status and body of the first answer; status 0 when none came (the service was killed). */
  first: { status: number; body: string } | undefined;
  /** Above the threshold: it must wait for a second admin's decision (see approvals.ts). */
  mustWait: boolean;
  answeredWithoutWaiting?: boolean;
  /** What is done about it if it waits, drawn when it is made. */
  planned: ApprovalPlan;
  /** Answered 202: it waits. */
  approval?: Waiting;
}

export interface SimulationReport {
  seed: number;
  node: NodeKind;
  networks: 1 | 2;
  /** Broken invariants, in words; empty when the contract held. */
  violations: string[];
  /** What happened, for the log. */
  faults: Record<string, number>;
  answers: Record<string, number>;
  seconds: number;
}

const UNKNOWN_WORDINGS = ["the tx doesn't have the correct nonce. account has nonce of: 9 tx has nonce of: 8", "Internal error", "transaction rejected: try again later"];
const KNOWN_REFUSALS = ["nonce too low", "insufficient funds for gas * price + value", "max fee per gas less than block base fee"];

/** Runs one seed and checks every invariant; never throws for a broken invariant (it is reported). */
export async function simulateSeed(seed: number, options: SimulationOptions): Promise<SimulationReport> {
  const started = Date.now();
  const random = seededRandom(seed);
  const faults: Record<string, number> = {};
  const count = (name: string) => (faults[name] = (faults[name] ?? 0) + 1);
  const log = options.log ?? (() => undefined);

  // Anvil finalizes two epochs below its head: epochs of 4 slots make that 8 blocks (deeper than any
  // reorganisation the run makes), so that a displaced transfer is signed again within the run.
  const onRollup = options.profile === "rollup";
  if (onRollup && options.node !== "anvil") throw new Error("the rollup profile runs on anvil");
  const chain = onRollup
    ? await startRollupChain({ payoutContract: true })
    : options.node === "anvil"
      ? await startTestChain(["--block-time", "1", "--slots-in-an-epoch", "4"], { payoutContract: true })
      : await startTestChainOn("hardhat", { payoutContract: true });
  // Every endpoint of the default chain answers as a rollup's does, faults or not: it is the chain's nature.
  const rollup = onRollup ? rollupEndpoint(chain.rpcUrl) : undefined;
  // The rollup's outages have a sequence of their own: the other draws stay the seed's.
  const outageDraws = seededRandom(seed * 49_999 + 11);
  // Deeper than any reorganisation the run makes: the token's deployment stays on the chain.
  if (options.node === "anvil") await chain.provider.send("anvil_mine", [toBeHex(8)]);
  const proxy = await startRpcProxy(chain.rpcUrl);
  const fleet = watchLaggingFleet(chain.rpcUrl);
  const networks = options.networks ?? 1;
  // The second network: its own chain, and a proxy of its own meeting the run's faults.
  const second = networks === 2 ? await startSecondNetwork(chain) : undefined;
  const chains = second ? [chain, second.chain] : [chain];
  // The run's scenario (whether the endpoint's indexes lag, and what happens between waves) has a sequence
  // of its own, so that a seed meets the same ones however its calls interleave.
  const scenario = seededRandom(seed * 7_919 + 1);
  // Whether this run's endpoint is a fleet whose indexes lag (each call's lag drawn from the seed).
  const lagging = scenario() < 0.4;
  if (lagging) count("fleet: receipts, logs and lookups lag 0-30 s");
  // Whether the service has several endpoints of the chain: the first is the proxy above, the others each
  // meet the seed's faults too, and per wave an outage, a head behind, or a rate limit of their own.
  const endpointCount = scenario() < 0.4 ? 2 + Math.floor(scenario() * 2) : 1;
  if (endpointCount > 1) count(`endpoints: ${endpointCount}`);
  const extraEndpoints: ExtraEndpoint[] = [];
  for (let index = 1; index < endpointCount; index++) extraEndpoints.push({ proxy: await startRpcProxy(chain.rpcUrl), trouble: "none" });
  const tinyFilesystem = mountIfAllowed();
  if (!tinyFilesystem) count("journal disk full: left out (cannot mount a tmpfs here)");
  const journalDir = tinyFilesystem?.mountPoint ?? mkdtempSync(join(tmpdir(), `simulation-${seed}-`));
  const servers: ServerProcess[] = [];
  const violations: string[] = [];
  const asked: Asked[] = [];
  // The transactions the simulation sent with the wallet's key from outside the service, lowercase.
  const outsideHashes = new Set<string>();
  try {
    // Each call's fault is drawn in the order calls arrive: the seed fixes the sequence of faults.
    let faulting = false;
    // Anvil only: Hardhat Network automines, making a block only with a transaction, and a held transaction
    // at the wallet's next nonce holds back all the wallet's others: no blocks, so it would wait for good, as
    // it rightly does on a chain that makes none (the e2e test mines Hardhat's blocks by hand instead).
    const neverPassedOn = options.node === "anvil" ? drawNeverPassedOn(seededRandom(seed * 32_452_843 + 5), count) : undefined;
    proxy.fault = {
      kind: "script",
      answer: async (call) =>
        (await rollup?.answer(call)) ??
        neverPassedOn?.answer(call, faulting) ??
        (faulting ? (drawFault(call, random, options, count) ?? fleet.answer(call, lagging ? Math.floor(random() * 30_000) : 0)) : undefined),
    };
    for (const extra of extraEndpoints) {
      extra.proxy.fault = { kind: "script", answer: async (call) => (await rollup?.answer(call)) ?? (faulting ? answerAsTroubled(extra, call) ?? drawFault(call, random, options, count) : undefined) };
    }
    if (second) second.proxy.fault = { kind: "script", answer: (call) => (faulting ? drawFault(call, random, options, count) : undefined) };
    const rpcUrls = [proxy, ...extraEndpoints.map((extra) => extra.proxy)].map((each) => each.url);
    const networkSettings = second
      ? networksFile(join(journalDir, "networks.json"), chain, rpcUrls, second)
      : { RPC_URL: rpcUrls.join(","), TOKEN_ADDRESS: chain.demo.tokenAddress, PAYOUT_CONTRACT: chain.demo.payoutContract as string, APPROVAL_ABOVE: String(APPROVAL_ABOVE_TOKENS) };
    const env = {
      ...networkSettings,
      ...APPROVAL_SETTINGS,
      PRIVATE_KEY: chain.demo.privateKey,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      REBROADCAST_AFTER_MS: "500",
      // The first endpoint may hold a broadcast for good (never-passed-on.ts): replaced within the run.
      REPRICE_UNMINED_AFTER_MS: "2000",
      RPC_TIMEOUT_MS: "1500",
      CHAIN_REFRESH_INTERVAL_MS: "200",
      RATE_LIMIT_MAX: "100000",
      // Checked often, so that a run tries the outflow watch against every fault: it may report only the outside sender's.
      OUTFLOW_CHECK_INTERVAL_MS: "300",
    };
    // A service that cannot reach its node at startup refuses to start: faults strike once it serves.
    const start = async (thenFault: boolean) => {
      faulting = false;
      const server = await startServerProcess(env);
      servers.push(server);
      faulting = thenFault;
      return server;
    };
    let server = await start(true);

    // The workload: transfers in small concurrent waves, about half with an Idempotency-Key, some of those
    // sent twice at once; between waves the seed may reorganise the chain, empty the node's pool, use the
    // wallet from outside, or kill the service and start it again.
    const walletTokensBefore = await Promise.all(chains.map((each) => tokenBalanceOf(each, chain.demo.walletAddress)));
    const waves = Math.ceil(options.transfers / 4);
    // Whether each request is a payout batch: a sequence of its own, so that the transfers' draws stay the seed's.
    const payoutDraws = seededRandom(seed * 104_729 + 7);
    // And what is done about each if it waits for an approval.
    const approvalDraws = seededRandom(seed * 15_485_863 + 3);
    for (let wave = 0; wave < waves; wave++) {
      const batch: Asked[] = [];
      for (let index = 0; index < 4 && asked.length + batch.length < options.transfers; index++) {
        const amount = BigInt(1 + Math.floor(random() * 9));
        const recipient = freshAddress();
        const key = random() < 0.5 ? `sim-${seed}-${asked.length + batch.length}` : undefined;
        // With two networks, half the transfers go to the second (named), the rest to the default, where
        // some send its native coin (thousandths of it).
        const onSecond = second !== undefined && random() < 0.5;
        const native = second !== undefined && !onSecond && random() < 0.3;
        if (payoutDraws() < 0.2) {
          const number = asked.length + batch.length;
          // Items of 1 to 3 tokens: batches of 2 never wait for an approval, of 3 or 4 sometimes.
          const items = Array.from({ length: 2 + Math.floor(payoutDraws() * 3) }, (_, index) => ({ id: `item-${number}-${index}`, recipient: freshAddress(), amount: BigInt(1 + Math.floor(payoutDraws() * 3)) }));
          const payoutBody = JSON.stringify({ items: items.map((item) => ({ toAddress: item.recipient, amount: item.amount.toString(), id: item.id })) });
          const total = items.reduce((sum, item) => sum + item.amount, 0n);
          batch.push({
            chain,
            recipient: items[0].recipient,
            amount: items[0].amount,
            native: false,
            key: `sim-${seed}-payout-${number}`,
            payout: items,
            body: payoutBody,
            first: undefined,
            mustWait: total > APPROVAL_ABOVE_TOKENS,
            planned: drawPlan(approvalDraws),
          });
          count("payout batches sent");
          continue;
        }
        const body = JSON.stringify({ toAddress: recipient, ...(native ? { amount: `0.00${amount}`, token: "ETH" } : { amount: amount.toString() }), ...(onSecond && { network: "second" }) });
        const mustWait = !onSecond && !native && amount > APPROVAL_ABOVE_TOKENS;
        batch.push({ chain: onSecond && second ? second.chain : chain, recipient, amount, native, key, body, first: undefined, mustWait, planned: drawPlan(approvalDraws) });
      }
      asked.push(...batch);
      // The journal's disk fills up before this wave: nothing of it may be sent without its record.
      const diskFull = tinyFilesystem !== undefined && random() < 0.1;
      if (diskFull) {
        count("journal disk full");
        fillFilesystem(journalDir);
      }
      const killDuring = random() < 0.15;
      const outages = troubleEndpoints(extraEndpoints, chain, scenario, count);
      // A transfer answered 202 is decided within the wave, among its faults and its kill; one whose decision
      // nothing answered in an earlier wave is decided again.
      const serving = server;
      const sends = batch.map((item) => {
        const requests = [send(serving, item), ...(item.key && random() < 0.3 ? [send(serving, item)] : [])];
        return Promise.all(requests).then(() => decideIfWaiting(serving.baseUrl, item, count));
      });
      sends.push(decideAgain(serving.baseUrl, asked.slice(0, asked.length - batch.length), count));
      if (killDuring) {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 400)));
        count("kill -9");
        server.child.kill("SIGKILL");
        await server.exited;
      }
      await Promise.all(sends);
      await outages;
      // Another sender outbids a transfer still waiting in the pool, at its nonce; a reorganisation then
      // removes that block: the transfer's own bytes may be mined after all, so nothing may be signed for it
      // before the other transaction's block is final.
      if (options.node === "anvil" && scenario() < 0.2 && (await displaceThenReorganise(chain, outsideHashes))) count("displaced, then the displacing block reorganised out");
      if (diskFull) {
        // The operator frees the disk; a journal that failed to commit takes no writes until a restart.
        for (const name of readdirSync(journalDir)) if (name.startsWith("filler-")) rmSync(join(journalDir, name));
        if (!killDuring) {
          server.child.kill("SIGKILL");
          await server.exited;
        }
      }
      // Every endpoint out while more blocks are made than a node keeps state for (the service, alive or
      // killed, meets the chain again well past what it last read).
      if (onRollup && outageDraws() < 0.25) {
        const blocks = 150 + Math.floor(outageDraws() * 250);
        count("rollup: an outage longer than the state kept");
        // An endpoint this wave's trouble already took down comes back with the next wave, as it would.
        const up = [proxy, ...extraEndpoints.filter((extra) => extra.trouble !== "down").map((extra) => extra.proxy)];
        for (const each of up) await each.goDown();
        await chain.provider.send("anvil_mine", [toBeHex(blocks)]);
        for (const each of up) await each.comeBack();
      }
      if (killDuring || diskFull) server = await start(true);
      const event = random();
      // With two networks the event strikes either chain; one network keeps its seeds' sequence.
      const struck = second && random() < 0.5 ? second.chain : chain;
      const where = struck === chain ? "" : " (second network)";
      if (event < 0.15 && struck.kind === "anvil") {
        count(`reorg${where}`);
        await struck.provider.send("anvil_reorg", [1 + Math.floor(random() * 3), []]).catch(() => undefined);
      } else if (event < 0.25) {
        count(`pool emptied${where}`);
        await emptyPool(struck);
      } else if (event < 0.35) {
        count(`outside sender${where}`);
        const outside = struck === chain ? chain.hotWallet : chain.hotWallet.connect(struck.provider);
        const nonce = await struck.provider.getTransactionCount(chain.demo.walletAddress, "pending");
        const sent = await outside.sendTransaction({ to: chain.demo.walletAddress, value: 0n, nonce }).catch(() => undefined);
        if (sent) outsideHashes.add(sent.hash.toLowerCase());
      }
      if (scenario() < 0.2) {
        count("fleet: a backend stuck at an old head");
        fleet.stickBackend(Math.floor(scenario() * 60_000), 0.5, random);
      }
    }

    // The faults stop; the service gets its chance to finish what it owns.
    faulting = false;
    await Promise.all(extraEndpoints.map((extra) => clearTrouble(extra)));
    if (server.child.exitCode !== null || server.child.signalCode !== null) server = await start(false);
    for (const item of asked) {
      if (!item.key || item.first?.status === 200 || item.first?.status === 417 || item.first?.status === 202) continue;
      // On a rollup a displaced approval of the payout contract waits for the finalized tag (75 s) before it
      // is signed again: until then its batches are answered 503 PAYOUT_APPROVAL_PENDING, key unused.
      item.first = await askUntilDecided(server, item, onRollup ? 150_000 : 30_000);
      noteAnswer(item, item.first.status);
    }
    await finishDecisions(server.baseUrl, asked, count, Date.now() + 30_000);
    // What a transfer that waited was sent as, if it was: owed as a 200 is.
    const listedBefore = await listedTransfers(server.baseUrl);
    const owedAs = (item: Asked) => {
      const entry = item.approval && listedBefore.get(item.approval.id);
      return (entry && sentAs(entry)) ?? undefined;
    };
    // On a rollup a transfer displaced waits for the finalized tag, 300 blocks (75 s) behind the head.
    await settle(chains, server, asked, owedAs, onRollup ? 200_000 : 90_000);
    // Whether the held broadcast was got moving by a replacement at its nonce (one endpoint) or by another
    // endpoint passing its same bytes on: the report says which path a seed took.
    const heldRepriced = servers.some((each) => each.output().includes("yet the chain made blocks without it"));
    if (heldRepriced) count("a held broadcast re-priced at its nonce");
    // Read again once settled: an approval its client gave up on may have been sent since.
    const listed = await listedTransfers(server.baseUrl);
    violations.push(...waitedAndSentViolations(listed));

    // The invariants.
    for (const item of asked) {
      if (item.answeredWithoutWaiting) violations.push(`${item.payout ? "payout" : "transfer"} to ${item.recipient} (${item.key ?? "no key"}): above APPROVAL_ABOVE, answered 200 before any approval`);
      // One that waited for an approval is owed as a 200 once sent, and owed nothing when not (its key's
      // answers are approvalViolations' to check).
      const waited = item.approval && (await approvalViolations(item as Asked & { approval: Waiting }, listed, () => ask(server, item)));
      if (waited) violations.push(...waited.violations);
      const owed = owedOf(item, waited?.sentAs);
      if (item.payout) {
        const evidence = (hash: string) => evidenceOf(item.chain, chain.demo.walletAddress, servers, server, hash);
        violations.push(...(await payoutViolations(server, item, owed, evidence)));
        continue;
      }
      const paid = await paidTo(item);
      const expected = expectedOf(item);
      const name = `transfer to ${item.recipient} (${item.key ?? "no key"}, first answer ${item.first?.status ?? "none"}${waited ? `, waited for approval ${item.approval?.id}` : ""})`;
      if (paid !== 0n && paid !== expected) violations.push(`${name}: recipient holds ${paid}, neither 0 nor the amount once`);
      if (owed.nothingSent && paid !== 0n) violations.push(`${name}: ${owed.nothingSent} but paid`);
      if (owed.hash !== undefined && paid !== expected) {
        const state = await stateOf(server, owed.hash);
        if (state !== "failed" && state !== "replaced") {
          const headline = `${name}: ${owed.why}, not paid and not reported failed (state ${state})`;
          violations.push(`${headline}\n${await evidenceOf(item.chain, chain.demo.walletAddress, servers, server, owed.hash)}\n  (the evidence of: ${headline})`);
        }
      }
      if (!waited && item.key && item.first && item.first.status !== 0) {
        const replay = await ask(server, item);
        if (replay.status !== item.first.status || replay.body !== item.first.body) {
          violations.push(`${name}: replay answered ${replay.status} ${replay.body.slice(0, 120)}, not the first answer ${item.first.status} ${item.first.body.slice(0, 120)}`);
        }
      }
    }
    for (const [index, each] of chains.entries()) {
      const where = index === 0 ? "" : " on the second network";
      let paidInTotal = 0n;
      // Tokens only: the wallet's ETH pays gas beside what native transfers send (each checked above).
      for (const item of asked) {
        if (item.chain !== each || item.native) continue;
        for (const { recipient } of item.payout ?? [item]) paidInTotal += await tokenBalanceOf(each, recipient);
      }
      const spent = walletTokensBefore[index] - (await tokenBalanceOf(each, chain.demo.walletAddress));
      if (spent !== paidInTotal) violations.push(`the wallet spent ${spent} base units${where}, its recipients there received ${paidInTotal}`);
      const mined = await each.provider.getTransactionCount(chain.demo.walletAddress, "latest");
      const pending = await each.provider.getTransactionCount(chain.demo.walletAddress, "pending");
      if (mined !== pending) violations.push(`nonces not contiguous${where}: ${mined} mined, ${pending} counted with the pool (a gap or a transaction stuck)`);
    }
    for (const unconfirmed of await unconfirmedOf(server)) violations.push(`the service still holds an unconfirmed transfer: ${JSON.stringify(unconfirmed)}`);
    // On a rollup, nothing is final before the node's finalized tag passes it: no transfer's finalized block
    // above the highest the endpoint ever answered.
    if (rollup) {
      for (const item of asked) {
        const hash = item.first?.status === 200 && !item.payout ? answeredHash(item.first.body) : undefined;
        if (!hash) continue;
        const { finalized, finalizedBlock } = await finalityOf(server, hash);
        if (finalized) count("rollup: transfers reported final");
        if (finalized && (finalizedBlock == null || finalizedBlock > rollup.met.highestFinalized)) {
          violations.push(`transfer ${hash} reported final at block ${finalizedBlock}, above the highest finalized block the node answered (${rollup.met.highestFinalized})`);
        }
      }
    }
    // Every unexpected outflow any run of the service reported is one the outside sender made: never one of the service's.
    for (const reported of reportedOutflows(servers)) {
      if (!outsideHashes.has(reported)) violations.push(`the service reported ${reported} as an unexpected outflow, which the outside sender did not send`);
    }
  } catch (error) {
    violations.push(`the run itself failed: ${(error as Error).stack ?? error}`);
  } finally {
    for (const server of servers) server.child.kill("SIGKILL");
    await Promise.all(servers.map((server) => server.exited));
    const broken = auditChainBreak(join(journalDir, "transfers.sqlite"));
    if (broken) violations.push(`the audit log's chain breaks at entry ${broken.seq}: ${broken.reason}`);
    if (options.keepJournalIn) {
      for (const name of readdirSync(journalDir)) if (name.startsWith("transfers.sqlite")) copyFileSync(join(journalDir, name), join(options.keepJournalIn, name));
    }
    fleet.stop();
    if (rollup) {
      faults["rollup: finalized reads refused (rate limit)"] = rollup.met.finalizedRefused;
      faults["rollup: state reads refused as pruned"] = rollup.met.prunedStateRefused;
      rollup.stop();
    }
    await proxy.close();
    await second?.proxy.close();
    await second?.chain.stop();
    for (const extra of extraEndpoints) {
      extra.behind?.stop();
      await extra.proxy.close();
    }
    await chain.stop();
    if (tinyFilesystem) tinyFilesystem.unmount();
    else rmSync(journalDir, { recursive: true, force: true });
  }
  const answers: Record<string, number> = {};
  for (const item of asked) answers[String(item.first?.status ?? "none")] = (answers[String(item.first?.status ?? "none")] ?? 0) + 1;
  const report = { seed, node: options.node, networks, violations, faults, answers, seconds: Math.round((Date.now() - started) / 1000) };
  log(`seed ${seed} on ${options.node}${onRollup ? " (rollup)" : ""}${networks === 2 ? " and a second network" : ""}: ${violations.length === 0 ? "ok" : `${violations.length} VIOLATIONS`} in ${report.seconds} s; faults ${JSON.stringify(faults)}; answers ${JSON.stringify(answers)}`);
  return report;
}

/** An endpoint besides the first, and what troubles it during the current wave. */
interface ExtraEndpoint {
  proxy: RpcProxy;
  trouble: "none" | "down" | "behind" | "rate-limited";
  behind?: BehindNode;
}

/**
 * Per wave, each extra endpoint may die in the middle of the burst (back at the next wave), follow the chain
 * 2-11 blocks behind, or answer every call with a rate limit, drawn from the scenario's sequence. Resolves
 * once a death scheduled for this wave has happened.
 */
async function troubleEndpoints(extras: ExtraEndpoint[], chain: TestChain, scenario: () => number, count: (name: string) => void): Promise<void> {
  const deaths: Promise<void>[] = [];
  for (const extra of extras) {
    await clearTrouble(extra);
    const roll = scenario();
    if (roll < 0.15) {
      count("endpoint: dies mid-burst");
      extra.trouble = "down";
      const delayMs = Math.floor(scenario() * 400);
      deaths.push(new Promise((resolve) => setTimeout(resolve, delayMs)).then(() => extra.proxy.goDown()));
    } else if (roll < 0.3) {
      count("endpoint: head 2-11 blocks behind");
      extra.trouble = "behind";
      extra.behind = watchBehindNode(chain.rpcUrl, 2 + Math.floor(scenario() * 10));
      await extra.behind.ready;
    } else if (roll < 0.4) {
      count("endpoint: rate-limited");
      extra.trouble = "rate-limited";
    }
  }
  await Promise.all(deaths);
}

async function clearTrouble(extra: ExtraEndpoint): Promise<void> {
  if (extra.trouble === "down") await extra.proxy.comeBack();
  extra.behind?.stop();
  extra.behind = undefined;
  extra.trouble = "none";
}

// The answer of a troubled endpoint, or undefined to draw the run's usual faults.
function answerAsTroubled(extra: ExtraEndpoint, call: { method: string; params: unknown[] }): ScriptedAnswer {
  if (extra.trouble === "rate-limited") return { error: { code: -32005, message: "Your app has exceeded its compute units per second capacity" } };
  return extra.behind?.answer(call);
}

// A tmpfs of 8 MiB for the journal, where this process may mount one.
function mountIfAllowed(): ReturnType<typeof mountTinyFilesystem> | undefined {
  try {
    return mountTinyFilesystem(8 * 1024);
  } catch {
    return undefined;
  }
}

// One call's fault, drawn from the seed's sequence.
function drawFault(call: { method: string; params: unknown[] }, random: () => number, options: SimulationOptions, count: (name: string) => void): ScriptedAnswer {
  const roll = random();
  const choice = random();
  if (call.method === "eth_sendRawTransaction") {
    if (roll >= options.broadcastFaultRate) return undefined;
    if (choice < 0.2) {
      count("refused, known words");
      return { error: { code: -32000, message: KNOWN_REFUSALS[Math.floor(random() * KNOWN_REFUSALS.length)] } };
    }
    if (choice < 0.4) {
      count("refused, unknown words");
      return { error: { code: -32000, message: UNKNOWN_WORDINGS[Math.floor(random() * UNKNOWN_WORDINGS.length)] } };
    }
    if (choice < 0.6) {
      count("time-out before the node");
      return "hang";
    }
    count("lost answer after the node took it");
    return "lost-reply";
  }
  // The wallet's own reads and the simulation's pre-flight: a rarer time-out or server error.
  if (roll >= options.callFaultRate || call.method === "eth_chainId") return undefined;
  if (choice < 0.5) {
    count(`time-out on ${call.method}`);
    return "hang";
  }
  count(`error on ${call.method}`);
  return { error: { code: -32603, message: "Internal error" } };
}

// As a client retries a key whose answer said "nothing done, retry" (503: a payout waiting for the wallet's
// approval, the node out of reach; 409: the first request still in flight), for up to 30 s.
async function askUntilDecided(server: ServerProcess, item: Asked, withinMs: number): Promise<{ status: number; body: string }> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const answer = await ask(server, item);
    if ((answer.status !== 503 && answer.status !== 409) || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function send(server: ServerProcess, item: Asked): Promise<void> {
  const answer = await ask(server, item);
  noteAnswer(item, answer.status);
  // The first answer a client got is what every replay must repeat.
  if (!item.first || item.first.status === 0 || (item.first.status === 409 && answer.status !== 409)) item.first = answer;
}

// One request; status 0 when the connection broke (the service was killed).
async function ask(server: ServerProcess, item: Asked): Promise<{ status: number; body: string }> {
  try {
    const response = await request(`${server.baseUrl}${item.payout ? "/payouts" : "/transfer"}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTHORIZATION, ...(item.key ? { "idempotency-key": item.key } : {}) },
      body: item.body,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    return { status: response.statusCode, body: await response.body.text() };
  } catch {
    return { status: 0, body: "" };
  }
}

/**
 * Another sender of the wallet's key outbids the lowest transfer waiting in anvil's pool at its nonce; once
 * that is mined, the block is reorganised away. Whether it was done (nothing waited in the pool).
 */
/** The transactions every run of the service logged as unexpected outflows, lowercase. */
function reportedOutflows(servers: readonly ServerProcess[]): Set<string> {
  const reported = new Set<string>();
  for (const server of servers) {
    for (const line of server.output().split("\n")) {
      if (!line.includes("UNEXPECTED OUTFLOW")) continue;
      // A line cut short by a kill -9 still names the transaction.
      const hash = /"hash":"(0x[0-9a-fA-F]{64})"/.exec(line)?.[1];
      if (hash) reported.add(hash.toLowerCase());
    }
  }
  return reported;
}

async function displaceThenReorganise(chain: TestChain, outsideHashes: Set<string>): Promise<boolean> {
  const wallet = chain.demo.walletAddress;
  const content = (await chain.provider.send("txpool_content", []).catch(() => ({}))) as { pending?: Record<string, Record<string, { nonce: string; maxFeePerGas?: string }>> };
  const waiting = Object.entries(content.pending ?? {}).find(([sender]) => sender.toLowerCase() === wallet.toLowerCase())?.[1];
  const lowest = waiting && Object.values(waiting).sort((a, b) => Number(a.nonce) - Number(b.nonce))[0];
  if (!lowest) return false;
  const price = 3n * BigInt(lowest.maxFeePerGas ?? "0x3b9aca00");
  const outside = await chain.hotWallet.sendTransaction({ to: wallet, value: 0n, nonce: Number(lowest.nonce), maxFeePerGas: price, maxPriorityFeePerGas: price }).catch(() => undefined);
  if (!outside) return false;
  outsideHashes.add(outside.hash.toLowerCase());
  const deadline = Date.now() + 5_000;
  let receipt = await chain.provider.getTransactionReceipt(outside.hash);
  while (Date.now() < deadline && !receipt) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    receipt = await chain.provider.getTransactionReceipt(outside.hash);
  }
  if (!receipt) return false;
  // Back to the block below the displacing one (fewer blocks than are final).
  const depth = Math.min(7, (await chain.provider.getBlockNumber()) - receipt.blockNumber + 1);
  await chain.provider.send("anvil_reorg", [depth, []]).catch(() => undefined);
  return true;
}

// A node that lost its pool, as after a restart: everything pending is forgotten.
async function emptyPool(chain: TestChain): Promise<void> {
  if (chain.kind === "anvil") {
    await chain.provider.send("anvil_dropAllTransactions", []).catch(() => undefined);
    return;
  }
  const content = (await chain.provider.send("txpool_content", []).catch(() => ({ pending: {} }))) as { pending?: Record<string, Record<string, { hash: string }>> };
  for (const byNonce of Object.values(content.pending ?? {})) {
    for (const transaction of Object.values(byNonce)) await chain.provider.send("hardhat_dropTransaction", [transaction.hash]).catch(() => undefined);
  }
}

// What a failing seed leaves to read when it cannot be replayed (CI): the service's status document, what
// the node returns for each attempt, and every line the service logged about them.
async function evidenceOf(chain: TestChain, wallet: string, servers: ServerProcess[], server: ServerProcess, hash: string): Promise<string> {
  const status = (await (await request(`${server.baseUrl}/transactions/${hash}`, { headers: AUTHORIZATION })).body.json()) as { attempts?: { hash: string }[] };
  const hashes = (status.attempts ?? [{ hash }]).map((attempt) => attempt.hash.toLowerCase());
  const onNode = await Promise.all(
    hashes.map(async (attemptHash) => {
      const found = (await chain.provider.send("eth_getTransactionByHash", [attemptHash])) as { nonce: string; blockNumber: string | null; blockHash: string | null } | null;
      if (!found) return `${attemptHash}: unknown to the node`;
      if (found.blockNumber === null) return `${attemptHash}: nonce ${Number(found.nonce)}, block none (pool)`;
      // The node's index names a block: is it the chain's block at that height, and does it hold the transaction?
      const canonical = (await chain.provider.send("eth_getBlockByNumber", [found.blockNumber, false])) as { hash: string; transactions: string[] } | null;
      const receipt = (await chain.provider.send("eth_getTransactionReceipt", [attemptHash])) as { status: string; blockHash: string } | null;
      const held = canonical?.transactions.some((each) => each.toLowerCase() === attemptHash) ?? false;
      return `${attemptHash}: nonce ${Number(found.nonce)}, block ${Number(found.blockNumber)} ${found.blockHash} (the chain's block there: ${canonical?.hash ?? "none"}, ${held ? "holds it" : "does not hold it"}; receipt ${receipt ? `status ${receipt.status} in ${receipt.blockHash}` : "none"})`;
    }),
  );
  // The settle loop's own lookups name the hash too, once a second: they would hide what the service did.
  const aboutIt = (line: string) => !line.includes('"msg":"request completed"') && hashes.some((attemptHash) => line.toLowerCase().includes(attemptHash));
  const logged = servers.flatMap((each, index) => each.output().split("\n").filter(aboutIt).map((line) => `  [service ${index}] ${line}`));
  // A background round that fails every time names no transfer: its last warnings and errors, per service.
  const warnings = servers.flatMap((each, index) =>
    each
      .output()
      .split("\n")
      .filter((line) => /"level":(40|50|60)/.test(line))
      .slice(-8)
      .map((line) => `  [service ${index}, warning] ${line.slice(0, 600)}`),
  );
  const minedNonces = await chain.provider.getTransactionCount(wallet, "latest");
  // The facts last: CI shows the end of a long failure.
  return [...logged.slice(0, 40), ...warnings, `  status: ${JSON.stringify(status)}`, `  node (mined nonce count ${minedNonces}): ${onNode.join("; ")}`].join("\n");
}

// The oldest unconfirmed transfer of every network the service pays on: none once it holds nothing unsettled.
async function unconfirmedOf(server: ServerProcess): Promise<unknown[]> {
  const wallet = (await (await request(`${server.baseUrl}/wallet`, { headers: AUTHORIZATION })).body.json()) as { oldestUnconfirmed: unknown; networks?: { oldestUnconfirmed: unknown }[] };
  return (wallet.networks ?? [wallet]).map((network) => network.oldestUnconfirmed).filter((oldest) => oldest !== null);
}

/** The second network of a run: an anvil with another chain id, its token, and a proxy in front of it. */
interface SecondNetwork {
  chain: TestChain;
  proxy: RpcProxy;
}

// The first chain's wallet signs on both: it gets ETH and the second chain's tokens there.
async function startSecondNetwork(first: TestChain): Promise<SecondNetwork> {
  const chain = await startTestChain(["--chain-id", "31338", "--block-time", "1", "--slots-in-an-epoch", "4"]);
  await chain.provider.send("anvil_mine", [toBeHex(8)]);
  await setEthBalance(chain, first.demo.walletAddress, "1000");
  await (await chain.token.getFunction("transfer")(first.demo.walletAddress, parseUnits("100000", chain.decimals))).wait();
  return { chain, proxy: await startRpcProxy(chain.rpcUrl) };
}

// NETWORKS_FILE of a run on two networks, written to `path`: the variables that start the service so.
function networksFile(path: string, first: TestChain, firstUrls: readonly string[], second: SecondNetwork): Record<string, string> {
  writeFileSync(
    path,
    JSON.stringify({
      networks: [
        {
          name: "first",
          chainId: 31337,
          rpcUrls: firstUrls,
          tokens: { FIRST: { address: first.demo.tokenAddress, approvalAbove: String(APPROVAL_ABOVE_TOKENS) }, ETH: "native" },
          payoutContract: first.demo.payoutContract,
        },
        { name: "second", chainId: 31338, rpcUrls: [second.proxy.url], tokens: { SECOND: second.chain.demo.tokenAddress } },
      ],
      default: { network: "first", token: "FIRST" },
    }),
  );
  return { NETWORKS_FILE: path };
}

/** What the recipient of `item` holds: of the token, or of the native coin (a fresh address has nothing else). */
function paidTo(item: Asked): Promise<bigint> {
  return item.native ? item.chain.provider.getBalance(item.recipient) : tokenBalanceOf(item.chain, item.recipient);
}

/** What `item` pays its recipient, in base units. */
function expectedOf(item: Asked): bigint {
  return item.native ? item.amount * 10n ** 15n : item.amount * 10n ** BigInt(item.chain.decimals);
}

/** What each item of a payout batch answered 200 is now, by GET /payouts/:id. */
async function payoutStates(server: ServerProcess, item: Asked): Promise<string[]> {
  const id = JSON.parse((item.first as { body: string }).body).id as number;
  const response = await request(`${server.baseUrl}/payouts/${id}`, { headers: AUTHORIZATION });
  const answer = (await response.body.json()) as { items?: { state: string }[] };
  return answer.items?.map((each) => each.state) ?? [`HTTP ${response.statusCode}`];
}

// Every item of a batch answered 200 is paid, or reported failed.
async function payoutSettled(server: ServerProcess, item: Asked): Promise<boolean> {
  const states = await payoutStates(server, item);
  return states.every((state) => state === "paid" || state === "failed");
}

// The invariants of a payout batch, per item, as for a transfer: each item's recipient holds its amount once
// or nothing; nothing after a 417 or a 503; after a 200, each item paid or reported failed, and reported
// paid only when it was; a replay answers the first answer.
async function payoutViolations(server: ServerProcess, item: Asked, owed: Owed, evidenceOf: (hash: string) => Promise<string>): Promise<string[]> {
  const violations: string[] = [];
  const name = `payout ${item.key} (first answer ${item.first?.status ?? "none"}${item.approval ? `, waited for approval ${item.approval.id}` : ""})`;
  const paid = await Promise.all((item.payout ?? []).map((each) => tokenBalanceOf(item.chain, each.recipient)));
  const expected = (item.payout ?? []).map((each) => each.amount * 10n ** BigInt(item.chain.decimals));
  for (const [index, each] of (item.payout ?? []).entries()) {
    if (paid[index] !== 0n && paid[index] !== expected[index]) violations.push(`${name}: item ${each.id}'s recipient holds ${paid[index]}, neither 0 nor the amount once`);
    if (owed.nothingSent && paid[index] !== 0n) violations.push(`${name}: ${owed.nothingSent} but item ${each.id} paid`);
  }
  if (owed.hash !== undefined) {
    const states = await payoutStates(server, item);
    for (const [index, state] of states.entries()) {
      const id = item.payout?.[index]?.id;
      if (state === "paid" && paid[index] !== expected[index]) violations.push(`${name}: item ${id} reported paid, its recipient holds ${paid[index]}`);
      if (state !== "paid" && state !== "failed") violations.push(`${name}: item ${id} ${owed.why}, not paid and not reported failed (state ${state})`);
      if (state === "failed" && paid[index] !== 0n) violations.push(`${name}: item ${id} reported failed, yet its recipient holds ${paid[index]}`);
    }
    // The batch's one transaction carries every item: its evidence once, after the items it left unsettled.
    if (states.some((state) => state !== "paid" && state !== "failed")) violations.push(`${name}: the evidence\n${await evidenceOf(owed.hash)}`);
  }
  // A batch that waited: its key's answers are approvalViolations' to check.
  if (!item.approval && item.first && item.first.status !== 0) {
    const replay = await ask(server, item);
    if (replay.status !== item.first.status || replay.body !== item.first.body) {
      violations.push(`${name}: replay answered ${replay.status} ${replay.body.slice(0, 120)}, not the first answer ${item.first.status} ${item.first.body.slice(0, 120)}`);
    }
  }
  return violations;
}

/**
 * What the service owes for `item`: `hash`, the transaction it answered (a 200, or an approval that was
 * sent), then paid once or reported failed; `nothingSent`, why nothing of it may ever be paid (a 417 or a
 * 503, or a wait that ended unsent: rejected, expired, refused). Neither: its fate is not known to the client.
 */
interface Owed {
  hash?: string;
  why?: string;
  nothingSent?: string;
}

// `waitedSentAs`: for one that waited for an approval, what it was sent as (null: never).
function owedOf(item: Asked, waitedSentAs: string | null | undefined): Owed {
  if (item.first?.status === 200) return { hash: answeredHash(item.first.body) ?? undefined, why: "answered 200" };
  if (waitedSentAs) return { hash: waitedSentAs, why: "approved and sent" };
  if (waitedSentAs === null) return { nothingSent: "waited for approval and was never sent" };
  // A 503 says nothing was sent (the key, if any, was left unused and the retry above judged on its own).
  if (item.first?.status === 417 || item.first?.status === 503) return { nothingSent: `answered ${item.first.status}` };
  return {};
}

async function finalityOf(server: ServerProcess, hash: string): Promise<{ finalized?: boolean; finalizedBlock?: number | null }> {
  const response = await request(`${server.baseUrl}/transactions/${hash}`, { headers: AUTHORIZATION });
  return (await response.body.json()) as { finalized?: boolean; finalizedBlock?: number | null };
}

async function stateOf(server: ServerProcess, hash: string): Promise<string> {
  const response = await request(`${server.baseUrl}/transactions/${hash}`, { headers: AUTHORIZATION });
  return ((await response.body.json()) as { state?: string }).state ?? `HTTP ${response.statusCode}`;
}

// Waits until every transfer answered 200 is paid or reported failed, and the service holds nothing
// unconfirmed; on a node without a block time, blocks are mined meanwhile.
async function settle(chains: readonly TestChain[], server: ServerProcess, asked: Asked[], owedAs: (item: Asked) => string | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const wallet = chains[0].demo.walletAddress;
  for (;;) {
    let gaps = 0;
    for (const chain of chains) {
      if (chain.kind !== "anvil") await chain.provider.send("hardhat_mine", [toBeHex(1)]);
      const mined = await chain.provider.getTransactionCount(wallet, "latest");
      if (mined !== (await chain.provider.getTransactionCount(wallet, "pending"))) gaps++;
    }
    let open = 0;
    for (const item of asked) {
      const { hash } = owedOf(item, owedAs(item));
      if (hash === undefined) continue;
      if (item.payout) {
        if (!(await payoutSettled(server, item))) open++;
        continue;
      }
      if ((await paidTo(item)) > 0n) continue;
      const state = await stateOf(server, hash);
      if (state !== "failed" && state !== "replaced") open++;
    }
    if (open === 0 && (await unconfirmedOf(server)).length === 0 && gaps === 0) return;
    if (Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** Where the journal's audit chain breaks, read once the service is gone; undefined when it holds (or no journal was made). */
function auditChainBreak(path: string): AuditBreak | undefined {
  if (!existsSync(path)) return undefined;
  const db = openKeptDatabase(path, { readonly: true });
  try {
    return findAuditBreak(sqliteAuditRows(db));
  } finally {
    db.close();
  }
}
