/**
 * Assembles what the routes use on the chain side: for the hot wallet the journal, the ledger kept fresh
 * by a snapshot poller, startup reconciliation, the transfer sender and the background rebroadcast of lost
 * sends; for everyone the chain head tracker and the cached transaction lookup.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "./config.js";
import { ChainHeadTracker, readLatestBlock } from "./chain/chain-head.js";
import type { ChainConnection } from "./chain/connect-chain.js";
import { SnapshotPoller } from "./chain/snapshot-poller.js";
import { type FaultPoint, TokenTransferSender } from "./chain/token-transfer.js";
import { TransferReconciler, rebroadcastUnanswered } from "./chain/transfer-reconciler.js";
import { WalletLedger } from "./chain/wallet-ledger.js";
import { TransactionLookup } from "./chain/transaction-lookup.js";
import { TransactionStatusReader } from "./chain/transaction-status.js";
import { readWalletSnapshot } from "./chain/wallet-snapshot.js";
import { openSqliteJournal } from "./journal/sqlite-transfer-journal.js";
import type { TransferJournal } from "./journal/transfer-journal.js";

/** How often, at most, lost broadcasts are looked for, and keys past their lifetime forgotten. */
const MAINTENANCE_INTERVAL_MS = 5_000;

export interface ChainServices {
  sender: TokenTransferSender;
  ledger: WalletLedger;
  journal: TransferJournal;
  head: ChainHeadTracker;
  lookup: TransactionLookup;
  statuses: TransactionStatusReader;
  /** Stops background work, waits for it, and closes the journal. Call after the HTTP server closed. */
  close(): Promise<void>;
}

export type ChainServicesConfig = Pick<
  Config,
  "journalPath" | "journalSynchronous" | "idempotencyKeyTtlHours" | "chainRefreshIntervalMs" | "rebroadcastAfterMs" | "headMaxAgeMs" | "transactionCacheSize" | "testFaultPoint"
>;

/** Opens the journal, reads the wallet, reconciles unfinished transfers, and starts background work. */
export async function startChainServices(config: ChainServicesConfig, chain: ChainConnection, log: FastifyBaseLogger): Promise<ChainServices> {
  const journal = openSqliteJournal(
    config.journalPath,
    { chainId: chain.chainId, walletAddress: chain.wallet.address, tokenAddress: chain.tokenAddress },
    config.journalSynchronous,
  );
  try {
    const ledger = new WalletLedger(await readWalletSnapshot(chain));
    const reconciler = new TransferReconciler(chain, journal, ledger);
    const summary = await reconciler.reconcileAtStartup();
    log.info({ ...summary }, "journal reconciled with the chain");

    const sender = new TokenTransferSender({ chain, journal, ledger, reconciler, reachFaultPoint: faultPointReacher(config.testFaultPoint) });
    reconciler.onNonceFreed = (nonce) => sender.releaseNonce(nonce);
    const keyTtlMs = config.idempotencyKeyTtlHours * 3_600_000;
    const poller = new SnapshotPoller({
      read: () => readWalletSnapshot(chain),
      onSnapshot: (snapshot) => {
        ledger.applySnapshot(snapshot);
        journal.settleBelowNonce(snapshot.minedNonceCount);
      },
      onError: (error) => log.warn({ err: error }, "could not refresh the wallet snapshot; keeping the previous one"),
      intervalMs: config.chainRefreshIntervalMs,
    });
    poller.start();

    let maintenance: Promise<unknown> | undefined;
    const maintenanceTimer = setInterval(() => {
      // One round at a time: a slow node must not stack rounds that send the same entries again.
      maintenance ??= (async () => {
        journal.expireKeys(keyTtlMs);
        const outcomes = await rebroadcastUnanswered(reconciler, journal, ledger, (id) => sender.isInFlight(id), config.rebroadcastAfterMs);
        if (outcomes.length > 0) log.info({ outcomes }, "checked unanswered or stale transactions, sending again what the node lacked");
      })()
        .catch((error) => log.warn({ err: error }, "background rebroadcast failed; will retry"))
        .finally(() => (maintenance = undefined));
    }, Math.min(MAINTENANCE_INTERVAL_MS, config.rebroadcastAfterMs)).unref();
    journal.expireKeys(keyTtlMs);

    const head = new ChainHeadTracker(() => readLatestBlock(chain.provider), config.headMaxAgeMs);
    const lookup = new TransactionLookup(chain.provider, head, config.transactionCacheSize);

    return {
      sender,
      ledger,
      journal,
      head,
      lookup,
      statuses: new TransactionStatusReader(chain, lookup, journal),
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
