/**
 * A shipment to PostgreSQL whose outcome the leader did not hear: the journal looks the fact up on a new
 * connection, once the failed session can commit nothing more, instead of assuming the record was lost.
 * A real PostgreSQL, behind a TCP proxy that loses the request or the reply of the shipment.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresJournalReader } from "../../src/journal/postgres-journal-reader.js";
import { migrateDatabase, openPostgresJournal, postgresOptions } from "../../src/journal/postgres-journal-store.js";
import { JournalUnavailableError } from "../../src/journal/transfer-journal.js";
import { type TestPostgres, connectTestClient, startTestPostgres, testPool } from "../helpers/postgres.js";
import { type TcpProxy, startTcpProxy } from "../helpers/tcp-proxy.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 5n };

describe("a shipment to PostgreSQL whose outcome is not heard", () => {
  let postgres: TestPostgres;
  let proxy: TcpProxy;

  beforeAll(async () => {
    postgres = await startTestPostgres();
    proxy = await startTcpProxy(Number(new URL(postgres.url).port));
  });
  afterAll(async () => {
    await proxy?.close();
    await postgres?.stop();
  });

  async function openThroughProxy(url: string) {
    const proxied = new URL(url);
    proxied.port = String(proxy.port);
    const session = new pg.Client(postgresOptions(proxied.toString()));
    session.on("error", () => undefined);
    await session.connect();
    await migrateDatabase(session);
    // Looked up directly: the new connection is not the one that failed.
    const reads = testPool(url);
    const journal = await openPostgresJournal(session, OWNER, { reads: postgresJournalReader(reads), connectAgain: () => new pg.Client(postgresOptions(url)) });
    return { session, journal, reads };
  }

  it.each([
    ["its acknowledgement was lost after PostgreSQL committed it", "replies", true],
    ["the shipment never reached PostgreSQL", "requests", false],
  ] as const)("when %s: the journal fails, and says what the database holds (%s)", async (_label, lose, held) => {
    const url = await postgres.createDatabase();
    const { journal, reads } = await openThroughProxy(url);
    const hash = `0x${(lose === "replies" ? "ab" : "cd").repeat(32)}`;
    journal.recordSigned(undefined, REQUEST, { nonce: 3, hash, rawTransaction: "0x02f8", signedAtBlock: 10 });
    if (lose === "replies") proxy.loseNextReplies();
    else proxy.loseNextRequests();
    await expect(journal.flushed()).rejects.toBeInstanceOf(JournalUnavailableError);

    expect(await journal.wasRecorded(hash)).toBe(held);
    const check = await connectTestClient(url);
    try {
      expect((await check.query("SELECT 1 FROM attempts WHERE hash = $1", [hash])).rowCount).toBe(held ? 1 : 0);
    } finally {
      await check.end();
    }
    journal.close();
    await reads.end();
  });
});
