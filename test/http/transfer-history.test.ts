/**
 * GET /transfers on a real chain: pages through every transfer newest first, the CSV export holds the
 * same rows, the filters narrow, and a transfer key sees only its own transfers.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_API_KEY, type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, startTestChain, waitForReceipt } from "../helpers/test-chain.js";

const CLIENT_A = "transfer-key-of-client-a";
const CLIENT_B = "transfer-key-of-client-b";
const READER = "read-key-of-the-accountant";
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const keyId = (key: string) => `key_${createHash("sha256").update(key).digest("hex").slice(0, 12)}`;

interface Item {
  id: number;
  hash: string | null;
  state: string;
  kind: string;
  transfer: { from: string; to: string; amount: string; amountInTokens: string; token: string };
  carriedBy: string | null;
  nonce: number | null;
  idempotencyKey: string | null;
  apiKeyId: string | null;
  refusal: { code: string } | null;
  attempts: { hash: string; kind: string; fate: string }[];
  finalized: boolean;
  finalizedBlock: number | null;
  createdAt: string;
}

describe("GET /transfers", () => {
  let chain: TestChain;
  let service: TestService;
  const sent: { hash: string; recipient: string; key: string }[] = [];
  let refusedKey: string;
  let startedAt: string;

  const list = async (query: string, key = TEST_API_KEY, accept?: string) => {
    const response = await service.app.inject({ method: "GET", url: `/transfers${query}`, headers: { ...bearer(key), ...(accept && { accept }) } });
    return response;
  };

  beforeAll(async () => {
    chain = await startTestChain();
    service = await startService(chain.target, { API_KEYS: `admin:${TEST_API_KEY},${CLIENT_A},${CLIENT_B},read:${READER}` });
    startedAt = new Date(Date.now() - 1_000).toISOString();
    for (let index = 0; index < 7; index++) {
      const key = index % 2 === 0 ? CLIENT_A : CLIENT_B;
      const recipient = freshAddress();
      const answer = await postJson(service.app, "/transfer", { toAddress: recipient, amount: `${index + 1}` }, { ...bearer(key), "idempotency-key": `history-${index}` });
      expect(answer.statusCode, answer.raw).toBe(200);
      sent.push({ hash: answer.body.result.hash, recipient, key });
    }
    // A refusal (more than the wallet holds) is history too: rejected, with what the client was told.
    refusedKey = "history-refused";
    const refused = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1000000000" }, { ...bearer(CLIENT_A), "idempotency-key": refusedKey });
    expect(refused.statusCode).toBe(417);
    await waitForReceipt(chain, sent.at(-1)?.hash as string, 10_000);
    // The journal counts them mined at the wallet's next read of the chain (CHAIN_REFRESH_INTERVAL_MS).
    for (const deadline = Date.now() + 10_000; ((await list("?state=mined")).json() as { transfers: Item[] }).transfers.length < sent.length; ) {
      if (Date.now() > deadline) throw new Error("the transfers were not counted mined within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it("pages through every transfer, newest first, each with the status document's fields", async () => {
    const items: Item[] = [];
    let cursor: string | null = "";
    let pages = 0;
    while (cursor !== null) {
      const response = await list(`?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(response.statusCode, response.body).toBe(200);
      const page = response.json() as { transfers: Item[]; nextCursor: string | null };
      expect(page.transfers.length).toBeLessThanOrEqual(3);
      items.push(...page.transfers);
      cursor = page.nextCursor;
      pages++;
    }
    expect(pages).toBe(3);
    expect(items.map((item) => item.id)).toEqual([...items.map((item) => item.id)].sort((a, b) => b - a));
    expect(items.map((item) => item.idempotencyKey)).toEqual([refusedKey, ...sent.map((_, index) => `history-${index}`).reverse()]);
    expect(items[0]).toMatchObject({ state: "rejected", hash: null, refusal: { code: "INSUFFICIENT_TOKEN_BALANCE" }, attempts: [] });
    const first = items.at(-1) as Item;
    expect(first).toMatchObject({
      hash: sent[0].hash,
      carriedBy: sent[0].hash,
      kind: "transfer",
      transfer: { from: chain.demo.walletAddress, to: sent[0].recipient, amount: "1000000000000000000", amountInTokens: "1", token: chain.demo.tokenAddress },
      apiKeyId: keyId(CLIENT_A),
      attempts: [{ hash: sent[0].hash, kind: "transfer", fate: "mined" }],
    });
    expect(items.map((item) => item.state)).toEqual(["rejected", ...sent.map(() => "mined")]);
  });

  it("exports the same rows as CSV, streamed, with every matching row", async () => {
    const json = (await list("?limit=500")).json() as { transfers: Item[] };
    const response = await list("", TEST_API_KEY, "text/csv");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(response.headers["content-disposition"]).toMatch(/^attachment; filename="transfers-.*\.csv"$/);
    const [header, ...lines] = response.body.trimEnd().split("\r\n");
    expect(header).toBe("id,createdAt,state,kind,hash,carriedBy,from,to,amount,amountInTokens,token,nonce,idempotencyKey,apiKeyId,refusalCode,attempts,finalized,finalizedBlock,network,chainId,tokenSymbol,payoutItemId");
    const rows = lines.map((line) => Object.fromEntries(line.split(",").map((value, index) => [header.split(",")[index], value])));
    expect(rows).toHaveLength(json.transfers.length);
    for (const [index, item] of json.transfers.entries()) {
      expect(rows[index]).toMatchObject({
        id: String(item.id),
        createdAt: item.createdAt,
        hash: item.hash ?? "",
        to: item.transfer.to,
        amount: item.transfer.amount,
        idempotencyKey: item.idempotencyKey ?? "",
        apiKeyId: item.apiKeyId ?? "",
        refusalCode: item.refusal?.code ?? "",
        attempts: item.attempts.map((attempt) => attempt.hash).join(" "),
        // Without NETWORKS_FILE the chain id names the network and the address the token.
        network: "31337",
        chainId: "31337",
        tokenSymbol: item.transfer.token,
        // A transfer is no payout item.
        payoutItemId: "",
      });
      expect(item).toMatchObject({ network: "31337", chainId: 31337, transfer: { tokenSymbol: item.transfer.token } });
    }
    // A page of it, as the JSON's.
    const page = (await list("?limit=2", TEST_API_KEY, "text/csv")).body.trimEnd().split("\r\n");
    expect(page.slice(1).map((line) => Number(line.split(",")[0]))).toEqual(json.transfers.slice(0, 2).map((item) => item.id));
  });

  it("filters by state, time, recipient, API key, idempotency key and lane", async () => {
    const ids = async (query: string) => ((await list(query)).json() as { transfers: Item[] }).transfers.map((item) => item.idempotencyKey);
    expect(await ids("?state=rejected")).toEqual([refusedKey]);
    expect(await ids("?state=pending,sending")).not.toContain(refusedKey);
    expect(await ids(`?recipient=${sent[2].recipient.toLowerCase()}`)).toEqual(["history-2"]);
    expect(await ids("?idempotencyKey=history-4")).toEqual(["history-4"]);
    expect(await ids(`?apiKeyId=${keyId(CLIENT_B)}`)).toEqual(["history-5", "history-3", "history-1"]);
    expect(await ids(`?lane=${chain.demo.walletAddress}`)).toHaveLength(8);
    expect(await ids(`?lane=${freshAddress()}`)).toEqual([]);
    expect(await ids(`?since=${startedAt}`)).toHaveLength(8);
    expect(await ids(`?until=${startedAt}`)).toEqual([]);
    // The network and token served: every row is theirs. Another: 400, not an empty page that looks like "none".
    expect(await ids(`?network=31337&token=${chain.demo.tokenAddress.toLowerCase()}`)).toHaveLength(8);
    for (const [query, code] of [["?network=polygon", "UNKNOWN_NETWORK"], ["?token=USDC", "UNKNOWN_TOKEN"]]) {
      const refused = await list(query);
      expect({ statusCode: refused.statusCode, code: refused.json().code }).toEqual({ statusCode: 400, code });
    }
    const bad = await list("?since=yesterday");
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("INVALID_QUERY");
    for (const query of ["?limit=501", "?limit=0", "?state=lost", "?cursor=abc", "?colour=red"]) expect((await list(query)).statusCode, query).toBe(400);
  });

  it("shows a transfer key its own transfers only; a read key sees all", async () => {
    const seen = async (key: string, query = "") => ((await list(query, key)).json() as { transfers: Item[] }).transfers.map((item) => item.apiKeyId);
    expect(new Set(await seen(CLIENT_B))).toEqual(new Set([keyId(CLIENT_B)]));
    expect(await seen(CLIENT_B, `?apiKeyId=${keyId(CLIENT_A)}`)).toEqual([]);
    // The CSV export says the same: a header, and not one row of another key's.
    const csv = await list(`?apiKeyId=${keyId(CLIENT_A)}`, CLIENT_B, "text/csv");
    expect(csv.body.trimEnd().split("\r\n")).toHaveLength(1);
    const own = (await list("", CLIENT_B, "text/csv")).body.trimEnd().split("\r\n").slice(1);
    expect(own.map((line) => line.split(",")[13])).toEqual([keyId(CLIENT_B), keyId(CLIENT_B), keyId(CLIENT_B)]);
    expect(await seen(READER)).toHaveLength(8);
  });

  it("counts the last 24 hours' transfers and gas for read and admin keys (GET /transfers/activity); a transfer key may not", async () => {
    // Tallied in the background once a minute: a tally now counts what the test sent.
    await service.services.activity.tally();
    const response = await service.app.inject({ method: "GET", url: "/transfers/activity", headers: bearer(READER) });
    expect(response.statusCode, response.body).toBe(200);
    const { hours } = response.json() as { hours: { start: string; sent: number; mined: number; failed: number; gasSpentWei: string | null }[] };
    expect(hours).toHaveLength(24);
    expect(Date.now() - Date.parse(hours[23].start)).toBeLessThan(3_600_000);
    expect(Date.parse(hours[23].start) - Date.parse(hours[0].start)).toBe(23 * 3_600_000);
    const total = (pick: (hour: (typeof hours)[number]) => number) => hours.reduce((sum, hour) => sum + pick(hour), 0);
    // Seven sent and mined; the refusal (417) failed.
    expect([total((hour) => hour.sent), total((hour) => hour.mined), total((hour) => hour.failed)]).toEqual([7, 7, 1]);
    // The wallet paid gas for them since the service started; the hours before it have no figure.
    expect(total((hour) => Number(hour.gasSpentWei ?? "0"))).toBeGreaterThan(0);
    expect(hours[0].gasSpentWei).toBeNull();
    const refused = await service.app.inject({ method: "GET", url: "/transfers/activity", headers: bearer(CLIENT_A) });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().code).toBe("FORBIDDEN_FOR_ROLE");
  });
});
