/**
 * Two-person approval (APPROVAL_ABOVE) on anvil and Hardhat Network: a transfer above the threshold waits
 * (202, nothing signed), the key that asked cannot approve it, another admin key can, and it is then paid
 * once; a rejected or expired one is never signed; its Idempotency-Key answers 202 while it waits (also
 * after a restart raised the threshold above it), then the record (or 417). Waiting transfers outlive a restart. The client hears of each by webhook.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { type Contract, Wallet, parseUnits } from "ethers";
import { afterAll, beforeAll, expect } from "vitest";
import { ApiKeyRing } from "../../src/auth/api-keys.js";
import { deployPayoutContract } from "../../src/dev/demo-chain.js";
import { eventSchema } from "../../src/webhooks/webhook-openapi.js";
import { TEST_API_KEY, type TestService, postJson, startService } from "../helpers/service.js";
import { type WebhookReceiver, startWebhookReceiver } from "../helpers/webhook-receiver.js";
import { NODE_KINDS, type TestChain, freshAddress, setEthBalance, startTestChainOn, tokenBalanceOf, waitForReceipt } from "../helpers/test-chain.js";
import { deployTestToken } from "../helpers/test-tokens.js";
import { waitUntil } from "../helpers/wait-until.js";
import { describe, it } from "../helpers/suites-side-by-side.js";

const SECOND_ADMIN_KEY = "second-admin-key-7d41c9e2";
const TRANSFER_KEY = "transfer-key-0e93b6a157";
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const keyIdOf = (key: string) => ApiKeyRing.parse(key).identify(key)?.id;

describe.each(NODE_KINDS)("two-person approval on %s", (kind) => {
  let chain: TestChain;
  let service: TestService;
  let receiver: WebhookReceiver;
  let journalDir: string;
  let settings: Record<string, string>;

  const decide = (id: number, decision: "approve" | "reject", key: string) =>
    service.app.inject({ method: "POST", url: `/transfers/${id}/${decision}`, headers: bearer(key) });
  const pendingNonce = () => chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
  const events = (type: string, id: number) =>
    receiver.received.map((delivery) => JSON.parse(delivery.body)).filter((event) => event.type === type && event.data.id === id);
  beforeAll(async () => {
    chain = await startTestChainOn(kind);
    receiver = await startWebhookReceiver();
    journalDir = mkdtempSync(join(tmpdir(), "journal-"));
    settings = {
      API_KEYS: `admin:${TEST_API_KEY},admin:${SECOND_ADMIN_KEY},transfer:${TRANSFER_KEY}`,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
      APPROVAL_ABOVE: "100",
      MAX_TRANSFER_AMOUNT: "1000",
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: `whsec_${randomBytes(32).toString("base64")}`,
    };
    service = await startService(chain.target, settings);
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    await chain?.stop();
    rmSync(journalDir, { recursive: true, force: true });
  });

  it("waits above the threshold with nothing signed; the key that asked cannot approve, another admin can; it is then paid once, and its key answers 202, then the record", async () => {
    const recipient = freshAddress();
    const nonceBefore = await pendingNonce();
    const asked = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "150" }, { "idempotency-key": "large-1" });
    expect(asked.statusCode, asked.raw).toBe(202);
    const { id } = asked.body;
    expect(asked.body).toMatchObject({ id: expect.any(Number), state: "awaiting_approval", toAddress: recipient, amount: "150", units: parseUnits("150", 18).toString(), decidedBy: null });
    // At the boundary itself no approval is needed.
    const atThreshold = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "100" });
    expect(atThreshold.statusCode, atThreshold.raw).toBe(200);
    expect(await pendingNonce()).toBe(nonceBefore + 1);

    // Listed, with its approval, for the console and the operators.
    const listed = (await service.app.inject({ method: "GET", url: "/transfers?state=awaiting_approval", headers: bearer(TEST_API_KEY) })).json().transfers;
    expect(listed.map((item: { id: number }) => item.id)).toEqual([id]);
    expect(listed[0]).toMatchObject({ state: "awaiting_approval", hash: null, approval: { expiresAt: asked.body.expiresAt, decidedBy: null, decidedAt: null } });

    // The client hears that it waits; the event is as its schema says.
    await waitUntil(async () => events("transfer.awaiting_approval", id).length === 1, 10_000, "transfer.awaiting_approval");
    const [waiting] = events("transfer.awaiting_approval", id);
    expect(Value.Errors(eventSchema("transfer.awaiting_approval"), waiting).First()).toBeUndefined();
    expect(waiting.data).toMatchObject({ recipient, idempotencyKey: "large-1", reason: null });

    const repeat = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "150" }, { "idempotency-key": "large-1" });
    expect([repeat.statusCode, repeat.body.id, repeat.headers["idempotent-replayed"]]).toEqual([202, id, "true"]);
    const reused = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "151" }, { "idempotency-key": "large-1" });
    expect([reused.statusCode, reused.body.code]).toEqual([422, "IDEMPOTENCY_KEY_REUSED"]);

    const byRequester = await decide(id, "approve", TEST_API_KEY);
    expect([byRequester.statusCode, byRequester.json().code]).toEqual([403, "APPROVER_IS_REQUESTER"]);
    const byTransferKey = await decide(id, "approve", TRANSFER_KEY);
    expect(byTransferKey.statusCode).toBe(403);
    expect(await pendingNonce()).toBe(nonceBefore + 1);
    expect(await tokenBalanceOf(chain, recipient)).toBe(0n);

    const approved = await decide(id, "approve", SECOND_ADMIN_KEY);
    expect(approved.statusCode, approved.body).toBe(200);
    const { hash } = approved.json().result;
    expect(approved.json().result.confirmations).toBe(0);
    await waitForReceipt(chain, hash, 10_000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("150", 18));

    const again = await decide(id, "approve", SECOND_ADMIN_KEY);
    expect([again.statusCode, again.json().code]).toEqual([409, "APPROVAL_DECIDED"]);
    const rejectLate = await decide(id, "reject", SECOND_ADMIN_KEY);
    expect([rejectLate.statusCode, rejectLate.json().code]).toEqual([409, "APPROVAL_DECIDED"]);
    const record = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "150" }, { "idempotency-key": "large-1" });
    expect([record.statusCode, record.body.result?.hash, record.headers["idempotent-replayed"]]).toEqual([200, hash, "true"]);
    // Paid once: one transaction more than the transfer at the threshold, and the recipient's balance unchanged.
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(nonceBefore + 2);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("150", 18));
    const [item] = (await service.app.inject({ method: "GET", url: `/transfers?limit=500`, headers: bearer(TEST_API_KEY) })).json().transfers.filter((listedItem: { id: number }) => listedItem.id === id);
    expect(item).toMatchObject({ state: expect.stringMatching(/^(pending|mined)$/), hash, approval: { decidedBy: expect.stringMatching(/^key_/), decidedAt: expect.any(String) } });
  });

  it("a rejected transfer is never signed: the requester's own admin key may not reject it, its key answers 417 APPROVAL_REJECTED, and its client hears transfer.rejected", async () => {
    const recipient = freshAddress();
    const nonceBefore = await pendingNonce();
    const asked = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "200" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-2" });
    expect(asked.statusCode, asked.raw).toBe(202);
    const { id } = asked.body;
    const rejected = await decide(id, "reject", SECOND_ADMIN_KEY);
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json()).toMatchObject({ id, state: "rejected", decidedBy: expect.stringMatching(/^key_/), decidedAt: expect.any(String) });

    const repeat = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "200" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-2" });
    expect([repeat.statusCode, repeat.body.code]).toEqual([417, "APPROVAL_REJECTED"]);
    const approveLate = await decide(id, "approve", TEST_API_KEY);
    expect([approveLate.statusCode, approveLate.json().code]).toEqual([409, "APPROVAL_DECIDED"]);
    await waitUntil(async () => events("transfer.rejected", id).length === 1, 10_000, "transfer.rejected");
    const [event] = events("transfer.rejected", id);
    expect(Value.Errors(eventSchema("transfer.rejected"), event).First()).toBeUndefined();
    expect(event.data.reason.code).toBe("APPROVAL_REJECTED");
    expect(await pendingNonce()).toBe(nonceBefore);
    expect(await tokenBalanceOf(chain, recipient)).toBe(0n);
    const listed = (await service.app.inject({ method: "GET", url: "/transfers?state=rejected&limit=5", headers: bearer(TEST_API_KEY) })).json().transfers;
    expect(listed.find((item: { id: number }) => item.id === id)).toMatchObject({ hash: null, refusal: { code: "APPROVAL_REJECTED" } });
  });

  it("the policy refuses a transfer above the threshold at once (403, nothing waits); a second admin key's own request is decided by the first", async () => {
    const waitingBefore = (await service.app.inject({ method: "GET", url: "/transfers?state=awaiting_approval", headers: bearer(TEST_API_KEY) })).json().transfers.length;
    const refused = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1500" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-3" });
    expect([refused.statusCode, refused.body.code]).toEqual([403, "AMOUNT_ABOVE_LIMIT"]);
    expect((await service.app.inject({ method: "GET", url: "/transfers?state=awaiting_approval", headers: bearer(TEST_API_KEY) })).json().transfers).toHaveLength(waitingBefore);

    const bySecond = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "101" }, bearer(SECOND_ADMIN_KEY));
    expect(bySecond.statusCode, bySecond.raw).toBe(202);
    expect((await decide(bySecond.body.id, "approve", SECOND_ADMIN_KEY)).statusCode).toBe(403);
    const approved = await decide(bySecond.body.id, "approve", TEST_API_KEY);
    expect(approved.statusCode, approved.body).toBe(200);
    await waitForReceipt(chain, approved.json().result.hash, 10_000);
  });

  it("the audit log (GET /audit, admin only) holds each request, decision and state change with who decided, chained; also as CSV", async () => {
    const byTransferKey = await service.app.inject({ method: "GET", url: "/audit", headers: bearer(TRANSFER_KEY) });
    expect(byTransferKey.statusCode).toBe(403);
    // Its refusal is entered in the next commit.
    await service.services.journal.flushed();
    const entries: { seq: number; kind: string; transferId: number | null; actor: string | null; detail: Record<string, unknown>; prevHash: string; hash: string }[] = [];
    for (let after = "0"; ; ) {
      const page = (await service.app.inject({ method: "GET", url: `/audit?after=${after}&limit=50`, headers: bearer(TEST_API_KEY) })).json();
      entries.push(...page.entries);
      if (page.nextAfter === null) break;
      after = page.nextAfter;
    }
    expect(entries[0]).toMatchObject({ kind: "service.started", prevHash: "0".repeat(64) });
    expect(JSON.stringify(entries[0].detail)).not.toContain(TEST_API_KEY);
    for (const [index, entry] of entries.entries()) if (index > 0) expect(entry.prevHash).toBe(entries[index - 1].hash);
    // The first test's transfer: asked for, approved by the second admin key, signed.
    const asked = (await service.app.inject({ method: "GET", url: "/transfers?state=mined,pending&limit=500", headers: bearer(TEST_API_KEY) })).json().transfers.find((item: { idempotencyKey: string }) => item.idempotencyKey === "large-1");
    // Its own story: the refusals of its requester's approval are entered beside it (below).
    const story = entries.filter((entry) => entry.transferId === asked.id && entry.kind !== "operator.refused");
    expect(story.map((entry) => entry.kind).slice(0, 4)).toEqual(["transfer.awaiting-approval", "transfer.claimed", "transfer.signed", "attempt.transfer"]);
    expect(story[1].actor).toBe(asked.approval.decidedBy);
    // Refused control actions are entered too: the requester's own approval (first test), this transfer key's read of the log.
    const refused = entries.filter((entry) => entry.kind === "operator.refused");
    expect(refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ actor: keyIdOf(TEST_API_KEY), transferId: asked.id, detail: { code: "APPROVER_IS_REQUESTER", route: "POST /transfers/:id/approve", role: "admin" } }),
        expect.objectContaining({ actor: keyIdOf(TRANSFER_KEY), transferId: null, detail: { code: "FORBIDDEN_FOR_ROLE", route: "GET /audit", role: "transfer" } }),
      ]),
    );
    const csv = await service.app.inject({ method: "GET", url: "/audit?limit=5", headers: { ...bearer(TEST_API_KEY), accept: "text/csv" } });
    expect(csv.headers["content-type"]).toContain("text/csv");
    expect(csv.body.split("\r\n")[0]).toBe("seq,at,kind,transferId,actor,detail,prevHash,hash");
    expect(csv.body.split("\r\n").filter(Boolean)).toHaveLength(6);

    // Newest first, in pages before a cursor: the same entries the other way round (and any entered since).
    const newestFirst: typeof entries = [];
    for (let before = ""; ; ) {
      const page = (await service.app.inject({ method: "GET", url: `/audit?order=newest&limit=40${before}`, headers: bearer(TEST_API_KEY) })).json();
      expect(page.nextAfter).toBeNull();
      newestFirst.push(...page.entries);
      if (page.nextBefore === null) break;
      before = `&before=${page.nextBefore}`;
    }
    const last = entries[entries.length - 1].seq;
    expect(newestFirst.filter((entry) => entry.seq <= last)).toEqual([...entries].reverse());
    const latest = await service.app.inject({ method: "GET", url: "/audit?order=newest&limit=3", headers: { ...bearer(TEST_API_KEY), accept: "text/csv" } });
    const seqs = latest.body.split("\r\n").filter(Boolean).slice(1).map((line) => Number(line.split(",")[0]));
    expect(seqs).toEqual([newestFirst[0].seq, newestFirst[0].seq - 1, newestFirst[0].seq - 2]);
    // A cursor of the other order is refused, not ignored.
    for (const url of ["/audit?order=newest&after=3", "/audit?before=3"]) {
      const mixed = await service.app.inject({ method: "GET", url, headers: bearer(TEST_API_KEY) });
      expect([mixed.statusCode, mixed.json().code]).toEqual([400, "INVALID_QUERY"]);
    }
  });

  it("waiting transfers outlive a restart and are paid once approved after it; one not decided within APPROVAL_TTL_HOURS expires, is never signed, and its key answers 417 APPROVAL_EXPIRED", async () => {
    const kept = freshAddress();
    const waiting = await postJson(service.app, "/transfer", { toAddress: kept, amount: "120" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-4" });
    expect(waiting.statusCode, waiting.raw).toBe(202);
    await service.close();
    // About two seconds to decide, from now on (the waiting transfer keeps the time it was given).
    service = await startService(chain.target, { ...settings, APPROVAL_TTL_HOURS: "0.0006" });
    const replayed = await postJson(service.app, "/transfer", { toAddress: kept, amount: "120" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-4" });
    expect([replayed.statusCode, replayed.body.id]).toEqual([202, waiting.body.id]);

    const nonceBefore = await pendingNonce();
    const expiring = freshAddress();
    const asked = await postJson(service.app, "/transfer", { toAddress: expiring, amount: "130" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-5" });
    expect(asked.statusCode, asked.raw).toBe(202);
    // The sweep expires it without anyone asking (every few seconds).
    await waitUntil(async () => events("transfer.rejected", asked.body.id).length === 1, 20_000, "transfer.rejected of the expired transfer");
    expect(events("transfer.rejected", asked.body.id)[0].data).toMatchObject({ decidedBy: "expiry", reason: { code: "APPROVAL_EXPIRED" } });
    const repeat = await postJson(service.app, "/transfer", { toAddress: expiring, amount: "130" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-5" });
    expect([repeat.statusCode, repeat.body.code]).toEqual([417, "APPROVAL_EXPIRED"]);
    const approveLate = await decide(asked.body.id, "approve", TEST_API_KEY);
    expect([approveLate.statusCode, approveLate.json().code]).toEqual([409, "APPROVAL_DECIDED"]);
    expect(await pendingNonce()).toBe(nonceBefore);

    const approved = await decide(waiting.body.id, "approve", TEST_API_KEY);
    expect(approved.statusCode, approved.body).toBe(200);
    await waitForReceipt(chain, approved.json().result.hash, 10_000);
    expect(await tokenBalanceOf(chain, kept)).toBe(parseUnits("120", 18));
    expect(await tokenBalanceOf(chain, expiring)).toBe(0n);
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "latest")).toBe(nonceBefore + 1);
  });

  it("a key still waiting when a restart raised APPROVAL_ABOVE above its amount gets its wait again (202, the first answer), not a refusal; nothing of it is sent until approved", async () => {
    await service.close();
    service = await startService(chain.target, settings);
    const recipient = freshAddress();
    const asked = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "150" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-6" });
    expect(asked.statusCode, asked.raw).toBe(202);
    await service.close();
    service = await startService(chain.target, { ...settings, APPROVAL_ABOVE: "200" });
    const nonceBefore = await pendingNonce();

    const repeat = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "150" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-6" });
    expect([repeat.statusCode, repeat.headers["idempotent-replayed"]], repeat.raw).toEqual([202, "true"]);
    expect(repeat.body).toEqual(asked.body);
    // The same amount under a new key is below the threshold now: sent at once.
    const fresh = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "150" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "small-6" });
    expect(fresh.statusCode, fresh.raw).toBe(200);
    expect(await pendingNonce()).toBe(nonceBefore + 1);

    const approved = await decide(asked.body.id, "approve", TEST_API_KEY);
    expect(approved.statusCode, approved.body).toBe(200);
    await waitForReceipt(chain, approved.json().result.hash, 10_000);
    expect(await tokenBalanceOf(chain, recipient)).toBe(parseUnits("150", 18));
    const answered = await postJson(service.app, "/transfer", { toAddress: recipient, amount: "150" }, { ...bearer(TRANSFER_KEY), "idempotency-key": "large-6" });
    expect([answered.statusCode, answered.body.result?.hash]).toEqual([200, approved.json().result.hash]);
  });
});

describe("two-person approval of a payout batch on anvil", () => {
  let chain: TestChain;
  let token: Contract;
  let service: TestService;
  let journalDir: string;
  let settings: Record<string, string>;
  const target = async () => ({ ...chain.target, tokenAddress: await token.getAddress() });

  beforeAll(async () => {
    chain = await startTestChainOn("anvil");
    const owner = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, owner.address, "10");
    token = await deployTestToken(chain, "RestrictedToken", parseUnits("1000000", 6), owner);
    journalDir = mkdtempSync(join(tmpdir(), "journal-"));
    settings = {
      PAYOUT_CONTRACT: await deployPayoutContract(owner),
      APPROVAL_ABOVE: "100",
      API_KEYS: `admin:${TEST_API_KEY},admin:${SECOND_ADMIN_KEY}`,
      JOURNAL_PATH: join(journalDir, "transfers.sqlite"),
    };
    service = await startService(await target(), settings);
  }, 120_000);
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
    rmSync(journalDir, { recursive: true, force: true });
  });

  it("a batch whose total is above the threshold waits with its item ids held, and is paid once approved", async () => {
    const [first, second] = [freshAddress(), freshAddress()];
    const items = [
      { toAddress: first, amount: "60", id: "approved-1" },
      { toAddress: second, amount: "50", id: "approved-2" },
    ];
    const asked = await postJson(service.app, "/payouts", { items }, { "idempotency-key": "batch-1" });
    expect(asked.statusCode, asked.raw).toBe(202);
    expect(asked.body).toMatchObject({ state: "awaiting_approval", payoutItems: 2, amount: "110" });
    // The audit log names every item of the batch: who is to be paid, and how much.
    const audited = (await service.app.inject({ method: "GET", url: "/audit?order=newest&limit=20", headers: bearer(TEST_API_KEY) })).json().entries;
    const made = audited.find((entry: { kind: string; transferId: number }) => entry.kind === "transfer.awaiting-approval" && entry.transferId === asked.body.id);
    expect(made.detail.payout.items).toEqual([
      { id: "approved-1", recipient: first, units: parseUnits("60", 6).toString() },
      { id: "approved-2", recipient: second, units: parseUnits("50", 6).toString() },
    ]);
    // Another batch with one of its item ids cannot pay it meanwhile: the same payment waits for the
    // decision; another amount under that id is refused for good, naming the batch.
    const other = await postJson(service.app, "/payouts", { items: [{ toAddress: first, amount: "60", id: "approved-1" }] }, { "idempotency-key": "batch-2" });
    expect([other.statusCode, other.body.code]).toEqual([409, "PAYOUT_ITEM_IN_FLIGHT"]);
    const reused = await postJson(service.app, "/payouts", { items: [{ toAddress: first, amount: "1", id: "approved-1" }] }, { "idempotency-key": "batch-3" });
    expect([reused.statusCode, reused.body.code]).toEqual([422, "PAYOUT_ITEM_ID_REUSED"]);
    expect(reused.body.message).toContain(`is batch ${asked.body.id}'s item`);

    // The first payout in a token has the wallet approve the payout contract: the batch keeps waiting meanwhile.
    let approved = await service.app.inject({ method: "POST", url: `/transfers/${asked.body.id}/approve`, headers: bearer(SECOND_ADMIN_KEY) });
    for (const deadline = Date.now() + 30_000; approved.statusCode === 503 && approved.json().code === "PAYOUT_APPROVAL_PENDING" && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      approved = await service.app.inject({ method: "POST", url: `/transfers/${asked.body.id}/approve`, headers: bearer(SECOND_ADMIN_KEY) });
    }
    expect(approved.statusCode, approved.body).toBe(200);
    await waitForReceipt(chain, approved.json().result.hash, 10_000);
    expect(await token.getFunction("balanceOf")(first)).toBe(parseUnits("60", 6));
    expect(await token.getFunction("balanceOf")(second)).toBe(parseUnits("50", 6));
    const repeat = await postJson(service.app, "/payouts", { items }, { "idempotency-key": "batch-1" });
    expect([repeat.statusCode, repeat.body.transaction?.hash]).toEqual([200, approved.json().result.hash]);
  });

  it("a batch still waiting when a restart raised APPROVAL_ABOVE above its total gets its wait again (202, the first answer), and nothing of it is sent", async () => {
    const recipient = freshAddress();
    const items = [{ toAddress: recipient, amount: "120", id: "raised-1" }];
    const asked = await postJson(service.app, "/payouts", { items }, { "idempotency-key": "batch-3" });
    expect(asked.statusCode, asked.raw).toBe(202);
    await service.close();
    service = await startService(await target(), { ...settings, APPROVAL_ABOVE: "200" });
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");

    const repeat = await postJson(service.app, "/payouts", { items }, { "idempotency-key": "batch-3" });
    expect([repeat.statusCode, repeat.headers["idempotent-replayed"]], repeat.raw).toEqual([202, "true"]);
    expect(repeat.body).toEqual(asked.body);
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending")).toBe(nonceBefore);
    expect(await token.getFunction("balanceOf")(recipient)).toBe(0n);
  });
});

describe("the address book on anvil", () => {
  let chain: TestChain;
  let service: TestService;
  const book = (method: "GET" | "POST" | "DELETE", url: string, key: string, payload?: object) =>
    service.app.inject({ method, url, headers: { ...bearer(key), ...(payload && { "content-type": "application/json" }) }, ...(payload && { payload: JSON.stringify(payload) }) });

  beforeAll(async () => {
    chain = await startTestChainOn("anvil");
    service = await startService(chain.target, {
      API_KEYS: `admin:${TEST_API_KEY},admin:${SECOND_ADMIN_KEY},transfer:${TRANSFER_KEY}`,
      ADDRESS_BOOK: "true",
      // 1.8 s: an entry pays without approval that long after it was added.
      ADDRESS_BOOK_COOLING_OFF_HOURS: "0.0005",
    });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("makes a transfer to an address off the book wait for approval; one added pays without it only after the cooling-off; one removed waits again; every change audited", async () => {
    const known = freshAddress();
    const send = (toAddress: string) => postJson(service.app, "/transfer", { toAddress, amount: "1" }, bearer(TRANSFER_KEY));
    expect((await send(known)).statusCode).toBe(202);
    // Only an admin changes the book.
    expect((await book("POST", "/address-book", TRANSFER_KEY, { address: known })).statusCode).toBe(403);
    const added = await book("POST", "/address-book", TEST_API_KEY, { address: known.toLowerCase(), label: "supplier" });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toMatchObject({ address: known, label: "supplier", addedBy: keyIdOf(TEST_API_KEY), effective: false });
    expect((await book("POST", "/address-book", SECOND_ADMIN_KEY, { address: known })).json().code).toBe("ADDRESS_BOOK_ENTRY_EXISTS");
    // Within the cooling-off it still waits.
    expect((await send(known)).statusCode).toBe(202);
    await waitUntil(async () => (await book("GET", "/address-book", TEST_API_KEY)).json().entries[0].effective, 10_000, "the entry effective");
    const paid = await send(known);
    expect(paid.statusCode, paid.raw).toBe(200);
    await waitForReceipt(chain, paid.body.result.hash, 10_000);
    expect(await tokenBalanceOf(chain, known)).toBe(parseUnits("1", 18));
    // Someone else, still off the book: waits.
    expect((await send(freshAddress())).statusCode).toBe(202);
    const removed = await book("DELETE", `/address-book/${known}`, SECOND_ADMIN_KEY);
    expect(removed.statusCode, removed.body).toBe(200);
    expect((await send(known)).statusCode).toBe(202);
    expect((await book("DELETE", `/address-book/${known}`, SECOND_ADMIN_KEY)).json().code).toBe("ADDRESS_BOOK_ENTRY_NOT_FOUND");

    const audit = (await service.app.inject({ method: "GET", url: "/audit?order=newest&limit=100", headers: bearer(TEST_API_KEY) })).json().entries as { kind: string; actor: string; detail: { address?: string } }[];
    expect(audit.filter((entry) => entry.kind.startsWith("operator.address_book")).map((entry) => [entry.kind, entry.actor, entry.detail.address]).reverse()).toEqual([
      ["operator.address_book_added", keyIdOf(TEST_API_KEY), known],
      ["operator.address_book_removed", keyIdOf(SECOND_ADMIN_KEY), known],
    ]);
  });
});
