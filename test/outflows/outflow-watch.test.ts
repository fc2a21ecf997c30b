/**
 * The outflow watch against a scripted node (the answers a lagging backend gives, which a real node does not
 * give on demand): a report needs the transaction found in the chain's blocks; a nonce the answers do not
 * settle is asked about again; a log read again is reported once; the service's own hashes and nonces never;
 * code at the wallet is reported; a restart goes on from where the journal says the watch got to.
 */
import { concat, getAddress, keccak256, makeError, toQuantity, zeroPadValue } from "ethers";
import { describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/journal/transfer-journal.js";
import { TRANSFER_TOPIC } from "../../src/node/erc20.js";
import type { OutflowWatchProgress } from "../../src/journal/transfer-journal.js";
import { type LaneJournal, OTHER_TOKEN_REPORTS_PER_CHECK, OTHER_TOKEN_REPORTS_PER_CONTRACT, OutflowWatch, type UnexpectedOutflow } from "../../src/outflows/outflow-watch.js";

const WALLET = "0x7F5977502cAbc653a9Dc225118fFca92F62CB93A";
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";
const THIEF = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const hashOf = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

/** A chain of blocks, each with the wallet's transactions (hash, nonce), and the Transfer logs out of it. */
class ScriptedChain {
  head = 10;
  readonly transactions: { block: number; nonce: number; hash: string }[] = [];
  readonly logs: { block: number; hash: string; logIndex: number; to: string; amount: bigint; data?: string; token?: string }[] = [];
  /** Whether eth_getLogs answers newest first (nothing says a node must keep the chain's order). */
  logsNewestFirst = false;
  /** Blocks whose count reads answer nothing (a backend that does not have them yet). */
  readonly blind = new Set<number>();
  /** Whether count reads fail outright (a node fault). */
  countsFail = false;
  /** Blocks where an EIP-7702 authorization of the wallet, carried by another account's transaction, used a nonce. */
  readonly delegations: number[] = [];
  /** The wallet's code from a block on (its delegation), and how many times it was read. */
  code: { from: number; code: string } | undefined;
  codeReads = 0;

  countAt(block: number): number {
    return this.transactions.filter((transaction) => transaction.block <= block).length + this.delegations.filter((at) => at <= block).length;
  }

  /** The head as the lanes' pollers read it. */
  headBlock = async () => ({ number: this.head, hash: hashOf(1_000 + this.head) });

  async send(method: string, params: unknown[]): Promise<unknown> {
    if (method === "eth_getCode") {
      this.codeReads++;
      return this.code && Number(params[1]) >= this.code.from ? this.code.code : "0x";
    }
    if (method === "eth_getTransactionCount") {
      if (this.countsFail) throw new Error("missing trie node");
      const block = Number(params[1]);
      return this.blind.has(block) ? null : toQuantity(this.countAt(block));
    }
    if (method === "eth_getBlockByNumber") {
      const block = Number(params[0]);
      const transactions = this.transactions.filter((transaction) => transaction.block === block).map(({ hash, nonce }) => ({ hash, from: WALLET.toLowerCase(), nonce: toQuantity(nonce) }));
      return { hash: hashOf(1_000 + block), transactions };
    }
    if (method === "eth_getTransactionByHash") return { to: TOKEN.toLowerCase(), value: "0x0" };
    if (method === "eth_getLogs") {
      const { fromBlock, toBlock, topics, address } = params[0] as { fromBlock: string; toBlock: string; topics: [string, string[]]; address?: string[] };
      // Every contract's Transfers out of the wallet: no address filter, but for a block the node refused so.
      expect(topics).toEqual([TRANSFER_TOPIC, [zeroPadValue(WALLET, 32)]]);
      const answered = this.logs
        .filter((log) => log.block >= Number(fromBlock) && log.block <= Number(toBlock) && (address === undefined || address.includes(log.token ?? TOKEN)))
        .map((log) => ({
          address: (log.token ?? TOKEN).toLowerCase(),
          topics: [TRANSFER_TOPIC, zeroPadValue(WALLET, 32), zeroPadValue(log.to, 32)],
          data: log.data ?? toQuantity(log.amount),
          transactionHash: log.hash,
          blockNumber: toQuantity(log.block),
          blockHash: hashOf(1_000 + log.block),
          logIndex: toQuantity(log.logIndex),
        }));
      return this.logsNewestFirst ? answered.reverse() : answered;
    }
    throw new Error(`unexpected call ${method}`);
  }
}

/** The journal of the service's own transactions: the nonces its transfers hold, and every attempt's hash (`hashes`: more than those). */
function journalOf(own: { nonce: number; hash: string }[], hashes: string[] = []): LaneJournal {
  return {
    unjournaledNonces: async (nonces) => nonces.filter((nonce) => !own.some((transaction) => transaction.nonce === nonce)),
    highestNonce: async () => (own.length === 0 ? undefined : Math.max(...own.map((transaction) => transaction.nonce))),
    lookUpByHash: async (hash) => (own.some((transaction) => transaction.hash === hash) || hashes.includes(hash) ? ({ id: 1 } as JournalEntry) : undefined),
  };
}

/** Where the head of the first check ever is kept (the journal's outflow_watch_starts). */
class StartBlock {
  block: number | undefined;
  read = () => this.block;
  record = (block: number) => {
    this.block ??= block;
  };
}

/** Where the watch's progress is kept (the journal's outflow_watch_starts.progress), as JSON like the journal. */
class KeptProgress {
  kept: string | undefined;
  read = () => (this.kept === undefined ? undefined : (JSON.parse(this.kept) as OutflowWatchProgress));
  record = (progress: OutflowWatchProgress) => {
    this.kept = JSON.stringify(progress);
  };
}

/** What a watch keeps in the journal: a restart passes the same to the new one. */
interface Kept {
  start: StartBlock;
  progress: KeptProgress;
}

const keptAnew = (): Kept => ({ start: new StartBlock(), progress: new KeptProgress() });

/** A watch of the scripted chain's wallet, what it reports, and what it tells of skipped and narrowed log reads. */
function watchOf(chain: ScriptedChain, own: { nonce: number; hash: string }[], hashes: string[] = [], kept = keptAnew()) {
  const reported: UnexpectedOutflow[] = [];
  const unexplained: number[] = [];
  const skipped: number[] = [];
  const narrowed: number[] = [];
  const watch = new OutflowWatch({
    node: chain,
    readHead: chain.headBlock,
    lanes: [{ address: WALLET, journal: journalOf(own, hashes) }],
    tokens: [TOKEN],
    onOutflow: (outflow) => reported.push(outflow),
    onUnexplainedNonce: (_wallet, nonce) => unexplained.push(nonce),
    onOtherTokenLogsSkipped: ({ count }) => skipped.push(count),
    onLogsNarrowed: (block) => narrowed.push(block),
    ...kept,
  });
  return { watch, reported, unexplained, skipped, narrowed };
}

describe("the outflow watch", () => {
  it("reports a nonce no transfer holds with the transaction the chain's blocks name, once; the service's own, never", async () => {
    const chain = new ScriptedChain();
    const own = [0, 1, 2].map((nonce) => ({ nonce, hash: hashOf(nonce + 1) }));
    own.forEach((transaction, index) => chain.transactions.push({ block: 3 + index, ...transaction }));
    const { watch, reported } = watchOf(chain, own);
    await watch.check();
    expect(reported).toEqual([]);

    chain.transactions.push({ block: 11, nonce: 3, hash: hashOf(99) });
    own.push({ nonce: 4, hash: hashOf(5) });
    chain.transactions.push({ block: 12, ...own[3] });
    chain.head = 12;
    await watch.check();
    expect(reported).toEqual([{ wallet: WALLET, hash: hashOf(99), block: { number: 11, hash: hashOf(1_011) }, nonce: 3, token: null, logIndex: null, logKey: null, to: TOKEN, amount: "0", code: null, otherToken: false }]);
    chain.head = 13;
    await watch.check();
    expect(reported).toHaveLength(1);
  });

  it("tells each lane's nonce count at the head of every check (the lane's sequence starts past it), none when the count is no number", async () => {
    const chain = new ScriptedChain();
    chain.transactions.push({ block: 3, nonce: 0, hash: hashOf(1) }, { block: 4, nonce: 1, hash: hashOf(2) });
    chain.head = 5;
    const told: [string, number][] = [];
    const watch = new OutflowWatch({
      node: chain,
      readHead: chain.headBlock,
      lanes: [{ address: WALLET, journal: journalOf([]) }],
      tokens: [TOKEN],
      onOutflow: () => undefined,
      onMinedCount: (wallet, count) => told.push([wallet, count]),
      ...keptAnew(),
    });
    await watch.check();
    chain.head = 6;
    chain.blind.add(6);
    await watch.check().catch(() => undefined);
    expect(told).toEqual([[WALLET, 2]]);
  });

  it("asks again about a nonce the node's answers do not settle (a backend without the block), and reports it once they do", async () => {
    const chain = new ScriptedChain();
    const own = [{ nonce: 0, hash: hashOf(1) }];
    chain.transactions.push({ block: 2, ...own[0] });
    const { watch, reported } = watchOf(chain, own);
    await watch.check();
    chain.transactions.push({ block: 11, nonce: 1, hash: hashOf(77) });
    chain.head = 11;
    chain.blind.add(10);
    await watch.check();
    expect(reported).toEqual([]);
    chain.blind.clear();
    chain.head = 12;
    await watch.check();
    expect(reported.map((outflow) => [outflow.hash, outflow.nonce, outflow.block.number])).toEqual([[hashOf(77), 1, 11]]);
  });

  it("judges no history from before the journal's first transfer", async () => {
    const chain = new ScriptedChain();
    for (let nonce = 0; nonce < 5; nonce++) chain.transactions.push({ block: nonce + 1, nonce, hash: hashOf(200 + nonce) });
    const { watch, reported } = watchOf(chain, []);
    await watch.check();
    chain.head = 11;
    await watch.check();
    expect(reported).toEqual([]);
  });

  it("reports a token transfer out of the wallet by a transaction that is none of the service's, once, though its block is read again", async () => {
    const chain = new ScriptedChain();
    const own = [{ nonce: 0, hash: hashOf(1) }];
    chain.transactions.push({ block: 9, ...own[0] });
    chain.logs.push({ block: 9, hash: hashOf(1), logIndex: 0, to: THIEF, amount: 5n });
    const { watch, reported } = watchOf(chain, own);
    await watch.check();
    expect(reported).toEqual([]);
    // transferFrom by a spender: its transaction, no nonce of the wallet.
    chain.logs.push({ block: 11, hash: hashOf(300), logIndex: 2, to: THIEF, amount: 40n });
    chain.head = 11;
    await watch.check();
    chain.head = 12;
    await watch.check();
    expect(reported).toEqual([{ wallet: WALLET, hash: hashOf(300), block: { number: 11, hash: hashOf(1_011) }, nonce: null, token: TOKEN, logIndex: 2, logKey: `${TOKEN}:${WALLET}:${THIEF}:40#0`.toLowerCase(), to: THIEF, amount: "40", code: null, otherToken: false }]);
  });

  it("reports a token transfer once when a reorganisation mines its transaction in another block at another log index; two in one transaction, both", async () => {
    const chain = new ScriptedChain();
    const { watch, reported } = watchOf(chain, []);
    await watch.check();
    chain.logs.push({ block: 11, hash: hashOf(500), logIndex: 3, to: THIEF, amount: 7n }, { block: 11, hash: hashOf(500), logIndex: 4, to: THIEF, amount: 8n });
    chain.head = 11;
    await watch.check();
    expect(reported.map((outflow) => [outflow.hash, outflow.logIndex, outflow.amount])).toEqual([
      [hashOf(500), 3, "7"],
      [hashOf(500), 4, "8"],
    ]);
    const keys = reported.map((outflow) => outflow.logKey);
    expect(new Set(keys).size).toBe(2);
    // Block 11 is replaced: the same transaction is mined in block 12, after another one, so its logs come
    // later; and this node answers newest first.
    chain.logsNewestFirst = true;
    chain.logs.splice(0, 2, { block: 12, hash: hashOf(501), logIndex: 0, to: THIEF, amount: 1n }, { block: 12, hash: hashOf(500), logIndex: 5, to: THIEF, amount: 7n }, { block: 12, hash: hashOf(500), logIndex: 6, to: THIEF, amount: 8n });
    chain.head = 12;
    await watch.check();
    expect(reported.map((outflow) => [outflow.hash, outflow.logIndex, outflow.amount])).toEqual([
      [hashOf(500), 3, "7"],
      [hashOf(500), 4, "8"],
      [hashOf(501), 0, "1"],
    ]);
  });

  it("reports a Transfer out of the wallet of any contract, a token the network does not name too, each known by what it says; alike ones of one transaction apart", async () => {
    const OTHER = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
    const chain = new ScriptedChain();
    const { watch, reported } = watchOf(chain, []);
    await watch.check();
    // One transaction: a token the service does not pay in first, then its own token twice, alike.
    chain.logs.push(
      { block: 11, hash: hashOf(600), logIndex: 3, to: THIEF, amount: 9n, token: OTHER },
      { block: 11, hash: hashOf(600), logIndex: 5, to: THIEF, amount: 4n },
      { block: 11, hash: hashOf(600), logIndex: 6, to: THIEF, amount: 4n },
    );
    chain.head = 11;
    await watch.check();
    expect(reported.map((outflow) => [outflow.token, outflow.otherToken, outflow.logIndex, outflow.logKey])).toEqual([
      [OTHER, true, 3, `${OTHER}:${WALLET}:${THIEF}:9#0`.toLowerCase()],
      [TOKEN, false, 5, `${TOKEN}:${WALLET}:${THIEF}:4#0`.toLowerCase()],
      [TOKEN, false, 6, `${TOKEN}:${WALLET}:${THIEF}:4#1`.toLowerCase()],
    ]);
  });

  it("reports at most OTHER_TOKEN_REPORTS_PER_CHECK Transfers of contracts the network does not pay in a check, OTHER_TOKEN_REPORTS_PER_CONTRACT of one (a fake token's spam), the network's token's all", async () => {
    const chain = new ScriptedChain();
    const { watch, reported, skipped } = watchOf(chain, []);
    await watch.check();
    // Five fake tokens spam 40 logs each before a real token the file does not name is drained once.
    const fakes = Array.from({ length: 5 }, (_, index) => `0x000000000000000000000000000000000000fa${index}e`);
    for (const [which, fake] of fakes.entries()) for (let index = 0; index < 40; index++) chain.logs.push({ block: 11, hash: hashOf(800 + which * 40 + index), logIndex: which * 40 + index, to: THIEF, amount: 1n, token: fake });
    const REAL_OTHER = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0";
    chain.logs.push({ block: 11, hash: hashOf(1_100), logIndex: 300, to: THIEF, amount: 7n, token: REAL_OTHER }, { block: 11, hash: hashOf(900), logIndex: 301, to: THIEF, amount: 5n });
    chain.head = 11;
    await watch.check();
    expect(reported.filter((outflow) => outflow.otherToken)).toHaveLength(OTHER_TOKEN_REPORTS_PER_CHECK);
    expect(Math.max(...fakes.map((fake) => reported.filter((outflow) => outflow.token === getAddress(fake)).length))).toBe(OTHER_TOKEN_REPORTS_PER_CONTRACT);
    expect(reported.filter((outflow) => !outflow.otherToken).map((outflow) => outflow.hash)).toEqual([hashOf(900)]);
    expect(skipped).toEqual([200 + 1 - OTHER_TOKEN_REPORTS_PER_CHECK]);
  });

  it("reads a range the node refuses for its size in halves, and a single such block for the network's tokens only", async () => {
    const FAKE = "0x000000000000000000000000000000000000fa4e";
    const chain = new ScriptedChain();
    const { watch, reported, narrowed } = watchOf(chain, []);
    await watch.check();
    chain.logs.push({ block: 15, hash: hashOf(950), logIndex: 0, to: THIEF, amount: 1n, token: FAKE }, { block: 15, hash: hashOf(951), logIndex: 1, to: THIEF, amount: 2n }, { block: 18, hash: hashOf(952), logIndex: 0, to: THIEF, amount: 3n });
    // Block 15 holds more logs than this node will return without an address filter.
    const send = chain.send.bind(chain);
    chain.send = async (method, params) => {
      const filter = (params[0] ?? {}) as { fromBlock?: string; toBlock?: string; address?: string[] };
      if (method === "eth_getLogs" && !filter.address && Number(filter.fromBlock) <= 15 && Number(filter.toBlock) >= 15) {
        throw makeError("query failed", "UNKNOWN_ERROR", { error: { code: -32005, message: "query returned more than 10000 results" } });
      }
      return send(method, params);
    };
    chain.head = 20;
    await watch.check();
    expect(narrowed).toEqual([15]);
    // A rate limit is no size: the read fails whole, and is asked again next check (nothing narrowed).
    chain.send = async (method, params) => {
      if (method === "eth_getLogs") throw makeError("query failed", "UNKNOWN_ERROR", { error: { code: -32005, message: "project ID request rate exceeded" } });
      return send(method, params);
    };
    chain.head = 25;
    await expect(watch.check()).rejects.toThrow();
    expect(narrowed).toEqual([15]);
    expect(reported.map((outflow) => outflow.hash).sort()).toEqual([hashOf(951), hashOf(952)]);
  });

  it("finds a log a lagging index shows late, within the blocks it reads again", async () => {
    const chain = new ScriptedChain();
    const { watch, reported } = watchOf(chain, []);
    await watch.check();
    chain.head = 12;
    await watch.check();
    // The index had not shown block 12's log at the last check.
    chain.logs.push({ block: 12, hash: hashOf(400), logIndex: 0, to: THIEF, amount: 1n });
    chain.head = 13;
    await watch.check();
    expect(reported.map((outflow) => outflow.hash)).toEqual([hashOf(400)]);
  });

  it("does not report the service's own transaction at a nonce its transfer no longer holds (signed again at another)", async () => {
    const chain = new ScriptedChain();
    const own = [{ nonce: 0, hash: hashOf(1) }];
    chain.transactions.push({ block: 2, ...own[0] });
    const { watch, reported } = watchOf(chain, own, [hashOf(50)]);
    await watch.check();
    // The first attempt at nonce 1 was mined after all; its transfer now holds nonce 2.
    chain.transactions.push({ block: 11, nonce: 1, hash: hashOf(50) });
    chain.head = 11;
    await watch.check();
    expect(reported).toEqual([]);
  });

  it("tells a transaction of a transfer answered 417 (rejected) that the chain shows mined as an incident, once, at its nonce, its log, or a displacement", async () => {
    const chain = new ScriptedChain();
    const own = [{ nonce: 0, hash: hashOf(1) }];
    chain.transactions.push({ block: 2, ...own[0] });
    const rejected = { id: 7, state: "rejected" } as JournalEntry;
    const incidents: { entryId: number; hash: string; block: number }[] = [];
    const reported: UnexpectedOutflow[] = [];
    const journal = journalOf(own);
    const watch = new OutflowWatch({
      node: chain,
      readHead: chain.headBlock,
      lanes: [{ address: WALLET, journal: { ...journal, lookUpByHash: async (hash) => (hash === hashOf(60) ? rejected : journal.lookUpByHash(hash)) } }],
      tokens: [TOKEN],
      onOutflow: (outflow) => reported.push(outflow),
      onRefusedMined: (entry, hash, block) => incidents.push({ entryId: entry.id, hash, block: block.number }),
      ...keptAnew(),
    });
    await watch.check();
    // Its nonce was given back after the 417; nothing took it again, and the chain shows the refused bytes mined there.
    chain.transactions.push({ block: 11, nonce: 1, hash: hashOf(60) });
    chain.logs.push({ block: 11, hash: hashOf(60), logIndex: 0, to: THIEF, amount: 5n });
    chain.head = 11;
    await watch.check();
    await watch.reportDisplacement(WALLET, 1, hashOf(60), { number: 11, hash: hashOf(1_011) });
    chain.head = 12;
    await watch.check();
    expect(incidents).toEqual([{ entryId: 7, hash: hashOf(60), block: 11 }]);
    expect(reported).toEqual([]);
  });

  it("reads the logs when the nonce reads fail, and catches up after a long gap, 1,024 blocks a check, without losing a block", async () => {
    const chain = new ScriptedChain();
    const { watch, reported } = watchOf(chain, []);
    await watch.check();
    chain.countsFail = true;
    chain.head = 2_000;
    chain.logs.push({ block: 150, hash: hashOf(500), logIndex: 0, to: THIEF, amount: 2n }, { block: 1_990, hash: hashOf(501), logIndex: 0, to: THIEF, amount: 3n });
    // The nonce reads fail at every check; the logs are read all the same, eight reads of 128 blocks a check.
    await expect(watch.check()).rejects.toThrow(/missing trie node/);
    expect(reported.map((outflow) => outflow.hash)).toEqual([hashOf(500)]);
    for (let head = 2_001; head < 2_003; head++) {
      chain.head = head;
      await expect(watch.check()).rejects.toThrow(/missing trie node/);
    }
    expect(reported.map((outflow) => [outflow.hash, outflow.amount])).toEqual([
      [hashOf(500), "2"],
      [hashOf(501), "3"],
    ]);
  });

  it("judges no token transfer from before its first check ever (the lanes' funding, the key's use before the service); after a restart, the blocks since it", async () => {
    const chain = new ScriptedChain();
    const kept = keptAnew();
    chain.logs.push({ block: 5, hash: hashOf(700), logIndex: 0, to: THIEF, amount: 9n }, { block: 10, hash: hashOf(701), logIndex: 0, to: THIEF, amount: 9n });
    const first = watchOf(chain, [], [], kept);
    await first.watch.check();
    expect(kept.start.block).toBe(10);
    chain.head = 12;
    await first.watch.check();
    expect(first.reported).toEqual([]);
    // Restarted later: what came after the first check is judged, what came before it still is not.
    chain.logs.push({ block: 15, hash: hashOf(702), logIndex: 3, to: THIEF, amount: 1n });
    chain.head = 20;
    const restarted = watchOf(chain, [], [], kept);
    await restarted.watch.check();
    expect(restarted.reported.map((outflow) => [outflow.hash, outflow.logIndex])).toEqual([[hashOf(702), 3]]);
    expect(kept.start.block).toBe(10);
  });

  it("goes on after a restart from where the journal says it got to, however long ago: every block's logs since, and a nonce below the journal's highest it had not checked", async () => {
    const chain = new ScriptedChain();
    const own = [0, 1].map((nonce) => ({ nonce, hash: hashOf(nonce + 1) }));
    own.forEach((transaction, index) => chain.transactions.push({ block: 2 + index, ...transaction }));
    const kept = keptAnew();
    const first = watchOf(chain, own, [], kept);
    await first.watch.check();
    // While the service is down: the thief uses nonce 2, the service had signed nonce 3 just before it
    // stopped (so its journal's highest is 3), and the thief moves tokens out 200 blocks before the restart.
    chain.transactions.push({ block: 11, nonce: 2, hash: hashOf(88) });
    own.push({ nonce: 3, hash: hashOf(4) });
    chain.transactions.push({ block: 12, ...own[2] });
    chain.logs.push({ block: 100, hash: hashOf(89), logIndex: 0, to: THIEF, amount: 6n });
    chain.head = 300;
    const restarted = watchOf(chain, own, [], kept);
    // The nonce's user is found in the block bodies, a few of them a check.
    for (let checks = 0; checks < 40 && restarted.reported.length < 2; checks++) {
      await restarted.watch.check();
      chain.head++;
    }
    expect(restarted.reported.map((outflow) => [outflow.hash, outflow.nonce, outflow.block.number]).sort()).toEqual([
      [hashOf(88), 2, 11],
      [hashOf(89), null, 100],
    ]);
    expect(kept.progress.read()).toEqual({ logsReadTo: chain.head - 1, noncesCheckedBelow: { [WALLET]: 4 } });
  });

  it("reports code at the wallet (an EIP-7702 delegation) once, read when the wallet's count moved; while the count stays put, no code is read", async () => {
    const chain = new ScriptedChain();
    const { watch, reported } = watchOf(chain, []);
    await watch.check();
    expect(chain.codeReads).toBe(1);
    chain.head = 11;
    await watch.check();
    expect([chain.codeReads, reported]).toEqual([1, []]);
    // The delegation uses a nonce of the wallet in another account's transaction.
    const delegated = `0xef0100${THIEF.slice(2).toLowerCase()}`;
    chain.delegations.push(12);
    chain.code = { from: 12, code: delegated };
    chain.head = 12;
    await watch.check();
    expect(reported.filter((outflow) => outflow.code !== null)).toEqual([
      {
        wallet: WALLET,
        hash: keccak256(concat([WALLET, delegated])),
        block: { number: 12, hash: hashOf(1_012) },
        nonce: null,
        token: null,
        logIndex: null,
        logKey: `code:${WALLET.toLowerCase()}:${delegated}`,
        to: null,
        amount: null,
        code: delegated,
        otherToken: false,
      },
    ]);
    chain.head = 13;
    await watch.check();
    expect([chain.codeReads, reported.filter((outflow) => outflow.code !== null).length]).toEqual([2, 1]);
  });

  it("does not report a Transfer of 0 out of the wallet: anyone can make one (address poisoning), it moved nothing", async () => {
    const chain = new ScriptedChain();
    const { watch, reported } = watchOf(chain, []);
    await watch.check();
    chain.logs.push(
      { block: 11, hash: hashOf(600), logIndex: 0, to: THIEF, amount: 0n },
      { block: 11, hash: hashOf(601), logIndex: 1, to: THIEF, amount: 0n, data: "0x" },
      { block: 11, hash: hashOf(602), logIndex: 2, to: THIEF, amount: 1n },
    );
    chain.head = 11;
    await watch.check();
    expect(reported.map((outflow) => [outflow.hash, outflow.logIndex, outflow.amount])).toEqual([[hashOf(602), 2, "1"]]);
  });
});
