/**
 * Spends nobody asked for. Every nonce the chain counts for a lane of the service's wallet, and every token
 * Transfer log out of it, must be one of the service's own journaled transactions; anything else (the key
 * used by another system, a compromised key, a spender the wallet once approved) is reported with the
 * transaction that did it.
 *
 * Each check takes the head (the block the lanes' pollers read, when recent enough: no call of its own), and
 * when it moved, reads each lane's nonce count at that head, the lane's code when its count moved, and the
 * Transfer logs out of the lanes of every contract (not only the tokens the service pays in: an ERC-20 the
 * wallet holds and the file does not name leaves the same way) since the last check. Any contract can emit
 * a Transfer "from" the wallet (fake tokens of address poisoning do, with no key): one of a contract the
 * network does not pay in is reported (`otherToken`), never a reason to pause signing, and at most
 * OTHER_TOKEN_REPORTS_PER_CHECK of them a check, OTHER_TOKEN_REPORTS_PER_CONTRACT of one contract. Facts only: a nonce no
 * transfer holds is reported once the chain's blocks name the transaction that used it (findNonceUse), a
 * log is reported for its own transaction hash, which no attempt has, and code is reported as read. Nothing
 * is concluded from an absence: a log index that lags is read again over the last LOG_OVERLAP_BLOCKS blocks at
 * the next check, and a nonce the node's answers do not settle is asked about again at the next one.
 *
 * Where the watch got to (the last block whose logs it read, each lane's first nonce unchecked) is kept in
 * the journal, so that a restart or a new leader goes on from there, however long it was away: nothing
 * between is left unjudged.
 */
import { concat, getAddress, keccak256, toQuantity, zeroPadValue } from "ethers";
import type { JournalEntry, OutflowWatchProgress as WatchProgress } from "../journal/transfer-journal.js";
import { hexQuantity } from "../node/call-blocks.js";
import { TRANSFER_TOPIC } from "../node/erc20.js";
import { nodeWordsOf } from "../node/node-answers.js";
import { type BlockRef, NonceSearches, type NonceUseNode, findNonceUse } from "../node/wallet-nonce-use.js";

/** A transaction or token transfer out of a wallet of the service that it never signed. */
export interface UnexpectedOutflow {
  /** The lane (wallet) it left. */
  wallet: string;
  /** The transaction, lowercase. */
  hash: string;
  block: BlockRef;
  /** A transaction of the wallet: the nonce it used; null for a token transfer another account's transaction made (transferFrom). */
  nonce: number | null;
  /** A token Transfer log: the token; null for the transaction itself. */
  token: string | null;
  /** A token Transfer log: its index in the block (a transaction can move tokens out several times); null for the transaction itself. */
  logIndex: number | null;
  /**
   * A token Transfer log: what it says (token, from, to, amount) and how many alike its transaction made
   * before it, which stay the same when a reorganisation mines the transaction in another block (its log
   * index moves), whatever tokens and lanes the watch reads; null for the transaction itself.
   */
  logKey: string | null;
  /** Where it went: the log's recipient, or the transaction's `to` (null when the node did not return it). */
  to: string | null;
  /** Base units of the token, or the transaction's value in wei; null when the node did not return it. */
  amount: string | null;
  /**
   * Code found at the wallet (an EIP-7702 delegation: 0xef0100 and the delegate), which lets the account move
   * funds with no nonce of its own and no log; `hash` is then the keccak-256 of the wallet's address and the
   * code, and `block` the head it was read at. Null for a transaction or a log.
   */
  code: string | null;
  /** A Transfer log of a contract the network does not pay in: reported, not a reason to pause (any contract can emit one). */
  otherToken: boolean;
}


/** What the watch asks the journal of a lane (on the watch's network). */
export interface LaneJournal {
  unjournaledNonces(nonces: readonly number[]): Promise<number[]>;
  highestNonce(): Promise<number | undefined>;
  lookUpByHash(hash: string): Promise<JournalEntry | undefined>;
}

export interface OutflowWatchOptions {
  /** The node calls it makes: those of findNonceUse, and the count, log and transaction reads. */
  node: NonceUseNode;
  /** The latest block. */
  readHead: () => Promise<BlockRef>;
  lanes: readonly { address: string; journal: LaneJournal }[];
  /** The ERC-20 tokens the network pays in: their Transfers out of a lane pause signing (PAUSE_ON_UNEXPECTED_OUTFLOW); other contracts' do not. */
  tokens: readonly string[];
  /** Told of the Transfer logs of other contracts a check held beyond its bounds (not reported one by one): how many, and of which contracts and transactions (a few). */
  onOtherTokenLogsSkipped?: (skipped: { count: number; contracts: string[]; hashes: string[] }, blocks: { from: number; to: number }) => void;
  /** Told of a block whose every contract's logs the node would not return (too many): only the network's tokens' were read there. */
  onLogsNarrowed?: (block: number, error: unknown) => void;
  onOutflow: (outflow: UnexpectedOutflow) => void;
  /** Told each lane's nonce count at the head of every check (a fact: the lane's sequence starts past it). */
  onMinedCount?: (wallet: string, count: number) => void;
  /**
   * Told of a transaction of the service's own that the chain shows mined although its transfer was answered
   * 417 (rejected: its broadcast was refused in words that said it was not taken): an incident, whatever the
   * words were; the entry is to become what the chain shows.
   */
  onRefusedMined?: (entry: JournalEntry, hash: string, block: BlockRef) => void;
  /**
   * Told of a nonce the chain counts used whose user no block body where it could be holds (an EIP-7702
   * authorization it cannot read, a search past its bound): reported, and the watch moves on past it.
   */
  onUnexplainedNonce?: (wallet: string, nonce: number, searched: { from: number; to: number }) => void;
  /** Where the head of the watch's first check on this network is kept (the journal): logs before it are not judged. */
  start: { read(): number | undefined; record(block: number): void };
  /** Where the watch's progress is kept (the journal): a restart or a new leader goes on from it. */
  progress: { read(): WatchProgress | undefined; record(progress: WatchProgress): void };
}

/** A check reads the logs of the blocks it read last time again: a log index may lag the head by a few blocks. */
export const LOG_OVERLAP_BLOCKS = 8;
/** The first check ever looks this far back for logs, and one read of logs covers at most this many blocks. */
export const LOG_LOOKBACK_BLOCKS = 128;
/**
 * Reads of logs one check makes when it is behind (after an outage or a restart): 1,024 blocks a check, more
 * than a chain of four blocks a second makes between two checks, so the watch catches up.
 */
const LOG_READS_PER_CHECK = 8;
/** Transfer logs of contracts the network does not pay in that one check reports: a fake token can emit thousands. */
export const OTHER_TOKEN_REPORTS_PER_CHECK = 16;
/** Of one such contract: one spamming contract leaves room for the others' (a real token the file does not name). */
export const OTHER_TOKEN_REPORTS_PER_CONTRACT = 4;
/** Contracts and transactions named in the warning of what a check skipped. */
const SKIPPED_NAMED = 5;
/** Nonces no transfer holds that one check looks up in the chain's blocks (each is a few count reads); the rest wait for the next check. */
const NONCE_LOOKUPS_PER_CHECK = 8;
/** Nonces one check asks the journal about; a wallet used far more often elsewhere is caught up over several checks. */
const NONCES_PER_CHECK = 1_024;
/** Outflows remembered as reported, so that a log read again is not reported twice; the oldest forgotten first. */
const REMEMBERED = 4_096;

export class OutflowWatch {
  readonly #options: OutflowWatchOptions;
  // The head of the last nonce check, and the last block whose logs were read.
  #checkedBlock: number | undefined;
  #logsReadTo: number | undefined;
  // The first block whose logs are judged: after the head of the first check ever made on this network.
  #judgedFrom: number | undefined;
  // Per lane: every nonce below this was checked.
  readonly #checkedNonces = new Map<string, number>();
  // Per lane: the nonce count at the last check whose code read answered (code comes only with a nonce's use).
  readonly #countAtCodeRead = new Map<string, number>();
  // The progress as last kept in the journal (JSON), so that a check that moved nothing writes nothing.
  #keptProgress: string | undefined;
  // This check's reports of other contracts' Transfers, in all and per contract (see OTHER_TOKEN_REPORTS_PER_CHECK).
  #otherReports = { total: 0, byContract: new Map<string, number>() };
  readonly #reported = new Set<string>();
  // Per lane: its searches for what used a nonce (a long one resumes at the next check), hinted by the counts read.
  readonly #nonceSearches = new Map<string, NonceSearches>();

  constructor(options: OutflowWatchOptions) {
    this.#options = options;
    const kept = options.progress.read();
    if (kept) {
      this.#logsReadTo = kept.logsReadTo;
      for (const [lane, below] of Object.entries(kept.noncesCheckedBelow)) this.#checkedNonces.set(lane, below);
      this.#keptProgress = JSON.stringify(kept);
    }
  }

  /**
   * Checks the blocks since the last check: the nonces and the logs each on their own, so that a fault in
   * one leaves the other checked. Throws the first node fault once both ran (what failed is checked again next time).
   */
  async check(): Promise<void> {
    const { node, lanes, readHead } = this.#options;
    const headBlock = await readHead();
    const head = headBlock.number;
    if (this.#checkedBlock !== undefined && head <= this.#checkedBlock) return;
    const faults: unknown[] = [];
    try {
      // A count that is no quantity (a backend without the block answers null) settles nothing: NaN.
      const counts = await Promise.all(lanes.map(async (lane) => quantityOrNaN(await node.send("eth_getTransactionCount", [lane.address, toQuantity(head)]))));
      for (const [index, lane] of lanes.entries()) {
        if (Number.isInteger(counts[index])) {
          this.#options.onMinedCount?.(lane.address, counts[index]);
          this.#searchesOf(lane.address).noteCount(head, counts[index]);
        }
        await this.#checkCode(lane.address, counts[index], headBlock).catch((error: unknown) => faults.push(error));
        await this.#checkNonces(lane, counts[index], head).catch((error: unknown) => faults.push(error));
      }
    } catch (error) {
      faults.push(error);
    }
    await this.#checkLogs(head).catch((error: unknown) => faults.push(error));
    this.#checkedBlock = head;
    this.#keepProgress();
    if (faults.length > 0) throw faults[0];
  }

  /**
   * The lane's code at the head, read at the first check and whenever its nonce count moved since: an
   * account gets code only with a use of its nonce (each EIP-7702 authorization applied, a delegation or its
   * removal, counts one), so a count that stayed put proves the code did too, and an idle wallet costs no read.
   */
  async #checkCode(wallet: string, count: number, head: BlockRef): Promise<void> {
    if (!Number.isInteger(count) || this.#countAtCodeRead.get(wallet) === count) return;
    const code = (await this.#options.node.send("eth_getCode", [wallet, toQuantity(head.number)])) as unknown;
    // An answer that is no code (a backend without the block answers null) settles nothing: read again next time.
    if (typeof code !== "string" || !/^0x([0-9a-fA-F]{2})*$/.test(code)) return;
    this.#countAtCodeRead.set(wallet, count);
    if (code === "0x") return;
    // One report per wallet and code: two wallets delegated to one delegate have the same code.
    const hash = keccak256(concat([wallet, code]));
    this.#report({ wallet, hash, block: head, nonce: null, token: null, logIndex: null, logKey: `code:${wallet.toLowerCase()}:${code.toLowerCase()}`, to: null, amount: null, code, otherToken: false }, `${wallet}:code:${hash}`);
  }

  // Keeps where the watch got to in the journal when that moved (every outflow found before it is journaled already).
  #keepProgress(): void {
    if (this.#logsReadTo === undefined) return;
    const progress: WatchProgress = { logsReadTo: this.#logsReadTo, noncesCheckedBelow: Object.fromEntries(this.#checkedNonces) };
    const text = JSON.stringify(progress);
    if (text === this.#keptProgress) return;
    this.#options.progress.record(progress);
    this.#keptProgress = text;
  }

  /**
   * A transaction of the wallet at a nonce one of the service's transfers holds, which is not one of that
   * transfer's attempts (the reconciler found it displacing the transfer): reported unless another of the
   * service's transfers sent it.
   */
  async reportDisplacement(wallet: string, nonce: number, by: string, block: BlockRef): Promise<void> {
    const lane = this.#options.lanes.find((candidate) => candidate.address === wallet);
    // Found again at every round while the transfer waits to be signed again: asked about once.
    if (!lane || this.#reported.has(`${by}:tx`)) return;
    const own = await lane.journal.lookUpByHash(by);
    if (own) return this.#ownMined(own, by, block);
    this.#report({ wallet, hash: by, block, nonce, token: null, logIndex: null, logKey: null, code: null, otherToken: false, ...(await this.#whereTo(by)) }, `${by}:tx`);
  }

  async #checkNonces(lane: { address: string; journal: LaneJournal }, count: number, head: number): Promise<void> {
    if (!Number.isInteger(count)) return;
    // From the first nonce after the journal's last: history before the service's first transfer is not its to judge.
    const from = this.#checkedNonces.get(lane.address) ?? ((await lane.journal.highestNonce()) ?? count - 1) + 1;
    if (count <= from) {
      this.#checkedNonces.set(lane.address, Math.max(from, count));
      return;
    }
    const upTo = Math.min(count, from + NONCES_PER_CHECK);
    const counted = Array.from({ length: upTo - from }, (_, index) => from + index);
    const foreign = await lane.journal.unjournaledNonces(counted);
    let checkedBelow = upTo;
    for (const [looked, nonce] of foreign.entries()) {
      if (looked >= NONCE_LOOKUPS_PER_CHECK) {
        checkedBelow = nonce;
        break;
      }
      // Where the nonce was last seen unused is the counts' to say (each check notes the count at its head):
      // a nonce left for a later check was used before that check's head, not after it.
      const use = await findNonceUse(this.#options.node, lane.address, nonce, head, 0, this.#searchesOf(lane.address));
      if (use?.kind === "unfindable") {
        this.#options.onUnexplainedNonce?.(lane.address, nonce, use.searched);
        continue;
      }
      if (use?.kind !== "used") {
        // Not settled by the node's answers (or counted, then not: a reorganisation): asked again next time.
        checkedBelow = nonce;
        break;
      }
      // The nonce's own transfer may have moved to another nonce since; its hash is still the service's.
      const own = await lane.journal.lookUpByHash(use.by);
      if (own) {
        this.#ownMined(own, use.by, use.block);
        continue;
      }
      this.#report({ wallet: lane.address, hash: use.by, block: use.block, nonce, token: null, logIndex: null, logKey: null, code: null, otherToken: false, ...(await this.#whereTo(use.by)) }, `${use.by}:tx`);
    }
    this.#checkedNonces.set(lane.address, checkedBelow);
  }

  async #checkLogs(head: number): Promise<void> {
    const { lanes } = this.#options;
    if (lanes.length === 0) return;
    // What happened before the watch first looked (the lanes' funding, the key's use before the service) is
    // not the service's to judge; after a restart, the blocks since are, from where the journal says the
    // watch got to.
    if (this.#judgedFrom === undefined) {
      const start = this.#options.start.read();
      if (start === undefined) this.#options.start.record(head);
      this.#judgedFrom = (start ?? head) + 1;
    }
    // Where the last read ended (a few blocks before, for a lagging index); the first ever goes
    // LOG_LOOKBACK_BLOCKS back. Behind, a check reads several windows, each kept as it is judged.
    this.#otherReports = { total: 0, byContract: new Map() };
    for (let read = 0; read < LOG_READS_PER_CHECK; read++) {
      const from = Math.max(
        this.#judgedFrom,
        this.#logsReadTo === undefined ? Math.max(0, head - LOG_LOOKBACK_BLOCKS + 1) : Math.max(0, this.#logsReadTo + 1 - LOG_OVERLAP_BLOCKS),
      );
      const to = Math.min(head, from + LOG_LOOKBACK_BLOCKS - 1);
      if (from > to) {
        this.#logsReadTo = Math.max(this.#logsReadTo ?? head, head);
        return;
      }
      await this.#judgeLogs(from, to);
      this.#logsReadTo = to;
      if (to >= head) return;
      this.#keepProgress();
    }
  }

  // Every contract's Transfer logs out of a lane in (from, to]: no address filter. A range the node will not
  // answer for its size is read in halves; a single block so refused, for the network's tokens only.
  async #readLogs(from: number, to: number, tokensOnly = false): Promise<RpcLog[]> {
    const { node, lanes, tokens } = this.#options;
    const filter = { fromBlock: toQuantity(from), toBlock: toQuantity(to), topics: [TRANSFER_TOPIC, lanes.map((lane) => zeroPadValue(lane.address, 32))] };
    try {
      return (await node.send("eth_getLogs", [tokensOnly ? { ...filter, address: [...tokens] } : filter])) as RpcLog[];
    } catch (error) {
      if (tokensOnly || !tooManyLogs(error)) throw error;
      if (from === to) {
        this.#options.onLogsNarrowed?.(from, error);
        return tokens.length === 0 ? [] : this.#readLogs(from, to, true);
      }
      const middle = Math.floor((from + to) / 2);
      return [...(await this.#readLogs(from, middle)), ...(await this.#readLogs(middle + 1, to))];
    }
  }

  async #judgeLogs(from: number, to: number): Promise<void> {
    const { lanes } = this.#options;
    const logs = await this.#readLogs(from, to);
    const tokens = new Set(this.#options.tokens.map((token) => token.toLowerCase()));
    const skipped = { count: 0, contracts: new Set<string>(), hashes: new Set<string>() };
    const journal = lanes[0].journal;
    // In the chain's order, whatever order the node answers in: it tells which of a transaction's like Transfers is which.
    const inChainOrder = logs.filter((log) => !log.removed).sort((a, b) => Number(a.blockNumber) - Number(b.blockNumber) || Number(a.logIndex) - Number(b.logIndex));
    const alikeBefore = new Map<string, number>();
    for (const log of inChainOrder) {
      // An ERC-20 Transfer has the two addresses as topics (an ERC-721's has the token id too). One of 0
      // moved nothing: most tokens let anyone "transferFrom" 0 of any wallet (address-poisoning bots do),
      // so it proves nothing about the key, and must not page anyone or pause signing.
      if (log.topics.length !== 3 || log.data === "0x" || BigInt(log.data) === 0n) continue;
      const hash = log.transactionHash.toLowerCase();
      const transfer = { token: getAddress(log.address), wallet: getAddress(`0x${log.topics[1].slice(26)}`), to: getAddress(`0x${log.topics[2].slice(26)}`), amount: BigInt(log.data).toString() };
      // Known by what it says, not by its index in the block: a reorganisation that mines the transaction in
      // another block moves that, and the outflow is the same one (the journal keeps this key, for a restart
      // or a new leader).
      const said = `${transfer.token}:${transfer.wallet}:${transfer.to}:${transfer.amount}`.toLowerCase();
      const alike = alikeBefore.get(`${hash}:${said}`) ?? 0;
      alikeBefore.set(`${hash}:${said}`, alike + 1);
      const logKey = `${said}#${alike}`;
      const key = `${hash}:${logKey}`;
      if (this.#reported.has(key)) continue;
      const block = { number: Number(log.blockNumber), hash: log.blockHash };
      // Bounded before any lookup: a fake token's thousands of logs cost no journal read each.
      const otherToken = !tokens.has(log.address.toLowerCase());
      if (otherToken && !this.#roomForOther(transfer.token)) {
        skipped.count++;
        if (skipped.contracts.size < SKIPPED_NAMED) skipped.contracts.add(transfer.token);
        if (skipped.hashes.size < SKIPPED_NAMED) skipped.hashes.add(hash);
        continue;
      }
      const own = await journal.lookUpByHash(hash);
      if (own) {
        this.#ownMined(own, hash, block);
        continue;
      }
      if (otherToken) this.#countOther(transfer.token);
      this.#report({ ...transfer, hash, block, nonce: null, logIndex: Number(log.logIndex), logKey, code: null, otherToken }, key);
    }
    if (skipped.count > 0) this.#options.onOtherTokenLogsSkipped?.({ count: skipped.count, contracts: [...skipped.contracts], hashes: [...skipped.hashes] }, { from, to });
  }

  #roomForOther(contract: string): boolean {
    const { total, byContract } = this.#otherReports;
    return total < OTHER_TOKEN_REPORTS_PER_CHECK && (byContract.get(contract) ?? 0) < OTHER_TOKEN_REPORTS_PER_CONTRACT;
  }

  #countOther(contract: string): void {
    this.#otherReports.total++;
    this.#otherReports.byContract.set(contract, (this.#otherReports.byContract.get(contract) ?? 0) + 1);
  }

  #searchesOf(wallet: string): NonceSearches {
    let searches = this.#nonceSearches.get(wallet);
    if (!searches) this.#nonceSearches.set(wallet, (searches = new NonceSearches()));
    return searches;
  }

  // One of the service's own transactions, mined: an incident when its transfer was answered 417 (told once).
  #ownMined(entry: JournalEntry, hash: string, block: BlockRef): void {
    if (entry.state !== "rejected" || this.#reported.has(`${hash}:refused`)) return;
    this.#remember(`${hash}:refused`);
    this.#options.onRefusedMined?.(entry, hash, block);
  }

  // Where a transaction of the wallet went, as far as the node tells now (its index may lag: then unknown).
  async #whereTo(hash: string): Promise<{ to: string | null; amount: string | null }> {
    const transaction = (await this.#options.node.send("eth_getTransactionByHash", [hash]).catch(() => null)) as { to: string | null; value: string } | null;
    return transaction ? { to: transaction.to && getAddress(transaction.to), amount: BigInt(transaction.value).toString() } : { to: null, amount: null };
  }

  #report(outflow: UnexpectedOutflow, key: string): void {
    if (this.#reported.has(key)) return;
    this.#remember(key);
    this.#options.onOutflow(outflow);
  }

  #remember(key: string): void {
    this.#reported.add(key);
    if (this.#reported.size > REMEMBERED) this.#reported.delete(this.#reported.values().next().value as string);
  }
}

interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  transactionHash: string;
  blockNumber: string;
  blockHash: string;
  logIndex: string;
  removed?: boolean;
}

// Whether the node refused a log read for the size of its answer (providers cap results and block ranges), in
// its words: a hint, for how to read again. Words about the answer's size only (Infura gives -32005, its
// rate limit's code, to "query returned more than 10000 results"): a rate limit is asked again whole next check.
function tooManyLogs(error: unknown): boolean {
  const words = nodeWordsOf(error)?.message ?? "";
  return /more than \d+ (results|logs)|too many (results|logs)|response size|result(s| set)? (is )?too large|block range|range (is )?too (large|wide)|(results|logs) limit/i.test(words);
}

function quantityOrNaN(value: unknown): number {
  const quantity = hexQuantity(value);
  return quantity === undefined ? Number.NaN : Number(quantity);
}
