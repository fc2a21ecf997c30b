/**
 * Assembles what the routes use on the chain side: for the hot wallet the journal, the ledger kept fresh
 * by a snapshot poller, startup reconciliation, the transfer service and the background resend of lost
 * sends; for everyone the chain head tracker and the cached transaction lookup.
 */
import { parseUnits } from "ethers";
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "./config.js";
import { ChainHeadTracker, readLatestBlock } from "./chain/chain-head.js";
import type { ChainConnection } from "./chain/connect-chain.js";
import { SnapshotPoller } from "./chain/snapshot-poller.js";
import { TransactionLookup } from "./chain/transaction-lookup.js";
import { TransactionStatusReader } from "./chain/transaction-status.js";
import { type FeePolicy, offeredFees } from "./chain/fee-policy.js";
import { readFeeBlock, readWalletSnapshot } from "./chain/wallet-snapshot.js";
import { openSqliteJournal } from "./journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "./journal/transfer-journal.js";
import { NonceAllocator } from "./sending/nonce-allocator.js";
import { TransferReconciler, resendUnanswered } from "./sending/transfer-reconciler.js";
import { TokenTransferService } from "./sending/transfer-service.js";
import { type FaultPoint, TransferSubmitter } from "./sending/transfer-submitter.js";
import { WalletLedger } from "./sending/wallet-ledger.js";

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

/** Opens the journal, reads the wallet, reconciles unfinished transfers, and starts background work. */
export async function startChainServices(config: ChainServicesConfig, chain: ChainConnection, log: FastifyBaseLogger): Promise<ChainServices> {
  const journal = openSqliteJournal(
    config.journalPath,
    { chainId: chain.chainId, walletAddress: chain.wallet.address, tokenAddress: chain.tokenAddress },
    config.journalSynchronous,
  );
  try {
    const fees = feePolicyOf(config);
    const initialSnapshot = await readWalletSnapshot(chain, fees);
    const ledger = new WalletLedger(initialSnapshot);
    const reconciler = new TransferReconciler(chain, journal, ledger);
    const summary = await reconciler.reconcileAtStartup();
    log.info({ ...summary }, "journal reconciled with the chain");

    const { provider, wallet } = chain;
    const nonces = new NonceAllocator(async () => Number(await provider.send("eth_getTransactionCount", [wallet.address, "pending"])));
    // Read now rather than on the first transfer, which then waits for nothing but its own two node calls.
    await nonces.ready();
    const submitter = new TransferSubmitter({
      chain,
      journal,
      ledger,
      nonces,
      onHeld: (hash, nonce, { meaning, nodeMessage }) =>
        log.warn({ hash, nonce, meaning, nodeMessage }, "broadcast not known to be taken; the signed transaction stays journaled and is sent again"),
      reachFaultPoint: faultPointReacher(config.testFaultPoint),
    });
    const keyTtlMs = config.idempotencyKeyTtlHours * 3_600_000;
    const poller = new SnapshotPoller({
      initial: initialSnapshot,
      readBlock: () => readFeeBlock(chain),
      readSnapshot: (block) => readWalletSnapshot(chain, fees, block),
      onSnapshot: (snapshot) => {
        ledger.applySnapshot(snapshot);
        if (!journal.failure) journal.markNonceUsedBelow(snapshot.minedNonceCount);
      },
      // Without a base fee (a legacy chain) the gas price comes with each snapshot only.
      onBlock: (block) => {
        if (block.baseFeePerGas !== null) ledger.applyBaseFee(block.baseFeePerGas, (baseFee, tip) => offeredFees(baseFee, tip, fees));
      },
      onError: (error) => log.warn({ err: error }, "could not refresh the wallet snapshot; keeping the previous one"),
      isBusy: () => ledger.unminedCount > 0 || submitter.inFlightCount > 0,
      busyIntervalMs: config.chainRefreshIntervalMs,
      idleIntervalMs: Math.max(IDLE_POLL_INTERVAL_MS, config.chainRefreshIntervalMs),
    });
    poller.start();
    const transfers = new TokenTransferService({
      chain,
      gasLimitMultiplier: config.gasLimitMultiplier,
      journal,
      ledger,
      submitter,
      ensureFees: (maxAgeMs) => poller.ensureFeesFresh(maxAgeMs),
      ensureSnapshot: (maxAgeMs) => poller.ensureFresh(maxAgeMs),
    });

    let maintenance: Promise<unknown> | undefined;
    const maintenanceTimer = setInterval(() => {
      // One round at a time: a slow node must not stack rounds that send the same entries again.
      maintenance ??= (async () => {
        // A journal that failed to commit takes no writes: nothing may be sent until the service restarts.
        if (journal.failure) return;
        journal.expireKeys(keyTtlMs);
        const outcomes = await resendUnanswered(reconciler, journal, ledger, (id) => submitter.isInFlight(id), config.rebroadcastAfterMs);
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
      ensureSnapshot: (maxAgeMs) => poller.ensureFresh(maxAgeMs),
      async close() {
        clearInterval(maintenanceTimer);
        await Promise.all([poller.stop(), maintenance]);
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
