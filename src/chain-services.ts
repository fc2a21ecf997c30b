/**
 * Assembles what the routes use on the chain side: for the hot wallet the journal, the ledger kept fresh
 * by a snapshot poller, startup reconciliation, the transfer service and the background resend of lost
 * sends; for everyone the chain head tracker and the cached transaction lookup.
 */
import { parseUnits } from "ethers";
import type { FastifyBaseLogger } from "fastify";
import { monotonicNow, steadyWallClockNow } from "./clock.js";
import type { Config } from "./config.js";
import { FinalityTracker, defaultFinalityBlocks } from "./finality/finality-tracker.js";
import { ChainHeadTracker, readLatestBlock } from "./lookup/chain-head.js";
import type { ChainConnection } from "./node/connect-chain.js";
import { SnapshotPoller } from "./sending/snapshot-poller.js";
import { TransactionLookup } from "./lookup/transaction-lookup.js";
import { TransactionStatusReader } from "./lookup/transaction-status.js";
import { type FeePolicy, offeredFees } from "./sending/fee-policy.js";
import { type FeeBlock, readFeeBlock, readWalletSnapshot } from "./sending/wallet-snapshot.js";
import { type JournalOwner, openSqliteJournal } from "./journal/sqlite-transfer-journal.js";
import type { JournalEntry, TransferJournal } from "./journal/transfer-journal.js";
import { NonceAllocator } from "./sending/nonce-allocator.js";
import { TransferReconciler, resendUnanswered } from "./sending/transfer-reconciler.js";
import { TokenTransferService } from "./sending/transfer-service.js";
import { verifyUsedNonces } from "./sending/used-nonce-verifier.js";
import { findNonceHole } from "./sending/nonce-hole.js";
import { WalletTransferLogs } from "./node/wallet-transfer-logs.js";
import { type FaultPoint, TransferSubmitter } from "./sending/transfer-submitter.js";
import { TransferReplacer } from "./sending/transfer-replacer.js";
import { WalletLedger } from "./sending/wallet-ledger.js";
import { feesAsText } from "./sending/wallet-transaction.js";
import { createWebhooks } from "./webhooks/create-webhooks.js";
import type { DeliveryOutcome, WebhookDispatcher } from "./webhooks/webhook-dispatcher.js";
import type { TransferWatcher } from "./webhooks/transfer-watcher.js";
import { parseWebhookUrls } from "./domain/webhook-settings.js";

/** How often, at most, lost broadcasts are looked for, and keys past their lifetime forgotten. */
const MAINTENANCE_INTERVAL_MS = 5_000;
/**
 * With nothing in flight the latest block is read this often, and nothing else: an idle service costs a
 * hosted node 0.2 calls a second (CHAIN_REFRESH_INTERVAL_MS is the pace while transfers are in flight).
 */
const IDLE_POLL_INTERVAL_MS = 5_000;


export interface ChainServices {
  transfers: TokenTransferService;
  submitter: TransferSubmitter;
  nonces: NonceAllocator;
  ledger: WalletLedger;
  journal: TransferJournal;
  head: ChainHeadTracker;
  lookup: TransactionLookup;
  statuses: TransactionStatusReader;
  replacer: TransferReplacer;
  /** Present when WEBHOOK_URL is set. */
  webhooks: { watcher: TransferWatcher; dispatcher: WebhookDispatcher } | undefined;
  /** Resolves once the wallet snapshot is at most `maxAgeMs` old, reading one if needed. */
  ensureSnapshot(maxAgeMs: number): Promise<void>;
  /** Stops background work, waits for it, and closes the journal. Call after the HTTP server closed. */
  close(): Promise<void>;
}

export type ChainServicesConfig = Pick<
  Config,
  | "journalPath"
  | "journalSynchronous"
  | "idempotencyKeyTtlHours"
  | "chainRefreshIntervalMs"
  | "rebroadcastAfterMs"
  | "headMaxAgeMs"
  | "transactionCacheSize"
  | "testFaultPoint"
  | "feeTipPercentile"
  | "minPriorityFeePerGas"
  | "maxFeePerGas"
  | "maxPriorityFeePerGas"
  | "gasLimitMultiplier"
  | "stuckAfterBlocks"
  | "finalityBlocks"
  | "webhookUrl"
  | "webhookSecret"
  | "webhookConfirmations"
  | "webhookRetryInitialMs"
>;

/** The fee policy the configuration describes (gwei values in wei). */
function feePolicyOf(config: ChainServicesConfig): FeePolicy {
  const gwei = (value: string | undefined) => (value === undefined ? undefined : parseUnits(value, "gwei"));
  return {
    tipPercentile: config.feeTipPercentile,
    minTip: parseUnits(config.minPriorityFeePerGas, "gwei"),
    maxFeePerGas: gwei(config.maxFeePerGas),
    maxTip: gwei(config.maxPriorityFeePerGas),
  };
}

/** Opens the journal of this wallet; `notify`: webhooks report on the transfers made from now on. */
export type JournalOpener = (owner: JournalOwner, options: { notify: boolean }) => TransferJournal | Promise<TransferJournal>;

/** Opens the journal, reads the wallet, reconciles unfinished transfers, and starts background work. */
export async function startChainServices(
  config: ChainServicesConfig,
  chain: ChainConnection,
  log: FastifyBaseLogger,
  observeDelivery?: (outcome: DeliveryOutcome) => void,
  openJournal: JournalOpener = (owner, { notify }) => openSqliteJournal(config.journalPath, owner, { synchronous: config.journalSynchronous, notify }),
): Promise<ChainServices> {
  const endpoints = config.webhookUrl ? parseWebhookUrls(config.webhookUrl) : [];
  const journal = await openJournal(
    { chainId: chain.chainId, walletAddress: chain.wallet.address, tokenAddress: chain.tokenAddress },
    { notify: endpoints.length > 0 },
  );
  try {
    const fees = feePolicyOf(config);
    const initialSnapshot = await readWalletSnapshot(chain, fees);
    const ledger = new WalletLedger(initialSnapshot);
    const reconciler = new TransferReconciler(chain, journal, ledger);
    const summary = await reconciler.reconcileAtStartup();
    log.info({ ...summary }, "journal reconciled with the chain");

    const { provider, wallet } = chain;
    // Never below a nonce the journal held for an unfinished transfer at startup: a node may not have it
    // (yet), and a replica taking over from a leader that died between journaling and broadcasting must
    // not reuse it. (Read once: such a transfer keeps its nonce, and a transfer refused later gives its back.)
    const heldNonces = new Set(journal.unsettled().flatMap((entry) => (entry.nonce === null ? [] : [entry.nonce])));
    const journaledFloor = Math.max(0, ...[...heldNonces].map((nonce) => nonce + 1));
    let pendingAtStart: number | undefined;
    const nonces = new NonceAllocator(
      async () => {
        const pending = Number(await provider.send("eth_getTransactionCount", [wallet.address, "pending"]));
        pendingAtStart ??= pending;
        return Math.max(journaledFloor, pending);
      },
      async () => Number(await provider.send("eth_getTransactionCount", [wallet.address, "latest"])),
    );
    // Read now rather than on the first transfer, which then waits for nothing but its own two node calls.
    await nonces.ready();
    // Nonces below the journal's highest that neither the chain counts nor a transfer holds were given back
    // before the restart: the next transfers (or the gap filler) take them.
    for (let nonce = pendingAtStart ?? journaledFloor; nonce < journaledFloor; nonce++) if (!heldNonces.has(nonce)) nonces.release(nonce);
    const reachFaultPoint = faultPointReacher(config.testFaultPoint);
    const submitter = new TransferSubmitter({
      chain,
      journal,
      ledger,
      nonces,
      onHeld: (hash, nonce, { meaning, nodeMessage }) =>
        log.warn({ hash, nonce, meaning, nodeMessage }, "broadcast not known to be taken; the signed transaction stays journaled and is sent again"),
      reachFaultPoint,
    });
    reconciler.signAgain = async (entry) => {
      const signed = await submitter.signAgain(entry);
      // Something is in flight again: blocks are followed at the busy pace.
      poller.wake();
      if (signed) log.warn({ hash: entry.hash, nonce: entry.nonce }, "another transaction used this transfer's nonce; signed it again at a new nonce");
      return signed;
    };
    const transferLogs = new WalletTransferLogs(chain);
    const webhooks = endpoints.length === 0 ? undefined : createWebhooks(config, endpoints, chain, journal, transferLogs, log, observeDelivery);
    const replacer = new TransferReplacer({
      chain,
      journal,
      ledger,
      policy: fees,
      stuckAfterBlocks: config.stuckAfterBlocks,
      notExecutableRetryMs: config.rebroadcastAfterMs,
      gasLimitMultiplier: config.gasLimitMultiplier,
      isInFlight: (entryId) => submitter.isInFlight(entryId),
      lastRefusalOf: (entryId) => reconciler.lastRefusalOf(entryId),
      onAtCap: ({ offered, needed, ...stuck }) =>
        log.warn(
          { ...stuck, offered: feesAsText(offered), needed: feesAsText(needed) },
          "a stuck transfer is at the fee cap (MAX_FEE_PER_GAS / MAX_PRIORITY_FEE_PER_GAS): it waits unmined, and every later transfer behind it",
        ),
      onReplaced: ({ fees: offered, ...replacement }) =>
        log.info(
          { ...replacement, fees: feesAsText(offered) },
          replacement.kind === "cancel" ? "sent a cancel at the transfer's nonce" : "re-priced a stuck transfer: a replacement at the same nonce",
        ),
      reachFaultPoint: reachFaultPoint && (() => reachFaultPoint("after-replacement-sign")),
      onAttemptJournaled: (entry, hash, kind) => {
        if (kind === "transfer") webhooks?.watcher.replaced(entry, hash);
      },
    });
    // After each new snapshot (and, while idle, each new block read): find which attempt of a re-priced
    // transfer was mined, re-price what is stuck, report what was settled. One round at a time.
    // `head`: the block the round is about (its snapshot's, or an idle block read's): webhooks read the
    // Transfer logs up to it, and no further than the nonce count they are matched with.
    let stopped = false;
    let blockRound: Promise<unknown> | undefined;
    // A round asked for while one runs comes right after it: the last block of a burst may bring no other.
    let nextRoundHead: number | undefined;
    let latestHead = initialSnapshot.blockNumber;
    const runBlockRound = (head: number) => {
      if (journal.failure) return;
      if (blockRound) {
        nextRoundHead = Math.max(nextRoundHead ?? head, head);
        return;
      }
      blockRound = (async () => {
        // Transfers settled since the last round are followed until final from here.
        journal.markSettledAt(head);
        await verifyUsedNonces(transferLogs, journal, reconciler, head);
        await replacer.repriceStuck();
        await webhooks?.watcher.follow(head);
        // Transfers a reorganisation moved within the chain are pending only until their undone outcome was
        // reported above: their nonce is used, so the next round verifies them again, without waiting for a block.
        if (journal.markNonceUsedBelow(ledger.snapshot.minedNonceCount) > 0) nextRoundHead ??= head;
        await journal.flushed();
        webhooks?.dispatcher.wake();
      })()
        .catch((error) => log.warn({ err: error }, "re-pricing round failed; will retry at the next block"))
        .finally(() => {
          blockRound = undefined;
          const next = nextRoundHead;
          nextRoundHead = undefined;
          if (next !== undefined && !stopped) runBlockRound(next);
        });
    };
    const finality = new FinalityTracker({
      node: provider,
      journal,
      finalityBlocks: config.finalityBlocks ?? defaultFinalityBlocks(chain.chainId),
      onReorg: async (at) => {
        log.warn({ blockNumber: at.number, blockHash: at.hash }, "the chain reorganised under transfers not final yet; checking each against the new chain");
        transferLogs.forget();
        await poller.ensureFresh(0);
      },
      onOutcome: (outcome) => {
        log.info(outcome, outcome.reorganised ? "transfers not final checked against the new chain" : "transfers became final");
        // Report what changed (transfer.finalized, transfer.reorged) without waiting for another block.
        runBlockRound(latestHead);
      },
    });
    // One finality round at a time; a block read while one runs is covered by the next read.
    let finalityRound: Promise<unknown> | undefined;
    const followFinality = (block: FeeBlock) => {
      if (finalityRound || journal.failure || stopped) return;
      finalityRound = finality
        .follow(block)
        .then(() => journal.flushed())
        .catch((error) => log.warn({ err: error }, "finality round failed; will retry at the next block"))
        .finally(() => (finalityRound = undefined));
    };
    const isBusy = () => ledger.unminedCount > 0 || submitter.inFlightCount > 0 || (webhooks?.watcher.awaitingConfirmations ?? 0) > 0;
    const keyTtlMs = config.idempotencyKeyTtlHours * 3_600_000;
    const poller = new SnapshotPoller({
      initial: initialSnapshot,
      readBlock: () => readFeeBlock(chain),
      readSnapshot: (block) => readWalletSnapshot(chain, fees, block),
      onSnapshot: (snapshot) => {
        ledger.applySnapshot(snapshot);
        // An older block (a lagging backend) tells nothing new.
        if (journal.failure || ledger.snapshot !== snapshot) return;
        const unmined = journal.markUnminedFrom(snapshot.minedNonceCount);
        if (unmined > 0) log.warn({ unmined, minedNonceCount: snapshot.minedNonceCount }, "a reorganisation took mined transfers off the chain; they are pending again and followed until mined");
        journal.markNonceUsedBelow(snapshot.minedNonceCount);
        runBlockRound(snapshot.blockNumber);
      },
      // Without a base fee (a legacy chain) the gas price comes with each snapshot only.
      onBlock: (block) => {
        followFinality(block);
        if (block.baseFeePerGas !== null) ledger.applyBaseFee(block.baseFeePerGas, (baseFee, tip) => offeredFees(baseFee, tip, fees));
        const newHead = block.number > latestHead;
        latestHead = Math.max(latestHead, block.number);
        // Busy, the snapshot of this block triggers the round; idle, transfers settled meanwhile (while
        // the service was down, for one) are reported from the block reads.
        if (newHead && !isBusy()) runBlockRound(block.number);
      },
      onError: (error) => log.warn({ err: error }, "could not refresh the wallet snapshot; keeping the previous one"),
      isBusy,
      busyIntervalMs: config.chainRefreshIntervalMs,
      idleIntervalMs: Math.max(IDLE_POLL_INTERVAL_MS, config.chainRefreshIntervalMs),
    });
    poller.start();
    webhooks?.dispatcher.start();
    // Transfers settled while the service was down are reported without waiting for a block.
    runBlockRound(initialSnapshot.blockNumber);
    const transfers = new TokenTransferService({
      chain,
      gasLimitMultiplier: config.gasLimitMultiplier,
      journal,
      ledger,
      submitter,
      ensureFees: (maxAgeMs) => poller.ensureFeesFresh(maxAgeMs),
      ensureSnapshot: (maxAgeMs) => poller.ensureFresh(maxAgeMs),
    });

    // A nonce given back (its transfer surely refused) that no transfer took for REBROADCAST_AFTER_MS, while
    // later transactions of the wallet wait behind it, is filled with a 0-value self-transaction.
    const fillNonceGap = async () => {
      const gap = nonces.takeGivenBackBefore(monotonicNow() - config.rebroadcastAfterMs);
      if (gap === undefined) return;
      if (!journal.unsettled().some((entry) => entry.nonce !== null && entry.nonce > gap)) {
        nonces.release(gap);
        return;
      }
      let outcome;
      try {
        outcome = await replacer.fillNonceGap(gap);
      } catch (error) {
        // Failed before its record was written (a failed commit stops all sending anyway): give it back.
        if (!journal.failure) nonces.release(gap);
        throw error;
      }
      log.warn({ nonce: gap, outcome }, "filled a nonce gap left by a refused transfer with a 0-value transaction to the wallet itself, so the transfers after it can be mined");
    };
    // A hole at the wallet's next nonce that nothing of ours holds (the chain took back the transaction that
    // used it) is filled the same way, above any earlier attempt of ours at that nonce.
    const fillNonceHole = async () => {
      const hole = await findNonceHole(chain, journal, nonces, ledger.snapshot.minedNonceCount, config.rebroadcastAfterMs, steadyWallClockNow());
      if (!hole) return;
      const outcome = await replacer.fillNonceGap(hole.nonce, hole.outbid);
      log.warn({ nonce: hole.nonce, outcome }, "the wallet's next nonce was free again with transfers waiting behind it (the chain took back the transaction that used it): filled it with a 0-value transaction to the wallet itself");
    };
    const replaceNotExecutable = async (entry: JournalEntry) => {
      const outcome = await replacer.replaceNotExecutable(entry.hash as string);
      if (outcome === "not due") return;
      const held = "the node holds the wallet's next transaction without counting it as pending, so it is not mined";
      if (outcome === "at-cap") log.warn({ nonce: entry.nonce, hash: entry.hash }, `${held}; the fee caps allow no replacement`);
      else log.warn({ nonce: entry.nonce, hash: entry.hash, replacement: outcome.hash, outcome: outcome.outcome }, `${held}: replaced it at the same nonce`);
    };
    let maintenance: Promise<unknown> | undefined;
    const maintenanceTimer = setInterval(() => {
      // One round at a time: a slow node must not stack rounds that send the same entries again.
      maintenance ??= (async () => {
        // A journal that failed to commit takes no writes: nothing may be sent until the service restarts.
        if (journal.failure) return;
        journal.expireKeys(keyTtlMs);
        await fillNonceGap();
        await fillNonceHole();
        const outcomes = await resendUnanswered(reconciler, journal, ledger, (id) => submitter.isInFlight(id), config.rebroadcastAfterMs, replaceNotExecutable);
        if (outcomes.length > 0) log.info({ outcomes }, "checked unanswered or stale transactions, sending again what no node held");
      })()
        .catch((error) => log.warn({ err: error }, "background resend failed; will retry"))
        .finally(() => (maintenance = undefined));
    }, Math.min(MAINTENANCE_INTERVAL_MS, config.rebroadcastAfterMs)).unref();
    journal.expireKeys(keyTtlMs);

    const head = new ChainHeadTracker(() => readLatestBlock(chain.provider), config.headMaxAgeMs);
    const lookup = new TransactionLookup(chain.provider, head, config.transactionCacheSize);

    return {
      transfers,
      submitter,
      nonces,
      ledger,
      journal,
      head,
      lookup,
      statuses: new TransactionStatusReader(chain, lookup, journal),
      replacer,
      webhooks,
      ensureSnapshot: (maxAgeMs) => poller.ensureFresh(maxAgeMs),
      async close() {
        stopped = true;
        clearInterval(maintenanceTimer);
        await poller.stop();
        await webhooks?.dispatcher.stop();
        await Promise.all([maintenance, blockRound, finalityRound]);
        // The last writes reach the store (a shared database is written after each commit) before it closes.
        await journal.flushed().catch(() => undefined);
        journal.close();
      },
    };
  } catch (error) {
    journal.close();
    throw error;
  }
}

// A test-only switch: at the named point the process announces itself and stops making progress, so a
// test can kill -9 it exactly there.
function faultPointReacher(configured: FaultPoint | undefined): ((point: FaultPoint) => Promise<void>) | undefined {
  if (!configured) return undefined;
  return (point) => {
    if (point !== configured) return Promise.resolve();
    process.stdout.write(`TEST_FAULT_POINT reached: ${point}\n`);
    return new Promise<void>(() => {});
  };
}
