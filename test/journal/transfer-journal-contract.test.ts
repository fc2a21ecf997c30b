/**
 * What every journal store must do, run against each: SQLite (one process), and the leader's working copy
 * shipped to a real PostgreSQL (several replicas), where "reopen" is a new leader reading the database.
 * One describe per concern of the journal (journal/<concern>/), each on both databases; the history's
 * reads have a file of their own (history-reads.test.ts), on both too.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openKeptDatabase } from "../../src/journal/sqlite-keep-alive.js";
import { AuditChainCheck } from "../../src/journal/audit/audit-chain.js";
import pg from "pg";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { steadyWallClockNow } from "../../src/clock.js";
import { postgresJournalReader } from "../../src/journal/postgres-journal-reader.js";
import { migrateDatabase, openPostgresJournal, postgresOptions } from "../../src/journal/postgres-journal-store.js";
import { POSTGRES_MIGRATIONS } from "../../src/journal/postgres-migrations.js";
import { type JournalOwner, JournalWriteError } from "../../src/journal/journal-records.js";
import { KEYS_EXPIRED_PER_CALL } from "../../src/journal/retention/sqlite-retention-records.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import { JournalOwnerMismatchError, PayoutItemsTakenError, type TransferJournal, refuseUnfollowedLanes, refuseUnfollowedNetworks } from "../../src/journal/transfer-journal.js";
import { type TestPostgres, startTestPostgres, testPool } from "../helpers/postgres.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
/** USDC on Polygon: a transfer on another network than the owner's. */
const POLYGON_TOKEN = "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359";
/** A second wallet: another lane of the same pool. */
const OTHER_LANE = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
const REQUEST = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 1_500_000_000_000_000_000n };
const SIGNED = { nonce: 7, hash: `0x${"ab".repeat(32)}`, rawTransaction: "0x02f8", signedAtBlock: 100 };
const { signedAtBlock: _block, ...SIGNED_FIELDS } = SIGNED;

/** A place a journal lives, opened afresh by `open` (after a crash, or by a new leader). */
interface JournalStore {
  /** `notify`: webhooks report on the transfers made from now on. */
  open(owner?: JournalOwner, options?: { notify?: boolean }): Promise<TransferJournal>;
  /** The owner's chain id as stored, as a version that reads it raw sees it. */
  ownerChain(): Promise<string>;
  destroy(): Promise<void>;
}

function sqliteStore(): JournalStore {
  const dir = mkdtempSync(join(tmpdir(), "journal-test-"));
  const path = join(dir, "nested", "transfers.sqlite");
  return {
    open: async (owner = OWNER, options = {}) => openSqliteJournal(path, owner, options),
    ownerChain: async () => {
      const db = openKeptDatabase(path, { readonly: true });
      try {
        return db.prepare("SELECT chain_id FROM journal_owner").pluck().get() as string;
      } finally {
        db.close();
      }
    },
    destroy: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

let postgres: TestPostgres | undefined;
async function postgresStore(): Promise<JournalStore> {
  postgres ??= await startTestPostgres();
  const url = await postgres.createDatabase();
  const sessions: pg.Client[] = [];
  const reads = testPool(url);
  return {
    async open(owner = OWNER, options = {}) {
      // Each opening is a new leader on its own session, as after a takeover.
      const session = new pg.Client(postgresOptions(url));
      sessions.push(session);
      await session.connect();
      await migrateDatabase(session);
      return openPostgresJournal(session, owner, { ...options, reads: postgresJournalReader(reads) });
    },
    ownerChain: async () => (await reads.query<{ chain_id: string }>("SELECT chain_id FROM journal_owner")).rows[0].chain_id,
    destroy: async () => {
      await Promise.all(sessions.map((session) => session.end()));
      await reads.end();
    },
  };
}

afterAll(async () => {
  await postgres?.stop();
});

describe.each([
  ["SQLite", sqliteStore],
  ["PostgreSQL (the leader's working copy)", postgresStore],
] as [string, () => JournalStore | Promise<JournalStore>][])("the transfer journal on %s", (_name, makeStore) => {
  let store: JournalStore;
  let journal: TransferJournal;

  // What was flushed is there after a crash or a takeover: the journal is opened again from its store.
  async function reopen(owner?: JournalOwner): Promise<void> {
    await journal.flushed();
    journal.close();
    journal = await store.open(owner);
  }

  beforeEach(async () => {
    store = await makeStore();
    journal = await store.open();
  });
  afterEach(async () => {
    journal.close();
    await store.destroy();
  });

  describe("transfers and their attempts", () => {
    it("claims a key once; the second claim sees the first entry", () => {
      const first = journal.claimKey("key-1", REQUEST);
      expect(first.outcome).toBe("claimed");
      const second = journal.claimKey("key-1", { ...REQUEST, units: 1n });
      expect(second).toMatchObject({ outcome: "existing", entry: { state: "claimed", recipient: REQUEST.recipient, units: REQUEST.units } });
    });

    it("keeps a signed transfer across a reopen, as after a crash", async () => {
      const claim = journal.claimKey("key-2", REQUEST);
      if (claim.outcome !== "claimed") throw new Error("expected a claim");
      journal.recordSigned(claim.entryId, REQUEST, SIGNED);
      await reopen();
      expect(journal.unsettled()).toEqual([expect.objectContaining({ idempotencyKey: "key-2", state: "signed", ...SIGNED_FIELDS, units: REQUEST.units })]);
      expect(journal.findByHash(SIGNED.hash.toUpperCase().replace("0X", "0x"))?.idempotencyKey).toBe("key-2");
    });

    it("records a transfer without a key when it is signed", () => {
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      journal.recordAccepted(id);
      expect(journal.unsettled()).toEqual([expect.objectContaining({ id, idempotencyKey: null, state: "accepted" })]);
    });

    it("marks accepted entries whose nonce the chain has used; signed ones stay for the reconciler to check", () => {
      for (const nonce of [1, 2, 3]) journal.recordAccepted(journal.recordSigned(undefined, REQUEST, { ...SIGNED, nonce, hash: `0x${String(nonce).repeat(64)}` }));
      const unanswered = journal.recordSigned(undefined, REQUEST, { ...SIGNED, nonce: 0, hash: `0x${"0".repeat(64)}` });
      expect(journal.markNonceUsedBelow(3)).toBe(2);
      expect(journal.unsettled().map((entry) => [entry.id, entry.nonce])).toEqual([[unanswered, 0], [expect.any(Number), 3]]);
      expect(journal.findByHash(`0x${"1".repeat(64)}`)?.state).toBe("nonce-used");
    });

    it("keeps the refusal a client was given, for repeats of its key", async () => {
      const claim = journal.claimKey("refused-key", REQUEST);
      if (claim.outcome !== "claimed") throw new Error("expected a claim");
      journal.recordRefused(claim.entryId, { code: "INSUFFICIENT_TOKEN_BALANCE", message: "not enough" });
      await reopen();
      expect(journal.claimKey("refused-key", REQUEST)).toMatchObject({ outcome: "existing", entry: { state: "refused", refusal: { code: "INSUFFICIENT_TOKEN_BALANCE", message: "not enough" } } });
    });

    it("refuses a write that finds no entry to change, instead of losing it silently", () => {
      expect(() => journal.recordSigned(4242, REQUEST, SIGNED)).toThrow(JournalWriteError);
      expect(() => journal.recordAccepted(4242)).toThrow(JournalWriteError);
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      journal.recordAccepted(id);
      // Only a claim or an unanswered signature can be (re)signed.
      expect(() => journal.recordSigned(id, REQUEST, SIGNED)).toThrow(JournalWriteError);
    });

    it("releasing a key deletes an unsigned claim, and never frees the key of a signed entry", () => {
      const unsigned = journal.claimKey("key-3", REQUEST);
      const signed = journal.claimKey("key-4", REQUEST);
      if (unsigned.outcome !== "claimed" || signed.outcome !== "claimed") throw new Error("expected claims");
      journal.recordSigned(signed.entryId, REQUEST, SIGNED);
      expect(journal.releaseKey(unsigned.entryId)).toBe(true);
      // Its transaction may be on chain: a repeat must find it, not run again.
      expect(journal.releaseKey(signed.entryId)).toBe(false);
      expect(journal.claimKey("key-3", REQUEST).outcome).toBe("claimed");
      expect(journal.claimKey("key-4", REQUEST)).toMatchObject({ outcome: "existing", entry: { state: "signed", hash: SIGNED.hash } });
    });

    it("knows every attempt at a transfer's nonce, finds the transfer by any of them, and settles it with the mined one", async () => {
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      journal.recordAccepted(id);
      // One attempt: lookups need not ask the journal.
      expect(await journal.findWithSeveralAttempts(SIGNED.hash)).toBeUndefined();
      const second = { hash: `0x${"cd".repeat(32)}`, rawTransaction: "0x02f9", kind: "transfer" as const, signedAtBlock: 104 };
      journal.recordAttempt(id, second);
      await reopen();
      const [entry] = journal.unsettled();
      expect(entry.hash).toBe(SIGNED.hash);
      expect(entry.attempts.map(({ hash, kind, signedAtBlock }) => ({ hash, kind, signedAtBlock }))).toEqual([
        { hash: SIGNED.hash, kind: "transfer", signedAtBlock: 100 },
        { hash: second.hash, kind: "transfer", signedAtBlock: 104 },
      ]);
      expect(journal.findByHash(second.hash)?.id).toBe(id);
      expect((await journal.findWithSeveralAttempts(SIGNED.hash))?.id).toBe(id);
      journal.markNonceUsedBelow(8);
      expect(journal.usedUnverified().map((used) => used.id)).toEqual([id]);
      journal.recordMined(id, second.hash);
      expect(journal.usedUnverified()).toEqual([]);
      expect(journal.findByHash(SIGNED.hash)).toMatchObject({ state: "nonce-used", minedHash: second.hash });
    });

    it("makes a settled transfer final only once verified, at or below the finalized block; a reorganisation before that makes it pending again", async () => {
      const verified = journal.recordSigned(undefined, REQUEST, SIGNED);
      const unverified = journal.recordSigned(undefined, REQUEST, { ...SIGNED, nonce: 8, hash: `0x${"cd".repeat(32)}` });
      for (const id of [verified, unverified]) journal.recordAccepted(id);
      journal.markNonceUsedBelow(9);
      journal.recordMined(verified, SIGNED.hash);
      expect(journal.markSettledAt(120)).toBe(2);
      expect(journal.finalizeThrough(119)).toBe(0);
      expect(journal.finalizeThrough(120)).toBe(1);
      await reopen();
      expect(journal.findById(verified)).toMatchObject({ state: "nonce-used", settledBlock: 120, finalBlock: 120 });
      expect(journal.unfinal().map((entry) => entry.id)).toEqual([unverified]);
      expect(journal.markUnmined(verified)).toBe(false);
      expect(journal.markUnmined(unverified)).toBe(true);
      expect(journal.findById(unverified)).toMatchObject({ state: "accepted", settledBlock: null, finalBlock: null });
      expect(journal.hasUnfinal()).toBe(false);
    });

    it("changes a state only from the one its writer expects: a rejected entry is never made accepted by a stale copy", async () => {
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      journal.recordRejected(id, { code: "NONCE_EXPIRED", message: "refused" });
      expect(journal.recordAccepted(id)).toBe(false);
      expect(journal.recordReplaced(id)).toBe(false);
      await reopen();
      expect(journal.findById(id)).toMatchObject({ state: "rejected", refusal: { code: "NONCE_EXPIRED" } });
    });

    it("keeps what displaced a transfer (the transaction and its block) across a reopen or a new leader, until it is cleared", async () => {
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      const displacement = { by: `0x${"ef".repeat(32)}`, block: { number: 95, hash: `0x${"95".repeat(32)}` }, nonce: SIGNED.nonce };
      journal.recordDisplacement(id, displacement);
      await reopen();
      expect(journal.findById(id)?.displacement).toEqual(displacement);
      journal.recordDisplacement(id, null);
      await reopen();
      expect(journal.findById(id)?.displacement).toBeNull();
    });

    it("makes a rejected entry whose own transaction the chain shows mined what the chain shows, its refusal kept (an incident, never signed again)", async () => {
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      journal.recordRejected(id, { code: "INSUFFICIENT_FUNDS", message: "no gas" });
      expect(() => journal.recordMined(id, `0x${"cd".repeat(32)}`)).toThrow(/changed 0 entries/);
      expect(journal.findById(id)).toMatchObject({ state: "rejected" });
      journal.recordMined(id, SIGNED.hash);
      await reopen();
      expect(journal.findById(id)).toMatchObject({ state: "nonce-used", minedHash: SIGNED.hash, refusal: { code: "INSUFFICIENT_FUNDS" } });
      // A reorganisation takes it off the chain: rejected again, never a state the service would send it from.
      expect(journal.markUnmined(id)).toBe(true);
      expect(journal.findById(id)).toMatchObject({ state: "rejected", minedHash: null });
    });

    it("signs a transfer again at a new nonce as a new attempt; every attempt's hash still finds it", async () => {
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      journal.recordAccepted(id);
      const again = { nonce: 9, hash: `0x${"cd".repeat(32)}`, rawTransaction: "0x02fb", signedAtBlock: 120 };
      journal.recordSignedAgain(id, again);
      await reopen();
      expect(journal.findByHash(SIGNED.hash)).toMatchObject({ id, state: "signed", nonce: 9, hash: SIGNED.hash });
      expect((await journal.findWithSeveralAttempts(again.hash))?.attempts.map((attempt) => attempt.hash)).toEqual([SIGNED.hash, again.hash]);
    });

    it("never signs over a cancel: a transfer the client cancelled is not sent at another nonce", () => {
      const claim = journal.claimKey("cancelled-key", REQUEST);
      if (claim.outcome !== "claimed") throw new Error("expected a claim");
      journal.recordSigned(claim.entryId, REQUEST, SIGNED);
      journal.recordAttempt(claim.entryId, { hash: `0x${"ef".repeat(32)}`, rawTransaction: "0x02fa", kind: "cancel", signedAtBlock: 101 });
      expect(() => journal.recordSigned(claim.entryId, REQUEST, { ...SIGNED, nonce: 8, hash: `0x${"cd".repeat(32)}` })).toThrow(JournalWriteError);
      expect(journal.findById(claim.entryId)?.attempts.map((attempt) => attempt.kind)).toEqual(["transfer", "cancel"]);
    });

    it("a mined cancel attempt makes the transfer cancelled; a reorg that unmines it makes it pending again", () => {
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      journal.recordAccepted(id);
      const cancel = { hash: `0x${"ef".repeat(32)}`, rawTransaction: "0x02fa", kind: "cancel" as const, signedAtBlock: 101 };
      journal.recordAttempt(id, cancel);
      journal.recordMined(id, cancel.hash);
      expect(journal.findByHash(SIGNED.hash)).toMatchObject({ state: "cancelled", minedHash: cancel.hash });
      // A hash of another transfer is not this one's to settle with.
      expect(() => journal.recordMined(id, `0x${"99".repeat(32)}`)).toThrow(JournalWriteError);
      expect(journal.markUnminedFrom(7, 100)).toBe(1);
      expect(journal.findByHash(cancel.hash)).toMatchObject({ state: "accepted", minedHash: null });
      expect(journal.markUnminedFrom(7, 100)).toBe(0);
    });

    it("takes a lower nonce count as a reorganisation only at a block no lower than the one a transfer was seen settled at, and never for a final one", () => {
      const [final, older, newer] = [0, 1, 2].map((nonce) => {
        const id = journal.recordSigned(undefined, REQUEST, { ...SIGNED, nonce, hash: `0x${String(nonce + 4).repeat(64)}` });
        journal.recordAccepted(id);
        return id;
      });
      // Each seen mined (verified) and settled at its own head.
      const settle = (id: number, countBelow: number, head: number) => {
        journal.markNonceUsedBelow(countBelow);
        journal.recordMined(id, journal.findById(id)?.hash as string);
        journal.markSettledAt(head);
      };
      settle(final, 1, 100);
      expect(journal.finalizeThrough(100)).toBe(1);
      settle(older, 2, 110);
      settle(newer, 3, 120);
      // A count of 0 read at block 115 (a backend behind): only what was seen settled at or below 115, and
      // not final, is pending again.
      expect(journal.markUnminedFrom(0, 115)).toBe(1);
      expect(journal.findById(older)).toMatchObject({ state: "accepted" });
      expect(journal.findById(newer)).toMatchObject({ state: "nonce-used", settledBlock: 120 });
      expect(journal.findById(final)).toMatchObject({ state: "nonce-used", finalBlock: 100 });
    });
  });

  describe("the unit of work: owner, lanes, networks, one commit", () => {
    it("refuses a journal of another token or chain", async () => {
      journal.recordSigned(undefined, REQUEST, SIGNED);
      await expect(reopen({ ...OWNER, tokenAddress: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" })).rejects.toThrow(/belongs to token 0x5FbDB2315678afecb367f032d93F642f64180aa3 on chain 31337/);
      await expect(store.open({ ...OWNER, chainId: 1n })).rejects.toThrow(JournalOwnerMismatchError);
      journal = await store.open();
      expect(journal.unsettled()).toHaveLength(1);
    });

    it("once opened for several networks, stays marked so that a version before networks refuses it as another chain's; this version reads it as its own", async () => {
      journal.recordSigned(undefined, REQUEST, SIGNED);
      await reopen({ ...OWNER, severalNetworks: true });
      const id = journal.recordSigned(undefined, REQUEST, { ...SIGNED, nonce: 8, hash: `0x${"12".repeat(32)}` });
      // The mark is on the owner only: rows still carry the bare chain id.
      expect(journal.findById(id)).toMatchObject({ chainId: 31337 });
      await reopen();
      expect(journal.unsettled()).toHaveLength(2);
      // A version before networks compares the stored chain id with its own: it no longer matches.
      expect(await store.ownerChain()).toBe("31337;several-networks");
      await expect(store.open({ ...OWNER, chainId: 1n })).rejects.toThrow(/belongs to token 0x5FbDB2315678afecb367f032d93F642f64180aa3 on chain 31337; use another/);
    });

    it("keeps each lane's transfers apart, and shares keys, hashes and commits between lanes", async () => {
      const other = journal.forLane(OTHER_LANE);
      const mine = journal.recordSigned(undefined, REQUEST, SIGNED);
      const theirs = other.recordSigned(undefined, REQUEST, { ...SIGNED, hash: `0x${"cd".repeat(32)}` });
      for (const id of [mine, theirs]) journal.recordAccepted(id);
      // A key claimed in one lane is taken in every lane.
      const claim = other.claimKey("pool-key", REQUEST);
      expect(journal.claimKey("pool-key", REQUEST)).toMatchObject({ outcome: "existing", entry: { lane: OTHER_LANE } });
      if (claim.outcome !== "claimed") throw new Error("expected a claim");
      // Each lane follows its own nonces: the same nonce in another lane is another transaction.
      expect(journal.markNonceUsedBelow(8)).toBe(1);
      expect(other.unsettled().map((entry) => [entry.id, entry.state])).toEqual([[claim.entryId, "claimed"], [theirs, "accepted"]]);
      expect(journal.unsettled()).toEqual([]);
      expect(journal.usedUnverified().map((entry) => entry.id)).toEqual([mine]);
      expect(other.usedUnverified()).toEqual([]);
      expect(journal.lanesWithUnsettled()).toEqual([OTHER_LANE]);
      // Closing a lane's view alone leaves the journal working.
      other.close();
      expect(journal.unsettled()).toEqual([]);
      await reopen({ ...OWNER, walletAddress: OTHER_LANE });
      expect(journal.lane).toBe(OTHER_LANE);
      expect(journal.findByHash(SIGNED.hash)).toMatchObject({ id: mine, lane: OWNER.walletAddress, state: "nonce-used" });
      expect(journal.unsettled().map((entry) => entry.id)).toEqual([claim.entryId, theirs]);
    });

    it("keeps each network's transfers of one wallet apart (a nonce sequence per chain), and shares keys and hashes between networks", async () => {
      const polygon = journal.forNetwork(137n, POLYGON_TOKEN);
      const onOwners = journal.recordSigned(undefined, { ...REQUEST, apiKeyId: "key_a" }, SIGNED);
      // The same wallet, the same nonce, on another chain: another transaction.
      const onPolygon = polygon.recordSigned(undefined, { ...REQUEST, apiKeyId: "key_a", units: 5n }, { ...SIGNED, hash: `0x${"ef".repeat(32)}` });
      for (const id of [onOwners, onPolygon]) journal.recordAccepted(id);
      expect(journal.findById(onOwners)).toMatchObject({ chainId: 31337, token: OWNER.tokenAddress, nonce: 7 });
      expect(journal.findById(onPolygon)).toMatchObject({ chainId: 137, token: POLYGON_TOKEN, nonce: 7 });
      // A key claimed on one network is taken on every network: one payment, wherever it went.
      const claim = polygon.claimKey("network-key", REQUEST);
      expect(claim.outcome).toBe("claimed");
      expect(journal.claimKey("network-key", REQUEST)).toMatchObject({ outcome: "existing", entry: { chainId: 137, token: POLYGON_TOKEN } });
      // Each network's nonce count settles its own transfers only.
      expect(journal.markNonceUsedBelow(8)).toBe(1);
      if (claim.outcome !== "claimed") throw new Error("expected a claim");
      // Unsettled by nonce: the claim has none yet.
      expect(polygon.unsettled().map((entry) => [entry.id, entry.state])).toEqual([[claim.entryId, "claimed"], [onPolygon, "accepted"]]);
      expect(journal.unsettled()).toEqual([]);
      expect(journal.usedUnverified().map((entry) => entry.id)).toEqual([onOwners]);
      expect(polygon.usedUnverified()).toEqual([]);
      expect(journal.lanesWithUnsettled()).toEqual([]);
      expect(polygon.lanesWithUnsettled()).toEqual([OWNER.walletAddress]);
      // A network taken out of the configuration while it has transfers in flight: nobody would follow them.
      expect(() => refuseUnfollowedNetworks(journal, [31337n])).toThrow(
        "the transfer journal has transfers in flight on chain 137, which NETWORKS_FILE does not name; name that network again (beside the others) until they settle",
      );
      refuseUnfollowedNetworks(journal, [31337n, 137n]);
      // The per-key cap counts what was spent in the network's own token.
      expect(journal.spentSince(0).map((spent) => spent.units)).toEqual([REQUEST.units]);
      expect(polygon.spentSince(0).map((spent) => spent.units)).toEqual([5n]);
      // A hash finds its transfer from any network's view, and a new leader's working copy keeps both apart.
      expect(polygon.findByHash(SIGNED.hash)).toMatchObject({ id: onOwners, chainId: 31337 });
      polygon.close();
      await reopen();
      expect(journal.forNetwork(137n, POLYGON_TOKEN).unsettled().map((entry) => entry.id)).toContain(onPolygon);
      expect(journal.unsettled()).toEqual([]);
    });

    it("refuses to start while transfers in flight belong to a wallet not configured; settled ones are history", () => {
      const other = journal.forLane(OTHER_LANE);
      const id = other.recordSigned(undefined, REQUEST, SIGNED);
      other.recordAccepted(id);
      expect(() => refuseUnfollowedLanes(journal, [OWNER.walletAddress])).toThrow(
        `the transfer journal has transfers in flight from ${OTHER_LANE}, whose key is not configured; configure it again (beside the others) until they settle`,
      );
      refuseUnfollowedLanes(journal, [OWNER.walletAddress, OTHER_LANE]);
      other.markNonceUsedBelow(8);
      refuseUnfollowedLanes(journal, [OWNER.walletAddress]);
      other.close();
    });

    it("keeps a commit of thousands of entries (more than one statement's parameters), across a reopen", async () => {
      for (let nonce = 0; nonce < 2_100; nonce++) journal.recordSigned(undefined, REQUEST, { ...SIGNED, nonce, hash: `0x${nonce.toString(16).padStart(64, "0")}` });
      await reopen();
      expect(journal.unsettled().map((entry) => entry.nonce)).toEqual(Array.from({ length: 2_100 }, (_, nonce) => nonce));
    });
  });

  describe("approvals and the address book", () => {
    it("keeps a transfer awaiting approval across a reopen (a new leader holds it), with or without a key; its key lives while it waits", async () => {
      const expiresAt = steadyWallClockNow() + 3_600_000;
      const keyed = journal.requestApproval("large", { ...REQUEST, apiKeyId: "key_asker" }, expiresAt);
      const unkeyed = journal.requestApproval(undefined, REQUEST, expiresAt);
      if (keyed.outcome !== "claimed" || unkeyed.outcome !== "claimed") throw new Error("expected new entries");
      expect(journal.requestApproval("large", REQUEST, expiresAt)).toMatchObject({ outcome: "existing", entry: { id: keyed.entryId, state: "awaiting-approval" } });
      // Nothing to follow on chain, and its key outlives the key lifetime while it waits.
      expect(journal.unsettled()).toEqual([]);
      expect(journal.expireKeys(60_000, steadyWallClockNow() + 61_000)).toBe(0);
      await reopen();
      expect(journal.awaitingApprovalCount()).toBe(2);
      expect(journal.awaitingApproval(10).map((entry) => entry.id).sort()).toEqual([keyed.entryId, unkeyed.entryId].sort());
      expect(journal.findByKey("large")).toMatchObject({ state: "awaiting-approval", apiKeyId: "key_asker", approval: { expiresAt, decidedBy: null, decidedAt: null } });
    });

    it("decides an approval once: approved becomes a claim of the lane that sends it, or back to awaiting when nothing was signed; rejected is refused for good", async () => {
      const expiresAt = steadyWallClockNow() + 3_600_000;
      const [approved, rejected] = ["approved", "rejected"].map((key) => journal.requestApproval(key, REQUEST, expiresAt));
      if (approved.outcome !== "claimed" || rejected.outcome !== "claimed") throw new Error("expected new entries");
      const lane = journal.forLane(OTHER_LANE);
      expect(lane.takeApproved(approved.entryId, "key_admin", 1_000)).toBe(true);
      // A second decision finds it taken.
      expect(journal.takeApproved(approved.entryId, "key_other", 1_001)).toBe(false);
      expect(journal.refuseApproval(approved.entryId, "key_other", 1_001, { code: "APPROVAL_REJECTED", message: "no" })).toBe(false);
      expect(journal.findById(approved.entryId)).toMatchObject({ state: "claimed", lane: OTHER_LANE, approval: { decidedBy: "key_admin", decidedAt: 1_000 } });
      // An approved claim is never deleted as an abandoned one: it awaits its approval again.
      expect(journal.releaseKey(approved.entryId)).toBe(false);
      expect(journal.returnToApproval(approved.entryId)).toBe(true);
      expect(journal.findById(approved.entryId)).toMatchObject({ state: "awaiting-approval", approval: { decidedBy: null, decidedAt: null } });
      // Taken again and signed: it is a transfer like any, and no longer awaits anything.
      expect(lane.takeApproved(approved.entryId, "key_admin", 2_000)).toBe(true);
      lane.recordSigned(approved.entryId, REQUEST, SIGNED);
      expect(journal.returnToApproval(approved.entryId)).toBe(false);

      // Decided two minutes after it was asked for.
      const decidedAt = steadyWallClockNow() + 120_000;
      expect(journal.refuseApproval(rejected.entryId, "key_admin", decidedAt, { code: "APPROVAL_REJECTED", message: "no" })).toBe(true);
      expect(journal.takeApproved(rejected.entryId, "key_other", 3_001)).toBe(false);
      await reopen();
      expect(journal.awaitingApprovalCount()).toBe(0);
      expect(journal.findByKey("rejected")).toMatchObject({ state: "refused", refusal: { code: "APPROVAL_REJECTED" }, approval: { decidedBy: "key_admin", decidedAt } });
      expect(journal.findByKey("approved")).toMatchObject({ state: "signed", lane: OTHER_LANE, approval: { decidedBy: "key_admin", decidedAt: 2_000 } });
      // A decided key lives its lifetime from the decision: the rejected one's a minute past it, the other's long gone.
      expect(journal.expireKeys(60_000, decidedAt + 30_000)).toBe(1);
      expect(journal.findByKey("rejected")).toBeDefined();
      expect(journal.expireKeys(60_000, decidedAt + 61_000)).toBe(1);
      expect(journal.findByKey("rejected")).toBeUndefined();
    });

    it("takes an awaiting approval only on its own network", () => {
      const waiting = journal.requestApproval("on-31337", REQUEST, steadyWallClockNow() + 3_600_000);
      if (waiting.outcome !== "claimed") throw new Error("expected a new entry");
      expect(journal.forNetwork(137n, POLYGON_TOKEN).takeApproved(waiting.entryId, "key_admin", 1)).toBe(false);
      expect(journal.takeApproved(waiting.entryId, "key_admin", 1)).toBe(true);
    });

    it("keeps the address book across a reopen (a restart, a new leader): each entry once, a removal for good, every change in the audit log", async () => {
      const entry = { address: REQUEST.recipient, label: "supplier", addedBy: "key_admin", addedAt: 1_000, effectiveAt: 2_000 };
      expect(journal.addressBook.add(entry)).toBe(true);
      expect(journal.addressBook.add({ ...entry, label: "again" })).toBe(false);
      const other = { ...entry, address: "0x90F79bf6EB2c4f870365E785982E1f101E93b906", label: null };
      expect(journal.forNetwork(8453n, OWNER.tokenAddress).addressBook.add(other)).toBe(true);
      await journal.flushed();
      await reopen();
      expect(journal.addressBook.entries()).toEqual([entry, other]);
      expect(journal.addressBook.remove(other.address, "key_second", 3_000)).toEqual(other);
      expect(journal.addressBook.remove(other.address, "key_second", 3_000)).toBeUndefined();
      await journal.flushed();
      await reopen();
      expect(journal.addressBook.entries()).toEqual([entry]);
      const audited = (await journal.auditEntries({ before: Number.MAX_SAFE_INTEGER }, 50)).filter((row) => row.kind.startsWith("operator.address_book"));
      expect(audited.map((row) => [row.kind, row.actor, JSON.parse(row.detail).address]).reverse()).toEqual([
        ["operator.address_book_added", "key_admin", entry.address],
        ["operator.address_book_added", "key_admin", other.address],
        ["operator.address_book_removed", "key_second", other.address],
      ]);
    });
  });

  describe("payout items", () => {
    it("keeps a payout batch's items, and holds their ids for its API key from the claim on, across a reopen", async () => {
      const payout = {
        contract: OTHER_LANE,
        items: [
          { id: "invoice-1", recipient: REQUEST.recipient, units: 5n },
          { id: "invoice-2", recipient: OTHER_LANE, units: 7n },
          { id: "invoice-0", recipient: OTHER_LANE, units: 1n, duplicateOf: 99 },
        ],
      };
      const batch = { recipient: OTHER_LANE, units: 12n, apiKeyId: "key-a", payout };
      const claim = journal.claimKey("key-a/batch-1", batch);
      if (claim.outcome !== "claimed") throw new Error("expected a claim");
      journal.recordSigned(claim.entryId, batch, SIGNED);
      await reopen();
      expect(journal.findByKey("key-a/batch-1")).toMatchObject({ id: claim.entryId, units: 12n, payout });
      // A duplicate is not the batch's: the batch that holds it (99 here) does.
      expect(await journal.payoutItemsHeld("key-a", ["invoice-1", "invoice-2", "invoice-0", "invoice-3"])).toEqual(
        new Map([
          ["invoice-1", claim.entryId],
          ["invoice-2", claim.entryId],
        ]),
      );
      // Item ids are per API key.
      expect((await journal.payoutItemsHeld("key-b", ["invoice-1"])).size).toBe(0);
      // The same key again answers the batch, whose ids it holds itself.
      expect(journal.claimKey("key-a/batch-1", batch)).toMatchObject({ outcome: "existing", entry: { id: claim.entryId } });
    });

    it("keeps a batch's item ids after retention archived the batch, and after a reopen that does not hold it (a new leader asks the shared database)", async () => {
      const batch = { recipient: OTHER_LANE, units: 3n, apiKeyId: "key-a", payout: { contract: OTHER_LANE, items: [{ id: "kept", recipient: REQUEST.recipient, units: 3n }] } };
      const claim = journal.claimKey("key-a/archived-batch", batch);
      if (claim.outcome !== "claimed") throw new Error("expected a claim");
      journal.recordSigned(claim.entryId, batch, SIGNED);
      journal.forgetArchived([claim.entryId]);
      await reopen();
      expect(journal.findById(claim.entryId)).toBeUndefined();
      expect(await journal.payoutItemsHeld("key-a", ["kept", "other"])).toEqual(new Map([["kept", claim.entryId]]));
    });

    it("refuses a payout claim whole when another batch took one of its item ids meanwhile; a refused or released batch frees its ids", async () => {
      const order = (ids: string[]) => ({ contract: OTHER_LANE, items: ids.map((id) => ({ id, recipient: REQUEST.recipient, units: 1n })) });
      const batchOf = (ids: string[]) => ({ recipient: OTHER_LANE, units: BigInt(ids.length), apiKeyId: "key-a", payout: order(ids) });
      const first = journal.claimKey("key-a/first", batchOf(["a", "b"]));
      expect(() => journal.claimKey("key-a/second", batchOf(["c", "b"]))).toThrow(PayoutItemsTakenError);
      // Nothing of the second was claimed: neither its key nor its other item.
      expect(journal.findByKey("key-a/second")).toBeUndefined();
      expect((await journal.payoutItemsHeld("key-a", ["c"])).size).toBe(0);
      if (first.outcome !== "claimed") throw new Error("expected a claim");
      journal.recordRefused(first.entryId, { code: "INSUFFICIENT_TOKEN_BALANCE", message: "not enough" });
      const third = journal.claimKey("key-a/third", batchOf(["a"]));
      if (third.outcome !== "claimed") throw new Error("expected a claim");
      expect(journal.releaseKey(third.entryId)).toBe(true);
      await reopen();
      expect((await journal.payoutItemsHeld("key-a", ["a", "b", "c"])).size).toBe(0);
      expect(journal.claimKey("key-a/fourth", batchOf(["a", "b"])).outcome).toBe("claimed");
    });
  });

  describe("outflows and the signing pause", () => {
    it("keeps the head of the outflow watch's first check per network, the first one only, across a reopen", async () => {
      const other = journal.forNetwork(8453n, OWNER.tokenAddress);
      expect(journal.outflowWatchStart()).toBeUndefined();
      journal.recordOutflowWatchStart(120);
      journal.recordOutflowWatchStart(130);
      other.recordOutflowWatchStart(7);
      await reopen();
      expect(journal.outflowWatchStart()).toBe(120);
      expect(journal.forNetwork(8453n, OWNER.tokenAddress).outflowWatchStart()).toBe(7);
    });

    it("keeps where the outflow watch got to per network across a reopen (a restart, a new leader), the latest kept", async () => {
      const other = journal.forNetwork(8453n, OWNER.tokenAddress);
      expect(journal.outflowWatchProgress()).toBeUndefined();
      journal.recordOutflowWatchStart(120);
      journal.recordOutflowWatchProgress({ logsReadTo: 130, noncesCheckedBelow: { [OWNER.walletAddress]: 4 } });
      journal.recordOutflowWatchProgress({ logsReadTo: 140, noncesCheckedBelow: { [OWNER.walletAddress]: 6 } });
      // A network whose start was not kept yet: its progress keeps one.
      other.recordOutflowWatchProgress({ logsReadTo: 9, noncesCheckedBelow: {} });
      await reopen();
      expect(journal.outflowWatchProgress()).toEqual({ logsReadTo: 140, noncesCheckedBelow: { [OWNER.walletAddress]: 6 } });
      expect(journal.outflowWatchStart()).toBe(120);
      expect(journal.forNetwork(8453n, OWNER.tokenAddress).outflowWatchProgress()).toEqual({ logsReadTo: 9, noncesCheckedBelow: {} });
      expect(journal.forNetwork(8453n, OWNER.tokenAddress).outflowWatchStart()).toBe(9);
    });

    it("journals each unexpected outflow once, also across a reopen (a restart, a new leader)", async () => {
      const outflow = { chainId: "31337", hash: `0x${"ab".repeat(32)}`, logIndex: null, logKey: null, wallet: REQUEST.recipient, blockNumber: 7, detectedAt: 1_000 };
      expect(journal.recordOutflow(outflow)).toBe(true);
      expect(journal.recordOutflow({ ...outflow, detectedAt: 2_000 })).toBe(false);
      // The same transaction's token Transfer is another outflow; so is the same hash on another chain.
      expect(journal.recordOutflow({ ...outflow, logIndex: 0, logKey: "0xtoken:0xwallet:0xthief:7#0" })).toBe(true);
      await reopen();
      expect(journal.recordOutflow(outflow)).toBe(false);
      expect(journal.recordOutflow({ ...outflow, logIndex: 0, logKey: "0xtoken:0xwallet:0xthief:7#0" })).toBe(false);
      expect(journal.recordOutflow({ ...outflow, chainId: "8453" })).toBe(true);
      await reopen();
      expect(journal.recordOutflow({ ...outflow, chainId: "8453" })).toBe(false);
    });

    it("journals a token outflow once when a reorganisation mines its transaction in another block, at another log index; its second Transfer is another", async () => {
      const outflow = { chainId: "31337", hash: `0x${"cd".repeat(32)}`, logIndex: 3, logKey: "0xtoken:0xwallet:0xthief:7#0", wallet: REQUEST.recipient, blockNumber: 7, detectedAt: 1_000 };
      expect(journal.recordOutflow(outflow)).toBe(true);
      expect(journal.recordOutflow({ ...outflow, logIndex: 4, logKey: "0xtoken:0xwallet:0xthief:7#1" })).toBe(true);
      await reopen();
      expect(journal.recordOutflow({ ...outflow, logIndex: 9, blockNumber: 8 })).toBe(false);
      expect(journal.recordOutflow({ ...outflow, logIndex: 10, logKey: "0xtoken:0xwallet:0xthief:7#1", blockNumber: 8 })).toBe(false);
      // A row an earlier version kept (no log key) still stands for its log index.
      const earlier = { ...outflow, hash: `0x${"ef".repeat(32)}`, logKey: null };
      expect(journal.recordOutflow(earlier)).toBe(true);
      expect(journal.recordOutflow({ ...earlier, logKey: "0xtoken:0xwallet:0xthief:7#0" })).toBe(false);
    });

    it("keeps a pause of signing no admin ended across a reopen, with the outflows reported during it, and no longer once it was resumed", async () => {
      expect(journal.signingPause()).toBeUndefined();
      const pause = { since: 1_000, reason: "an unexpected outflow", hash: "0xab", latestHash: "0xab", outflows: 1 };
      journal.recordSigningPaused(pause);
      await reopen();
      expect(journal.signingPause()).toEqual(pause);
      journal.recordSigningPaused({ ...pause, latestHash: "0xcd", outflows: 2 });
      await reopen();
      expect(journal.signingPause()).toEqual({ ...pause, latestHash: "0xcd", outflows: 2 });
      journal.recordSigningResumed("admin-1", 2_000);
      await reopen();
      expect(journal.signingPause()).toBeUndefined();
      const next = { since: 3_000, reason: "another", hash: null, latestHash: null, outflows: 1 };
      journal.recordSigningPaused(next);
      await reopen();
      expect(journal.signingPause()).toEqual(next);
    });
  });

  describe("the audit log", () => {
    it("enters every state change and attempt in the audit log, sealed in its commit and chained, across a reopen (a new leader chains on)", async () => {
      const claim = journal.claimKey("audited", { ...REQUEST, apiKeyId: "key_client" });
      if (claim.outcome !== "claimed") throw new Error("expected a claim");
      journal.recordSigned(claim.entryId, REQUEST, SIGNED);
      journal.recordAccepted(claim.entryId);
      journal.recordAudit({ kind: "operator.cancel", actor: "key_admin", transferId: claim.entryId, detail: { hash: SIGNED.hash } });
      await journal.flushed();
      const before = await journal.auditEntries({ after: 0 }, 100);
      expect(before.map((row) => [row.kind, row.transfer_id, row.actor])).toEqual([
        ["transfer.claimed", claim.entryId, null],
        ["transfer.signed", claim.entryId, null],
        ["attempt.transfer", claim.entryId, null],
        ["transfer.accepted", claim.entryId, null],
        ["operator.cancel", claim.entryId, "key_admin"],
      ]);
      expect(JSON.parse(before[1].detail)).toMatchObject({ from: "claimed", state: "signed", nonce: SIGNED.nonce, hash: SIGNED.hash });
      await reopen();
      journal.markNonceUsedBelow(SIGNED.nonce + 1);
      // A claim dropped unsigned (its key freed) is entered too.
      const dropped = journal.claimKey("dropped", REQUEST);
      if (dropped.outcome !== "claimed") throw new Error("expected a claim");
      journal.releaseKey(dropped.entryId);
      await journal.flushed();
      const all = await journal.auditEntries({ after: 0 }, 100);
      expect(all.map((row) => row.kind)).toEqual([...before.map((row) => row.kind), "transfer.nonce-used", "transfer.claimed", "transfer.released"]);
      const check = new AuditChainCheck();
      for (const row of all) expect(check.check(row)).toBeUndefined();
      expect(check.checked).toBe(8);
      // Pages after a cursor, oldest first; before one, newest first.
      expect((await journal.auditEntries({ after: all[3].seq }, 2)).map((row) => row.seq)).toEqual([all[4].seq, all[5].seq]);
      expect((await journal.auditEntries({ before: all[3].seq }, 2)).map((row) => row.seq)).toEqual([all[2].seq, all[1].seq]);
      expect((await journal.auditEntries({ before: Number.MAX_SAFE_INTEGER }, 3)).map((row) => row.seq)).toEqual([all[7].seq, all[6].seq, all[5].seq]);
      expect(await journal.auditEntries({ before: all[0].seq }, 3)).toEqual([]);
    });

    it("reads only committed audit entries: not those of the transaction still open, which may yet be undone", async () => {
      const claim = journal.claimKey("audit-open", REQUEST);
      if (claim.outcome !== "claimed") throw new Error("expected a claim");
      await journal.flushed();
      const committed = await journal.auditEntries({ after: 0 }, 100);
      journal.recordSigned(claim.entryId, REQUEST, SIGNED);
      // Asked in the same turn as the write, before its commit (and seal): what is read is committed, sealed.
      const whileOpen = await Promise.all([journal.auditEntries({ after: 0 }, 100), journal.auditEntries({ before: Number.MAX_SAFE_INTEGER }, 100)]);
      await journal.flushed();
      const after = await journal.auditEntries({ after: 0 }, 100);
      expect(after.slice(committed.length).map((row) => row.kind)).toEqual(["transfer.signed", "attempt.transfer"]);
      for (const [index, rows] of whileOpen.entries()) {
        expect(rows.every((row) => row.hash !== null)).toBe(true);
        expect(rows.length).toBeGreaterThanOrEqual(committed.length);
        expect(index === 0 ? rows : [...rows].reverse()).toEqual(after.slice(0, rows.length));
      }
      expect(after.every((row) => row.hash !== null)).toBe(true);
    });

    it("enters bytes dropped for a fresh nonce and a refused transfer's key freed, not a key's expiry", async () => {
      const resigned = journal.claimKey("resigned", REQUEST);
      const refused = journal.claimKey("refused-then-freed", REQUEST);
      const expired = journal.claimKey("expired-later", REQUEST);
      if (resigned.outcome !== "claimed" || refused.outcome !== "claimed" || expired.outcome !== "claimed") throw new Error("expected claims");
      journal.recordSigned(resigned.entryId, REQUEST, SIGNED);
      const fresh = { ...SIGNED, nonce: SIGNED.nonce + 1, hash: `0x${"cd".repeat(32)}` };
      journal.recordSigned(resigned.entryId, REQUEST, fresh);
      journal.recordRefused(refused.entryId, { code: "INSUFFICIENT_FUNDS", message: "no gas" });
      journal.recordRefused(expired.entryId, { code: "INSUFFICIENT_FUNDS", message: "no gas" });
      expect(journal.releaseRefusedKey(refused.entryId)).toBe(true);
      await journal.flushed();
      const seen = (await journal.auditEntries({ after: 0 }, 100)).length;
      expect(journal.expireKeys(0, steadyWallClockNow() + 1_000)).toBeGreaterThan(0);
      await journal.flushed();
      const entries = await journal.auditEntries({ after: 0 }, 100);
      expect(entries).toHaveLength(seen);
      const of = (id: number) => entries.filter((row) => row.transfer_id === id).map((row) => [row.kind, JSON.parse(row.detail)]);
      expect(of(resigned.entryId)).toEqual([
        ["transfer.claimed", expect.anything()],
        ["transfer.signed", expect.anything()],
        ["attempt.transfer", { hash: SIGNED.hash, signedAtBlock: SIGNED.signedAtBlock }],
        ["attempt.dropped", { hash: SIGNED.hash, kind: "transfer" }],
        ["attempt.transfer", { hash: fresh.hash, signedAtBlock: fresh.signedAtBlock }],
      ]);
      expect(of(refused.entryId).map(([kind]) => kind)).toEqual(["transfer.claimed", "transfer.refused", "transfer.key-released"]);
      expect(of(expired.entryId).map(([kind]) => kind)).toEqual(["transfer.claimed", "transfer.refused"]);
      expect(JSON.stringify(entries)).not.toContain("refused-then-freed");
    });
  });

  describe("the webhook outbox", () => {
    it("reports a reorganisation of any outcome: confirmed, failed and cancelled transfers that are pending again", async () => {
      journal.close();
      journal = await store.open(OWNER, { notify: true });
      const reported = (["transfer.confirmed", "transfer.failed", "transfer.cancelled"] as const).map((type, index) => {
        const id = journal.recordSigned(undefined, REQUEST, { ...SIGNED, nonce: index, hash: `0x${String(index + 1).repeat(64)}` });
        journal.recordAccepted(id);
        journal.recordEvent({ id: `msg_${index}`, type, entryId: id, body: "{}" }, [], type);
        return id;
      });
      journal.markNonceUsedBelow(3);
      expect(journal.reportedButUnmined()).toEqual([]);
      expect(journal.markUnminedFrom(0, 100)).toBe(3);
      expect(journal.reportedButUnmined().map((entry) => entry.id)).toEqual(reported);
    });

    it("keeps webhook events and their deliveries, in order, across a reopen", async () => {
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      journal.recordEvent({ id: "msg_1", type: "transfer.confirmed", entryId: id, body: "{}" }, ["https://a.example/hook", "https://b.example/hook"], "transfer.confirmed");
      journal.recordEvent({ id: "msg_2", type: "transfer.reorged", entryId: id, body: "{}" }, ["https://a.example/hook"]);
      const [first] = journal.dueDeliveries(steadyWallClockNow() + 1, 10, new Set());
      journal.recordDeliveryAttempt(first.id, { state: "delivered", lastStatus: "200", nextAttemptAt: 0 });
      await reopen();
      expect((await journal.deliveries("delivered", 10)).map((delivery) => [delivery.eventId, delivery.endpoint])).toEqual([["msg_1", "https://a.example/hook"]]);
      expect(journal.dueDeliveries(steadyWallClockNow() + 1, 10, new Set()).map((delivery) => [delivery.eventId, delivery.endpoint])).toEqual([
        ["msg_1", "https://b.example/hook"],
        ["msg_2", "https://a.example/hook"],
      ]);
      expect(journal.findByHash(SIGNED.hash)?.reported).toBe("transfer.confirmed");
    });

    it("delivers events of no transfer at once, behind no other event, across a reopen", async () => {
      const id = journal.recordSigned(undefined, REQUEST, SIGNED);
      const endpoint = "https://a.example/hook";
      journal.recordEvent({ id: "msg_transfer", type: "transfer.confirmed", entryId: id, body: "{}" }, [endpoint], "transfer.confirmed");
      journal.recordEvent({ id: "msg_outflow_1", type: "wallet.unexpected_outflow", entryId: null, body: '{"n":1}' }, [endpoint]);
      journal.recordEvent({ id: "msg_outflow_2", type: "wallet.unexpected_outflow", entryId: null, body: '{"n":2}' }, [endpoint]);
      const due = () => journal.dueDeliveries(steadyWallClockNow() + 1, 10, new Set());
      journal.recordEvent({ id: "msg_transfer_2", type: "transfer.finalized", entryId: id, body: "{}" }, [endpoint]);
      // A transfer's second event waits for its first; the outflows wait for nothing.
      expect(due().map((delivery) => [delivery.eventId, delivery.entryId])).toEqual([
        ["msg_transfer", id],
        ["msg_outflow_1", null],
        ["msg_outflow_2", null],
      ]);
      await reopen();
      const [, first] = due();
      expect(first).toMatchObject({ eventId: "msg_outflow_1", type: "wallet.unexpected_outflow", body: '{"n":1}' });
      journal.recordDeliveryAttempt(first.id, { state: "failed", lastStatus: "400", nextAttemptAt: 0 });
      await reopen();
      expect(due().map((delivery) => delivery.eventId)).toEqual(["msg_transfer", "msg_outflow_2"]);
      expect((await journal.deliveries("failed", 10)).map((delivery) => delivery.eventId)).toEqual(["msg_outflow_1"]);
    });
  });

  describe("retention and keys", () => {
    it("frees the key of a refused or rejected entry (nothing sent), never of a signed or accepted one, across a reopen", async () => {
      const claims = ["refused", "rejected", "accepted"].map((key) => [key, journal.claimKey(key, REQUEST)] as const);
      const ids = Object.fromEntries(claims.map(([key, claim]) => [key, claim.outcome === "claimed" ? claim.entryId : -1]));
      journal.recordRefused(ids.refused, { code: "INSUFFICIENT_FUNDS", message: "no gas" });
      journal.recordSigned(ids.rejected, REQUEST, SIGNED);
      journal.recordRejected(ids.rejected, { code: "INSUFFICIENT_FUNDS", message: "no gas" });
      journal.recordSigned(ids.accepted, REQUEST, { ...SIGNED, nonce: 8, hash: `0x${"cd".repeat(32)}` });
      journal.recordAccepted(ids.accepted);
      expect([ids.refused, ids.rejected, ids.accepted].map((id) => journal.releaseRefusedKey(id))).toEqual([true, true, false]);
      await reopen();
      expect(journal.findByKey("refused")).toBeUndefined();
      expect(journal.claimKey("rejected", REQUEST).outcome).toBe("claimed");
      expect(journal.findByKey("accepted")).toMatchObject({ id: ids.accepted, state: "accepted" });
    });

    it("forgets keys past their lifetime but keeps the entries", () => {
      journal.claimKey("old", REQUEST);
      expect(journal.expireKeys(60_000, steadyWallClockNow() + 61_000)).toBe(1);
      expect(journal.claimKey("old", REQUEST).outcome).toBe("claimed");
      expect(journal.expireKeys(60_000)).toBe(0);
    });

    it("forgets a backlog of keys a bounded number at a time, the rest in later calls", () => {
      for (let index = 0; index < KEYS_EXPIRED_PER_CALL + 5; index++) journal.claimKey(`backlog-${index}`, REQUEST);
      const later = steadyWallClockNow() + 61_000;
      expect(journal.expireKeys(60_000, later)).toBe(KEYS_EXPIRED_PER_CALL);
      expect(journal.expireKeys(60_000, later)).toBe(5);
      expect(journal.expireKeys(60_000, later)).toBe(0);
      expect(journal.claimKey(`backlog-${KEYS_EXPIRED_PER_CALL + 4}`, REQUEST).outcome).toBe("claimed");
    });

    it("moves a key from an expired entry to a new one and drops released claims, across a reopen", async () => {
      journal.claimKey("reused", REQUEST);
      journal.expireKeys(60_000, steadyWallClockNow() + 61_000);
      const claim = journal.claimKey("reused", REQUEST);
      const released = journal.claimKey("released", REQUEST);
      if (claim.outcome !== "claimed" || released.outcome !== "claimed") throw new Error("expected claims");
      journal.releaseKey(released.entryId);
      await reopen();
      expect(journal.claimKey("reused", REQUEST)).toMatchObject({ outcome: "existing", entry: { id: claim.entryId } });
      expect(journal.claimKey("released", REQUEST).outcome).toBe("claimed");
    });
  });
});

/** A journal written by the service before wallet pools: one wallet, no lanes (see the file's header). */
const ONE_WALLET_JOURNAL = readFileSync(new URL("fixtures/one-wallet-journal.sql", import.meta.url), "utf8");

/** What a one-wallet journal must read as once migrated: every transfer is its wallet's, nothing else changed. */
async function expectMigratedOneWalletJournal(journal: TransferJournal): Promise<void> {
  expect(journal.lanesWithUnsettled()).toEqual([OWNER.walletAddress]);
  expect(journal.unsettled()).toEqual([expect.objectContaining({ id: 2, lane: OWNER.walletAddress, idempotencyKey: "order-1", state: "accepted", nonce: 1 })]);
  expect(journal.findById(1)).toMatchObject({ lane: OWNER.walletAddress, state: "nonce-used", finalBlock: 11, reported: "transfer.confirmed" });
  expect(journal.claimKey("order-2", REQUEST)).toMatchObject({ outcome: "existing", entry: { lane: OWNER.walletAddress, state: "refused", refusal: { code: "INSUFFICIENT_TOKEN_BALANCE" } } });
  expect((await journal.deliveries("pending", 10)).map((delivery) => delivery.eventId)).toEqual(["msg_a"]);
  expect(journal.spentSince(0).map((spent) => spent.apiKeyId)).toEqual(["k1", "k1"]);
  // Another wallet added beside it starts with nothing of its own.
  expect(journal.forLane(OTHER_LANE).unsettled()).toEqual([]);
}

describe("a one-wallet journal, migrated in place to lanes", () => {
  it("on SQLite", async () => {
    const dir = mkdtempSync(join(tmpdir(), "journal-test-"));
    const path = join(dir, "transfers.sqlite");
    const db = openKeptDatabase(path);
    db.exec(ONE_WALLET_JOURNAL);
    db.close();
    let journal = openSqliteJournal(path, OWNER);
    await expectMigratedOneWalletJournal(journal);
    // Its webhook_events required a transfer id: made again without that, an event of no transfer is kept.
    journal.recordEvent({ id: "msg_wallet", type: "wallet.unexpected_outflow", entryId: null, body: "{}" }, ["https://hooks.example/a"]);
    await journal.flushed();
    journal.close();
    // The earlier version run again (a rollback) writes a row without a lane: it is its one wallet's,
    // whichever key comes first when this version opens the journal again.
    const rolledBack = openKeptDatabase(path);
    rolledBack.exec("UPDATE transfers SET lane = NULL, chain_id = NULL, token = NULL WHERE id = 2");
    rolledBack.close();
    journal = openSqliteJournal(path, { ...OWNER, walletAddress: OTHER_LANE });
    expect(journal.findById(2)?.lane).toBe(OWNER.walletAddress);
    expect(() => refuseUnfollowedLanes(journal, [OTHER_LANE])).toThrow(OWNER.walletAddress);
    // Every row names the network and token it was made on: the owner's, for rows made before they were
    // recorded, and for new ones (one network and token a journal, for now).
    journal.claimKey("after-the-migration", REQUEST);
    journal.recordSigned(undefined, REQUEST, { nonce: 9, hash: `0x${"9".repeat(64)}`, rawTransaction: "0x02f8", signedAtBlock: 1 });
    journal.close();
    const migrated = openKeptDatabase(path, { readonly: true });
    expect(migrated.prepare("SELECT DISTINCT chain_id, token FROM transfers").all()).toEqual([{ chain_id: OWNER.chainId.toString(), token: OWNER.tokenAddress }]);
    expect(migrated.prepare("SELECT COUNT(*) AS rows FROM transfers").get()).toEqual({ rows: 5 });
    // The events kept their sequence, deliveries still reference them, and the table still references transfers.
    expect(migrated.prepare("SELECT seq, id, transfer_id FROM webhook_events ORDER BY seq").all()).toEqual([
      { seq: 1, id: "msg_a", transfer_id: 1 },
      { seq: 2, id: "msg_wallet", transfer_id: null },
    ]);
    expect(migrated.prepare("SELECT event_seq FROM webhook_deliveries ORDER BY id").pluck().all()).toEqual([1, 2]);
    expect(migrated.prepare("PRAGMA foreign_key_check").all()).toEqual([]);
    expect(migrated.prepare("SELECT sql FROM sqlite_master WHERE name = 'webhook_events'").pluck().get()).toMatch(/transfer_id INTEGER REFERENCES transfers \(id\),/);
    // The index of the current hash is gone (nothing read along it); a hash is still found, through the attempts.
    expect(migrated.prepare("SELECT name FROM sqlite_master WHERE name = 'transfers_hash'").all()).toEqual([]);
    migrated.close();
    journal = openSqliteJournal(path, OWNER);
    expect((await journal.lookUpByHash(`0x${"9".repeat(64)}`))?.nonce).toBe(9);
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("on PostgreSQL", async () => {
    postgres ??= await startTestPostgres();
    const url = await postgres.createDatabase();
    const session = new pg.Client(postgresOptions(url));
    const pool = testPool(url);
    const reads = postgresJournalReader(pool);
    await session.connect();
    try {
      // The database as the service left it: its migrations then, and its rows.
      await session.query("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())");
      for (const migration of POSTGRES_MIGRATIONS.filter(({ version }) => version <= 2)) {
        await session.query(migration.sql);
        await session.query("INSERT INTO schema_migrations (version) VALUES ($1)", [migration.version]);
      }
      for (const insert of ONE_WALLET_JOURNAL.split("\n").filter((line) => line.startsWith("INSERT"))) await session.query(insert);
      expect(await migrateDatabase(session)).toEqual(POSTGRES_MIGRATIONS.filter(({ version }) => version > 2).map(({ version }) => version));
      let journal = await openPostgresJournal(session, OWNER, { reads });
      await expectMigratedOneWalletJournal(journal);
      journal.close();
      // Rows made before networks and tokens were recorded are the owner's, without a rewrite of the table.
      expect((await session.query("SELECT DISTINCT chain_id, token FROM transfers")).rows).toEqual([{ chain_id: OWNER.chainId.toString(), token: OWNER.tokenAddress }]);
      // An older leader writes a row without a lane (or network, or token): it is the owner's, whoever leads next.
      await session.query("UPDATE transfers SET lane = NULL, chain_id = NULL, token = NULL WHERE id = 2");
      journal = await openPostgresJournal(session, { ...OWNER, walletAddress: OTHER_LANE }, { reads });
      expect(journal.findById(2)?.lane).toBe(OWNER.walletAddress);
      // New rows name them too; the repaired row reaches the database with the next commit.
      journal.recordSigned(undefined, REQUEST, { nonce: 9, hash: `0x${"9".repeat(64)}`, rawTransaction: "0x02f8", signedAtBlock: 1 });
      await journal.flushed();
      expect((await session.query("SELECT DISTINCT chain_id, token FROM transfers")).rows).toEqual([{ chain_id: OWNER.chainId.toString(), token: OWNER.tokenAddress }]);
      journal.close();
    } finally {
      await pool.end();
      await session.end();
    }
  });
});

describe("the SQLite transfer journal of an earlier version", () => {
  it("gives a journal without attempts one attempt per signed transfer", () => {
    const dir = mkdtempSync(join(tmpdir(), "journal-test-"));
    const path = join(dir, "transfers.sqlite");
    let journal = openSqliteJournal(path, OWNER);
    const id = journal.recordSigned(undefined, REQUEST, SIGNED);
    journal.close();
    const db = openKeptDatabase(path);
    db.exec("DROP TABLE attempts; PRAGMA user_version = 0;");
    db.close();
    journal = openSqliteJournal(path, OWNER);
    expect(journal.findByHash(SIGNED.hash)).toMatchObject({ id, attempts: [{ hash: SIGNED.hash, kind: "transfer", signedAtBlock: 0 }] });
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("keeps the outflows an earlier version reported (no log key), and adds the log key of new ones", () => {
    const dir = mkdtempSync(join(tmpdir(), "journal-test-"));
    const path = join(dir, "transfers.sqlite");
    openSqliteJournal(path, OWNER).close();
    const db = openKeptDatabase(path);
    // wallet_outflows as the version before the log key made it, with one token outflow reported.
    db.exec(`DROP INDEX wallet_outflows_once_by_log_key; DROP TABLE wallet_outflows;
      CREATE TABLE wallet_outflows (id INTEGER PRIMARY KEY AUTOINCREMENT, chain_id TEXT NOT NULL, hash TEXT NOT NULL, log_index INTEGER NOT NULL,
        wallet TEXT NOT NULL, block_number INTEGER NOT NULL, detected_at INTEGER NOT NULL, UNIQUE (chain_id, hash, log_index));
      INSERT INTO wallet_outflows (chain_id, hash, log_index, wallet, block_number, detected_at) VALUES ('31337', '0xaa', 3, '0xbb', 7, 1000);`);
    db.close();
    const journal = openSqliteJournal(path, OWNER);
    const outflow = { chainId: "31337", hash: "0xaa", logIndex: 3, logKey: "0xtoken:0xwallet:0xthief:7#0", wallet: "0xbb", blockNumber: 7, detectedAt: 2_000 };
    expect(journal.recordOutflow(outflow)).toBe(false);
    expect(journal.recordOutflow({ ...outflow, logIndex: 8, blockNumber: 9 })).toBe(true);
    expect(journal.recordOutflow({ ...outflow, logIndex: 12, blockNumber: 10 })).toBe(false);
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
