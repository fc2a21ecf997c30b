/** The SQLite journal's statements: the journal's owner row (its chain, wallet and token) and the schema version. */
import type Database from "better-sqlite3";

export function ownerStatements(db: Database.Database) {
  return {
    owner: db.prepare("SELECT chain_id, wallet_address, token_address FROM journal_owner WHERE id = 1"),
    insertOwner: db.prepare("INSERT INTO journal_owner (id, chain_id, wallet_address, token_address) VALUES (1, @chain_id, @wallet_address, @token_address)"),
    markOwner: db.prepare("UPDATE journal_owner SET chain_id = @chain_id WHERE id = 1"),
    userVersion: db.prepare("PRAGMA user_version"),
  };
}
