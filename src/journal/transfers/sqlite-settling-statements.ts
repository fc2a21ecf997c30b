/** The SQLite journal's statements: following transfers until final: nonces used, reorganisations undone, settled and final blocks, what is still unsettled. */
import type Database from "better-sqlite3";

export function settlingStatements(db: Database.Database) {
  return {
    markNonceUsed: db.prepare("UPDATE transfers SET state = 'nonce-used', updated_at = @now WHERE lane = @lane AND chain_id = @chain AND state = 'accepted' AND nonce < @count"),
    // A transfer answered 417 whose bytes were found mined (an incident) goes back to rejected, never to a
    // state the service sends or re-prices.
    markUnmined: db.prepare(
      "UPDATE transfers INDEXED BY transfers_unfinal SET state = CASE WHEN refusal_code IS NULL THEN 'accepted' ELSE 'rejected' END, mined_hash = NULL, settled_block = NULL, final_block = NULL, updated_at = @now WHERE lane = @lane AND chain_id = @chain AND state IN ('nonce-used', 'cancelled', 'replaced') AND nonce >= @count AND final_block IS NULL AND (settled_block IS NULL OR settled_block <= @block)",
    ),
    unmineOne: db.prepare(
      "UPDATE transfers SET state = CASE WHEN refusal_code IS NULL THEN 'accepted' ELSE 'rejected' END, mined_hash = NULL, settled_block = NULL, final_block = NULL, updated_at = @now WHERE id = @id AND state IN ('nonce-used', 'cancelled', 'replaced') AND final_block IS NULL",
    ),
    settleAt: db.prepare(
      "UPDATE transfers INDEXED BY transfers_unfinal SET settled_block = @block, updated_at = @now WHERE lane = @lane AND chain_id = @chain AND final_block IS NULL AND state IN ('nonce-used', 'cancelled', 'replaced') AND (settled_block IS NULL OR @resettle = 1)",
    ),
    unfinal: db.prepare("SELECT * FROM transfers INDEXED BY transfers_unfinal WHERE lane = @lane AND chain_id = @chain AND final_block IS NULL AND state IN ('nonce-used', 'cancelled', 'replaced') ORDER BY nonce"),
    lowestUnfinalSettled: db.prepare(
      "SELECT MIN(settled_block) FROM transfers INDEXED BY transfers_unfinal WHERE lane = @lane AND chain_id = @chain AND final_block IS NULL AND state IN ('nonce-used', 'cancelled', 'replaced') AND (state <> 'nonce-used' OR mined_hash IS NOT NULL)",
    ).pluck(),
    hasUnfinal: db.prepare("SELECT 1 FROM transfers INDEXED BY transfers_unfinal WHERE lane = @lane AND chain_id = @chain AND final_block IS NULL AND state IN ('nonce-used', 'cancelled', 'replaced') LIMIT 1").pluck(),
    finalize: db.prepare(
      // Only what is verified: a used nonce whose transaction is not known yet is not final, whatever its depth.
      `UPDATE transfers INDEXED BY transfers_unfinal SET final_block = @finalized, updated_at = @now WHERE lane = @lane AND chain_id = @chain AND final_block IS NULL AND state IN ('nonce-used', 'cancelled', 'replaced')
       AND settled_block <= @finalized AND (state <> 'nonce-used' OR mined_hash IS NOT NULL)`,
    ),
    finalizedUnreported: db.prepare(
      "SELECT * FROM transfers INDEXED BY transfers_finality_unreported WHERE lane = @lane AND chain_id = @chain AND notify = 1 AND final_block IS NOT NULL AND reported IN ('transfer.confirmed', 'transfer.failed', 'transfer.cancelled') ORDER BY nonce",
    ),
    unsettled: db.prepare("SELECT * FROM transfers INDEXED BY transfers_unsettled WHERE lane = @lane AND chain_id = @chain AND state IN ('claimed', 'signed', 'accepted') ORDER BY nonce, id"),
    lanesWithUnsettled: db.prepare("SELECT DISTINCT lane FROM transfers WHERE state IN ('claimed', 'signed', 'accepted') AND chain_id = @chain").pluck(),
    networksWithUnsettled: db.prepare("SELECT DISTINCT chain_id FROM transfers WHERE state IN ('claimed', 'signed', 'accepted')").pluck(),
    // The partial index's own terms, repeated: a partial index is usable only when the query implies its terms.
    usedUnverified: db.prepare(
      `SELECT * FROM transfers INDEXED BY transfers_unfinal WHERE lane = @lane AND chain_id = @chain AND final_block IS NULL AND state IN ('nonce-used', 'cancelled', 'replaced')
       AND state = 'nonce-used' AND mined_hash IS NULL ORDER BY nonce`,
    ),
  };
}
