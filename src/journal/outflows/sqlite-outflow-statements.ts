/** The SQLite journal's statements: unexpected outflows, the outflow watch's start and progress per chain, and the signing pause. */
import type Database from "better-sqlite3";

export function outflowStatements(db: Database.Database) {
  return {
    insertOutflow: db.prepare(
      "INSERT INTO wallet_outflows (chain_id, hash, log_index, log_key, wallet, block_number, detected_at) VALUES (@chainId, @hash, @logIndex, @logKey, @wallet, @blockNumber, @detectedAt) ON CONFLICT DO NOTHING",
    ),
    outflowWatchStart: db.prepare("SELECT first_block FROM outflow_watch_starts WHERE chain_id = ?").pluck(),
    insertOutflowWatchStart: db.prepare("INSERT INTO outflow_watch_starts (chain_id, first_block) VALUES (?, ?) ON CONFLICT DO NOTHING"),
    outflowWatchProgress: db.prepare("SELECT progress FROM outflow_watch_starts WHERE chain_id = ?").pluck(),
    // The row exists once the watch's first check kept its start; a progress without one starts at its logs.
    keepOutflowWatchProgress: db.prepare(
      "INSERT INTO outflow_watch_starts (chain_id, first_block, progress) VALUES (@chain, @logsReadTo, @progress) ON CONFLICT (chain_id) DO UPDATE SET progress = excluded.progress",
    ),
    signingPause: db.prepare("SELECT since, reason, hash, latest_hash AS latestHash, outflows FROM signing_pauses WHERE resumed_at IS NULL ORDER BY id DESC LIMIT 1"),
    insertSigningPause: db.prepare("INSERT INTO signing_pauses (since, reason, hash, latest_hash, outflows) VALUES (@since, @reason, @hash, @latestHash, @outflows)"),
    updateSigningPause: db.prepare("UPDATE signing_pauses SET latest_hash = @latestHash, outflows = @outflows WHERE resumed_at IS NULL"),
    resumeSigning: db.prepare("UPDATE signing_pauses SET resumed_at = @at, resumed_by = @by WHERE resumed_at IS NULL"),
  };
}
