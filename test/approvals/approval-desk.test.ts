/**
 * The approval desk over a real (in-memory) journal, with a sender that records what it is asked to send:
 * one decision per transfer whatever the order of approve, reject and expiry; the requester never decides;
 * what a refused send leaves behind; events journaled in the decision's commit.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApprovalDesk, type ApprovalNetwork } from "../../src/approvals/approval-desk.js";
import { ServiceError } from "../../src/errors.js";
import { openSqliteJournal } from "../../src/journal/sqlite-transfer-journal.js";
import { JournalUnavailableError, type TransferJournal, type TransferRequest } from "../../src/journal/transfer-journal.js";
import { servedNetworkOf } from "../../src/network-settings/network-choice.js";
import type { ApprovedTransfer, TransferSender } from "../../src/send-path/transfer-service.js";
import type { SignedTokenTransfer } from "../../src/send-path/wallet-transaction.js";
import { journalWith } from "../helpers/journal-overrides.js";
import { KeyHolders } from "../../src/auth/key-holders.js";

const OWNER = { chainId: 31337n, walletAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", tokenAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3" };
const REQUEST: TransferRequest = { recipient: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", units: 150n, apiKeyId: "key_asker", token: OWNER.tokenAddress };
const HOUR = 3_600_000;
const ENDPOINT = "https://hooks.example.com/transfers";
// What the transfer path answers a repeat of a key whose transfer awaits approval.
const TRANSFER_AWAITING = () => Promise.reject(new ServiceError("TRANSFER_AWAITING_APPROVAL", "awaits an admin's approval; nothing was sent"));

describe("the approval desk", () => {
  let journal: TransferJournal;
  let now: number;
  let sent: ApprovedTransfer[];
  let sendOutcome: (approved: ApprovedTransfer) => Promise<SignedTokenTransfer>;
  let desk: ApprovalDesk;
  let network: ApprovalNetwork;

  beforeEach(() => {
    journal = openSqliteJournal(":memory:", OWNER, { notify: true });
    now = Date.now();
    sent = [];
    sendOutcome = async () => ({ hash: `0x${"ab".repeat(32)}` }) as SignedTokenTransfer;
    const transfers: TransferSender = {
      sendTokenTransfer: () => Promise.reject(new Error("not asked of the desk")),
      sendApproved: async (approved) => {
        sent.push(approved);
        return sendOutcome(approved);
      },
    };
    const eventSource = { network: servedNetworkOf(undefined, { chainId: OWNER.chainId, tokenAddress: OWNER.tokenAddress }), tokens: [] };
    network = { journal, transfers, eventSource };
    desk = new ApprovalDesk(journal, { ttlMs: HOUR, holders: KeyHolders.NONE, endpoints: [ENDPOINT], onEvent: () => undefined, eventSourceOf: () => eventSource, now: () => now });
  });
  afterEach(() => journal.close());

  // Oldest first: the deliveries of the transfer's events to the one endpoint.
  const eventsOf = async (id: number) => (await journal.deliveriesOf(id, 100)).map((delivery) => delivery.type).reverse();
  const ask = async (key?: string) => (await desk.request(network, REQUEST, key, () => undefined))?.entry.id as number;
  const approve = (id: number, by: string) => desk.approve(id, by, () => network, () => () => () => undefined);

  it("journals a request with its event; a repeat of its key answers it again; the policy is asked of a new request only", async () => {
    let checks = 0;
    const first = await desk.request(network, REQUEST, "key_asker/k1", () => void checks++);
    const repeat = await desk.request(network, REQUEST, "key_asker/k1", () => void checks++);
    expect(first).toMatchObject({ replayed: false, entry: { state: "awaiting-approval", approval: { expiresAt: now + HOUR } } });
    expect(repeat).toMatchObject({ replayed: true, entry: { id: first?.entry.id } });
    expect(checks).toBe(1);
    expect(await eventsOf(first?.entry.id as number)).toEqual(["transfer.awaiting_approval"]);
    await expect(desk.request(network, { ...REQUEST, units: 151n }, "key_asker/k1", () => undefined)).rejects.toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" });
  });

  it("below the threshold: the transfer path answers, unless it refuses a key still waiting, which gets its wait again; one decided meanwhile is sent again for its answer as it now stands", async () => {
    const waiting = TRANSFER_AWAITING;
    const sends: string[] = [];
    const send = (answers: (() => Promise<string>)[]) => () => {
      sends.push("send");
      return (answers.shift() as () => Promise<string>)();
    };
    expect(await desk.sendUnlessWaiting(network, REQUEST, "key_asker/k7", send([async () => "record"]))).toEqual({ sent: "record" });
    await expect(desk.sendUnlessWaiting(network, REQUEST, "key_asker/k7", send([() => Promise.reject(new ServiceError("CALL_EXCEPTION", "reverts"))]))).rejects.toMatchObject({ code: "CALL_EXCEPTION" });

    const id = await ask("key_asker/k8");
    const again = await desk.sendUnlessWaiting(network, REQUEST, "key_asker/k8", send([waiting]));
    expect(again).toMatchObject({ awaiting: { replayed: true, entry: { id, state: "awaiting-approval" } } });

    // Past its time: expired as it is asked, then answered by the transfer path (its 417).
    now += HOUR + 1;
    const expired = await desk.sendUnlessWaiting(network, REQUEST, "key_asker/k8", send([waiting, async () => "refused for good"]));
    expect(expired).toEqual({ sent: "refused for good" });
    expect(journal.findById(id)).toMatchObject({ state: "refused", refusal: { code: "APPROVAL_EXPIRED" } });
    expect(sends).toHaveLength(5);
    expect(sent).toEqual([]);
  });

  it("expires at start what passed its time while the service was down, not a sweep later", async () => {
    const id = await ask("key_asker/k9");
    now += HOUR + 1;
    const failures: unknown[] = [];
    desk.start((error) => failures.push(error));
    await desk.stop();
    expect(journal.findById(id)).toMatchObject({ state: "refused", refusal: { code: "APPROVAL_EXPIRED" } });
    expect(await eventsOf(id)).toEqual(["transfer.awaiting_approval", "transfer.rejected"]);
    expect(failures).toEqual([]);
  });

  it("answers a repeat's 202 only once the first request's wait is durable: when that commit fails, both are 503, never a wait the journal lost", async () => {
    let failCommit!: (error: Error) => void;
    const commit = new Promise<void>((_resolve, reject) => (failCommit = reject));
    commit.catch(() => undefined);
    const failing = journalWith(journal, { flushed: () => commit });
    const eventSource = network.eventSource;
    desk = new ApprovalDesk(failing, { ttlMs: HOUR, holders: KeyHolders.NONE, endpoints: [], onEvent: () => undefined, eventSourceOf: () => eventSource, now: () => now });
    const onFailing = { ...network, journal: failing };
    const first = desk.request(onFailing, REQUEST, "key_asker/k0", () => undefined);
    const repeat = desk.request(onFailing, REQUEST, "key_asker/k0", () => undefined);
    let repeatSettled = false;
    repeat.then(
      () => (repeatSettled = true),
      () => (repeatSettled = true),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(repeatSettled).toBe(false);
    failCommit(new JournalUnavailableError(new Error("disk full")));
    await expect(first).rejects.toMatchObject({ code: "JOURNAL_UNAVAILABLE" });
    await expect(repeat).rejects.toMatchObject({ code: "JOURNAL_UNAVAILABLE" });
  });

  it("never lets the requester decide, and decides each transfer once: a second approval, a rejection after it, or an expiry find it decided", async () => {
    const id = await ask("key_asker/k2");
    await expect(approve(id, "key_asker")).rejects.toMatchObject({ code: "APPROVER_IS_REQUESTER" });
    await expect(desk.reject(id, "key_asker")).rejects.toMatchObject({ code: "APPROVER_IS_REQUESTER" });
    // The sender takes it (as a lane does) when it is asked to send it.
    sendOutcome = async (approved) => {
      expect(journal.takeApproved(approved.entry.id, approved.approver, now)).toBe(true);
      return { hash: `0x${"cd".repeat(32)}` } as SignedTokenTransfer;
    };
    await approve(id, "key_admin");
    expect(sent.map((approved) => [approved.entry.id, approved.approver])).toEqual([[id, "key_admin"]]);
    await expect(approve(id, "key_other")).rejects.toMatchObject({ code: "APPROVAL_DECIDED" });
    await expect(desk.reject(id, "key_other")).rejects.toMatchObject({ code: "APPROVAL_DECIDED" });
    now += 2 * HOUR;
    expect(await desk.expireDue()).toBe(0);
    expect(sent).toHaveLength(1);
  });

  it("counts the keys of one holder (API_KEY_HOLDERS) as one person: another key of the requester's holder may not decide, another person's may", async () => {
    const [alicesTransferKey, alicesAdminKey, bobsAdminKey] = ["key_0123456789ab", "key_aaaaaaaaaaaa", "key_bbbbbbbbbbbb"];
    const holders = KeyHolders.parse(`${alicesTransferKey}=alice, ${alicesAdminKey}=alice, ${bobsAdminKey}=bob`, [alicesTransferKey, alicesAdminKey, bobsAdminKey]);
    desk = new ApprovalDesk(journal, { ttlMs: HOUR, holders, endpoints: [ENDPOINT], onEvent: () => undefined, eventSourceOf: () => network.eventSource, now: () => now });
    const asked = await desk.request(network, { ...REQUEST, apiKeyId: alicesTransferKey }, `${alicesTransferKey}/k9`, () => undefined);
    const id = asked?.entry.id as number;
    await expect(approve(id, alicesAdminKey)).rejects.toMatchObject({ code: "APPROVER_IS_REQUESTER", message: expect.stringContaining("asked for by alice") });
    await expect(desk.reject(id, alicesAdminKey)).rejects.toMatchObject({ code: "APPROVER_IS_REQUESTER" });
    sendOutcome = async (approved) => {
      expect(journal.takeApproved(approved.entry.id, approved.approver, now)).toBe(true);
      return { hash: `0x${"ce".repeat(32)}` } as SignedTokenTransfer;
    };
    await approve(id, bobsAdminKey);
    expect(sent.map((approved) => [approved.entry.id, approved.approver])).toEqual([[id, bobsAdminKey]]);
  });

  it("reads API_KEY_HOLDERS strictly: each entry a key of API_KEYS, named once", () => {
    const ids = ["key_0123456789ab", "key_aaaaaaaaaaaa"];
    expect(KeyHolders.parse(undefined, ids).samePerson(ids[0], ids[1])).toBe(false);
    expect(KeyHolders.parse(`${ids[0]}=Alice Smith,${ids[1]}=Alice Smith`, ids).samePerson(ids[0], ids[1])).toBe(true);
    expect(() => KeyHolders.parse("key_cccccccccccc=carol", ids)).toThrow("entry 1 names key_cccccccccccc, which is none of API_KEYS's keys");
    expect(() => KeyHolders.parse(`${ids[0]}=a,${ids[0]}=b`, ids)).toThrow("entry 2 names key_0123456789ab again");
    expect(() => KeyHolders.parse("alice", ids)).toThrow("entry 1 is not <key id>=<holder>");
  });

  it("a rejection is final: refused with its reason, its event in the same commit, never sent", async () => {
    const id = await ask("key_asker/k3");
    const rejected = await desk.reject(id, "key_admin");
    expect(rejected).toMatchObject({ state: "refused", refusal: { code: "APPROVAL_REJECTED" }, approval: { decidedBy: "key_admin", decidedAt: now } });
    expect(await eventsOf(id)).toEqual(["transfer.awaiting_approval", "transfer.rejected"]);
    await expect(approve(id, "key_other")).rejects.toMatchObject({ code: "APPROVAL_DECIDED" });
    expect(sent).toEqual([]);
    // Its key's repeat is for the transfer path to answer (417 APPROVAL_REJECTED).
    expect(await desk.request(network, REQUEST, "key_asker/k3", () => undefined)).toBeUndefined();
  });

  it("expires what waited past its time, by the sweep or at the next look (approval or repeat); never what is still in time", async () => {
    const [swept, approvedLate, repeatedLate] = [await ask("key_asker/a"), await ask("key_asker/b"), await ask("key_asker/c")];
    now += HOUR / 2;
    const fresh = await ask("key_asker/d");
    now += HOUR / 2;
    await expect(approve(approvedLate, "key_admin")).rejects.toMatchObject({ code: "APPROVAL_DECIDED", message: expect.stringContaining("expired") });
    expect(await desk.request(network, REQUEST, "key_asker/c", () => undefined)).toBeUndefined();
    expect(await desk.expireDue()).toBe(1);
    for (const id of [swept, approvedLate, repeatedLate]) {
      expect(journal.findById(id)).toMatchObject({ state: "refused", refusal: { code: "APPROVAL_EXPIRED" }, approval: { decidedBy: "expiry" } });
      expect(await eventsOf(id)).toEqual(["transfer.awaiting_approval", "transfer.rejected"]);
    }
    expect(journal.findById(fresh)?.state).toBe("awaiting-approval");
    expect(sent).toEqual([]);
  });

  it("a refusal of the send reaches the client as transfer.rejected through the sender's callback", async () => {
    const id = await ask("key_asker/k4");
    sendOutcome = async (approved) => {
      journal.takeApproved(approved.entry.id, approved.approver, now);
      const refusal = new ServiceError("INSUFFICIENT_TOKEN_BALANCE", "short");
      journal.recordRefused(approved.entry.id, { code: refusal.code, message: refusal.message });
      approved.onRefused(approved.entry.id, refusal);
      throw refusal;
    };
    await expect(approve(id, "key_admin")).rejects.toMatchObject({ code: "INSUFFICIENT_TOKEN_BALANCE" });
    expect(await eventsOf(id)).toEqual(["transfer.awaiting_approval", "transfer.rejected"]);
    expect(journal.findById(id)).toMatchObject({ state: "refused", approval: { decidedBy: "key_admin" } });
  });

  it("holds at most APPROVALS_AWAITING_PER_KEY_MAX waiting transfers per API key, and APPROVALS_AWAITING_MAX in all: the next is 429 with nothing journaled", async () => {
    for (let index = 0; index < 100; index++) journal.requestApproval(undefined, REQUEST, now + HOUR);
    await expect(ask("key_asker/over")).rejects.toMatchObject({ code: "APPROVALS_FULL", statusCode: 429, message: expect.stringContaining("of this API key") });
    expect(journal.findByKey("key_asker/over")).toBeUndefined();
    // Another client is not held back by this one.
    expect((await desk.request(network, { ...REQUEST, apiKeyId: "key_other" }, "key_other/k", () => undefined))?.replayed).toBe(false);
    for (let index = 0; index < 899; index++) journal.requestApproval(undefined, { ...REQUEST, apiKeyId: `key_${index}` }, now + HOUR);
    await expect(desk.request(network, { ...REQUEST, apiKeyId: "key_third" }, "key_third/k", () => undefined)).rejects.toMatchObject({ code: "APPROVALS_FULL", message: expect.stringContaining("1000 transfers") });
  });

  it("an approval that finds the transfer expired (the sweep not run yet) takes nothing", () => {
    const waiting = journal.requestApproval(undefined, REQUEST, now + HOUR);
    if (waiting.outcome !== "claimed") throw new Error("expected a new entry");
    expect(journal.takeApproved(waiting.entryId, "key_admin", now + HOUR)).toBe(false);
    expect(journal.takeApproved(waiting.entryId, "key_admin", now + HOUR - 1)).toBe(true);
  });
});
