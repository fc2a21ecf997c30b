/**
 * Assembles what the routes use on the chain side: for the hot wallet the journal, the ledger kept fresh
 * by a snapshot poller, startup reconciliation, the send path, finality, webhooks and the background
 * resend; for everyone the chain head tracker and the cached transaction lookup. Each part builds itself
 * through a factory in its own folder; this file only orders them.
 */
import { parseUnits } from "ethers";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "./config.js";
import { parseWebhookUrls } from "./domain/webhook-settings.js";
import { createFinality } from "./finality/create-finality.js";
import { type JournalOwner, openSqliteJournal } from "./journal/sqlite-transfer-journal.js";
import { type TransferJournal, refuseUnfollowedLanes } from "./journal/transfer-journal.js";
import { ChainHeadTracker, readLatestBlock } from "./lookup/chain-head.js";
import { TransactionLookup } from "./lookup/transaction-lookup.js";
import { TransactionStatusReader } from "./lookup/transaction-status.js";
import type { ChainConnection } from "./node/connect-chain.js";
import { WalletTransferLogs } from "./node/wallet-transfer-logs.js";
import { startBackgroundResend } from "./sending/background-resend.js";
import { createNonceAllocator } from "./sending/create-nonce-allocator.js";
import { createSendPath } from "./sending/create-send-path.js";
import { type FeePolicy, offeredFees } from "./sending/fee-policy.js";
import type { NonceAllocator } from "./sending/nonce-allocator.js";
import { SerialRounds } from "./sending/serial-rounds.js";
import { SnapshotPoller } from "./sending/snapshot-poller.js";
import { TransferReconciler } from "./sending/transfer-reconciler.js";
import type { TransferReplacer } from "./sending/transfer-replacer.js";
import { TokenTransferService } from "./sending/transfer-service.js";
import type { TransferSubmitter } from "./sending/transfer-submitter.js";
import { verifyUsedNonces } from "./sending/used-nonce-verifier.js";
import { WalletLedger } from "./sending/wallet-ledger.js";
import { readFeeBlock, readWalletSnapshot } from "./sending/wallet-snapshot.js";
import { createWebhooks } from "./webhooks/create-webhooks.js";
import type { TransferWatcher } from "./webhooks/transfer-watcher.js";
import type { DeliveryOutcome, WebhookDispatcher } from "./webhooks/webhook-dispatcher.js";

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

/**
 * Opens the journal, reads the wallet, reconciles unfinished transfers, and starts background work. Each
 * part builds itself; this function only orders them.
 */
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
    refuseUnfollowedLanes(journal, [chain.wallet.address]);
    const fees = feePolicyOf(config);
    const initialSnapshot = await readWalletSnapshot(chain, fees);
    const ledger = new WalletLedger(initialSnapshot);
    const reconciler = new TransferReconciler(chain, journal, ledger);
    const summary = await reconciler.reconcileAtStartup();
    log.info({ ...summary }, "journal reconciled with the chain");
    const nonces = await createNonceAllocator(chain, journal);

    const transferLogs = new WalletTransferLogs(chain);
    const webhooks = endpoints.length === 0 ? undefined : createWebhooks(config, endpoints, chain, journal, transferLogs, log, observeDelivery);
    const { submitter, replacer } = createSendPath(config, {
      chain,
      journal,
      ledger,
      nonces,
      reconciler,
      policy: fees,
      log,
      onAttemptJournaled: (entry, hash, kind) => {
        if (kind === "transfer") webhooks?.watcher.replaced(entry, hash);
      },
      onSentInBackground: () => poller.wake(),
    });

    // After each new snapshot (and, while idle, each new block read): verify which transaction used each
    // settled nonce, re-price what is stuck, report what was settled. `head`: the block the round is about.
    const rounds = new SerialRounds(
      async (head) => {
        // Transfers settled since the last round are followed until final from here.
        journal.markSettledAt(head);
        await verifyUsedNonces(transferLogs, journal, reconciler, head);
        await replacer.repriceStuck();
        await webhooks?.watcher.follow(head);
        // Transfers a reorganisation moved within the chain are pending only until their undone outcome was
        // reported above: their nonce is used, so the next round verifies them again, without waiting for a block.
        if (journal.markNonceUsedBelow(ledger.snapshot.minedNonceCount) > 0) rounds.again(head);
        await journal.flushed();
        webhooks?.dispatcher.wake();
      },
      (error) => log.warn({ err: error }, "re-pricing round failed; will retry at the next block"),
      () => !journal.failure,
    );
    let latestHead = initialSnapshot.blockNumber;
    const finality = createFinality(config, {
      node: chain.provider,
      chainId: chain.chainId,
      journal,
      log,
      onReorg: async () => {
        transferLogs.forget();
        await poller.ensureFresh(0);
      },
      onUnfollowedJump: () => transferLogs.forget(),
      onChange: () => rounds.run(latestHead),
    });
    const isBusy = () => ledger.unminedCount > 0 || submitter.inFlightCount > 0 || (webhooks?.watcher.awaitingConfirmations ?? 0) > 0;
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
        rounds.run(snapshot.blockNumber);
      },
      // Without a base fee (a legacy chain) the gas price comes with each snapshot only.
      onBlock: (block) => {
        finality.follow(block);
        if (block.baseFeePerGas !== null) ledger.applyBaseFee(block.baseFeePerGas, (baseFee, tip) => offeredFees(baseFee, tip, fees));
        const newHead = block.number > latestHead;
        latestHead = Math.max(latestHead, block.number);
        // Busy, the snapshot of this block triggers the round; idle, transfers settled meanwhile (while
        // the service was down, for one) are reported from the block reads.
        if (newHead && !isBusy()) rounds.run(block.number);
      },
      onError: (error) => log.warn({ err: error }, "could not refresh the wallet snapshot; keeping the previous one"),
      isBusy,
      busyIntervalMs: config.chainRefreshIntervalMs,
      idleIntervalMs: Math.max(IDLE_POLL_INTERVAL_MS, config.chainRefreshIntervalMs),
    });
    poller.start();
    webhooks?.dispatcher.start();
    // Transfers settled while the service was down are reported without waiting for a block.
    rounds.run(initialSnapshot.blockNumber);
    const transfers = new TokenTransferService({
      chain,
      gasLimitMultiplier: config.gasLimitMultiplier,
      journal,
      ledger,
      submitter,
      ensureFees: (maxAgeMs) => poller.ensureFeesFresh(maxAgeMs),
      ensureSnapshot: (maxAgeMs) => poller.ensureFresh(maxAgeMs),
    });
    const resend = startBackgroundResend(
      { rebroadcastAfterMs: config.rebroadcastAfterMs, keyTtlMs: config.idempotencyKeyTtlHours * 3_600_000 },
      { chain, journal, ledger, nonces, reconciler, submitter, replacer, log },
    );

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
        await resend.stop();
        await poller.stop();
        await webhooks?.dispatcher.stop();
        await Promise.all([rounds.stop(), finality.stop()]);
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
