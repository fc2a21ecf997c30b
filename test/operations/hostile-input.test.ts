/**
 * Malformed and malicious requests at both routes: each gets a 4xx in the error envelope, no token
 * moves, the nonce stays, and the process keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUTHORIZATION, TEST_API_KEY, type TestService, postJson, startService } from "../helpers/service.js";
import { type TestChain, freshAddress, startTestChain, tokenBalanceOf } from "../helpers/test-chain.js";

interface HostileRequest {
  label: string;
  method?: "POST" | "GET" | "PUT" | "DELETE";
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

const RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const HASH = `0x${"ab".repeat(32)}`;
const json = (value: unknown) => JSON.stringify(value);
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const transferBodies: [string, string | Buffer][] = [
  ["amount as an array", json({ toAddress: RECIPIENT, amount: ["1"] })],
  ["amount null", json({ toAddress: RECIPIENT, amount: null })],
  ["amount true", json({ toAddress: RECIPIENT, amount: true })],
  ["amount 1e400 (Infinity once parsed)", `{"toAddress":"${RECIPIENT}","amount":1e400}`],
  ["amount -1e-400 (negative zero)", `{"toAddress":"${RECIPIENT}","amount":-1e-400}`],
  ["amount with 10 000 digits", json({ toAddress: RECIPIENT, amount: "9".repeat(10_000) })],
  ["amount with a null byte", json({ toAddress: RECIPIENT, amount: "1\u0000" })],
  ["amount in full-width digits", json({ toAddress: RECIPIENT, amount: "１" })],
  ["amount with a thousands separator", json({ toAddress: RECIPIENT, amount: "1,000" })],
  ["amount as hex number text", json({ toAddress: RECIPIENT, amount: "0x1" })],
  ["amount negative", json({ toAddress: RECIPIENT, amount: "-5" })],
  ["amount with a leading plus", json({ toAddress: RECIPIENT, amount: "+5" })],
  ["amount with spaces", json({ toAddress: RECIPIENT, amount: " 5 " })],
  ["amount 'Infinity'", json({ toAddress: RECIPIENT, amount: "Infinity" })],
  ["address as a number", json({ toAddress: 12345, amount: "1" })],
  ["address as an object", json({ toAddress: { hex: RECIPIENT }, amount: "1" })],
  ["address with a Cyrillic homoglyph", json({ toAddress: RECIPIENT.replace("C", "С"), amount: "1" })],
  ["address with a trailing newline", json({ toAddress: `${RECIPIENT}\n`, amount: "1" })],
  ["address of 41 digits", json({ toAddress: `${RECIPIENT}0`, amount: "1" })],
  ["address with a bad checksum", json({ toAddress: RECIPIENT.replace("C51812", "c51812"), amount: "1" })],
  ["the zero address", json({ toAddress: `0x${"0".repeat(40)}`, amount: "1" })],
  ["__proto__ key", `{"toAddress":"${RECIPIENT}","amount":"1","__proto__":{"isAdmin":true}}`],
  ["nested __proto__", `{"toAddress":"${RECIPIENT}","amount":{"__proto__":{"x":1}}}`],
  ["constructor.prototype", `{"toAddress":"${RECIPIENT}","amount":"1","constructor":{"prototype":{"x":1}}}`],
  ["an extra field", json({ toAddress: RECIPIENT, amount: "1", from: freshAddress() })],
  ["a JSON array body", json([{ toAddress: RECIPIENT, amount: "1" }])],
  ["a JSON string body", json("transfer everything")],
  ["a JSON number body", "42"],
  ["JSON null", "null"],
  ["truncated JSON", `{"toAddress":"${RECIPIENT}","amount":`],
  ["JSON with a trailing comma", `{"toAddress":"${RECIPIENT}","amount":"1",}`],
  ["JSON with comments", `{"toAddress":"${RECIPIENT}", /* hi */ "amount":"1"}`],
  ["10 000 levels of nesting", nested(10_000)],
  ["a body over the limit", json({ toAddress: RECIPIENT, amount: "1", pad: "x".repeat(100_000) })],
  ["invalid UTF-8", Buffer.concat([Buffer.from(`{"toAddress":"${RECIPIENT}","amount":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])],
  ["UTF-16 encoded JSON", Buffer.from(json({ toAddress: RECIPIENT, amount: "1" }), "utf16le")],
  ["duplicate keys, the second a huge amount", `{"toAddress":"${RECIPIENT}","amount":"1","amount":"1e9"}`],
  ["both to and toAddress, different", json({ toAddress: RECIPIENT, to: freshAddress(), amount: "1" })],
];

const lookupBodies: [string, string][] = [
  ["a short hash", json({ Tx: "0x1234" })],
  ["a hash as a number", json({ Tx: 1234 })],
  ["a hash in an array", json({ Tx: [HASH] })],
  ["a hash with SQL in it", json({ Tx: `${HASH}' OR 1=1 --` })],
  ["a 65-byte hash", json({ Tx: `${HASH}00` })],
  ["a lowercase key name", json({ tx: HASH })],
  ["a __proto__ key", `{"Tx":"${HASH}","__proto__":{"polluted":1}}`],
  ["deep nesting", nested(5_000)],
];

const requests: HostileRequest[] = [
  ...transferBodies.map(([label, body]) => ({ label: `transfer: ${label}`, url: "/transfer", body })),
  ...lookupBodies.map(([label, body]) => ({ label: `lookup: ${label}`, url: "/getTransaction", body })),
  { label: "transfer: no Authorization", url: "/transfer", headers: { authorization: "" }, body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "transfer: a 6 KB Authorization header", url: "/transfer", headers: { authorization: `Bearer ${"k".repeat(6000)}` }, body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "transfer: the key in lower-case bearer with a tab", url: "/transfer", headers: { authorization: `bearer\t${TEST_API_KEY}` }, body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "transfer: the key with a suffix", url: "/transfer", headers: { authorization: `Bearer ${TEST_API_KEY}\u0000` }, body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "lookup: a wrong key", url: "/getTransaction", headers: { authorization: "Bearer guess-guess-guess-guess" }, body: json({ Tx: HASH }) },
  { label: "transfer: text/plain", url: "/transfer", headers: { "content-type": "text/plain" }, body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "transfer: form encoded", url: "/transfer", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `toAddress=${RECIPIENT}&amount=1` },
  { label: "transfer: multipart", url: "/transfer", headers: { "content-type": "multipart/form-data; boundary=x" }, body: "--x\r\n\r\n1\r\n--x--" },
  { label: "transfer: no content type", url: "/transfer", headers: { "content-type": "" }, body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "transfer: a malformed Idempotency-Key", url: "/transfer", headers: { "idempotency-key": "x".repeat(300) }, body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "transfer: waitConfirmations=1000", url: "/transfer?waitConfirmations=1000", body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "transfer: an unknown query parameter", url: "/transfer?dryRun=false", body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "transfer: PUT", method: "PUT", url: "/transfer", body: json({ toAddress: RECIPIENT, amount: "1" }) },
  { label: "transfer: DELETE", method: "DELETE", url: "/transfer" },
  { label: "path traversal", method: "GET", url: "/transactions/..%2f..%2fetc%2fpasswd" },
  { label: "status of a malformed hash", method: "GET", url: `/transactions/${HASH}zz` },
];

describe("hostile input", () => {
  let chain: TestChain;
  let service: TestService;

  beforeAll(async () => {
    chain = await startTestChain();
    service = await startService(chain.target);
  });
  afterAll(async () => {
    await service?.close();
    await chain?.stop();
  });

  it(`answers each of ${requests.length} malformed or malicious requests with a 4xx envelope, moving nothing`, async () => {
    expect(requests.length).toBeGreaterThanOrEqual(40);
    const balanceBefore = await tokenBalanceOf(chain, chain.demo.walletAddress);
    const nonceBefore = await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending");
    for (const request of requests) {
      const headers: Record<string, string> = { "content-type": "application/json", ...AUTHORIZATION, ...request.headers };
      for (const [name, value] of Object.entries(headers)) if (value === "") delete headers[name];
      const response = await service.app.inject({ method: request.method ?? "POST", url: request.url, headers, payload: request.body });
      expect(response.statusCode, request.label).toBeGreaterThanOrEqual(400);
      expect(response.statusCode, request.label).toBeLessThan(500);
      const body = response.json();
      expect(Object.keys(body).sort(), request.label).toEqual(["code", "error", "message", "statusCode"]);
      expect(body.statusCode, request.label).toBe(response.statusCode);
      expect(body.message, request.label).not.toMatch(/at .*\(.*:\d+:\d+\)/);
    }
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await tokenBalanceOf(chain, chain.demo.walletAddress)).toBe(balanceBefore);
    expect(await chain.provider.getTransactionCount(chain.demo.walletAddress, "pending")).toBe(nonceBefore);

    // Still healthy, and still working.
    expect((await service.app.inject({ method: "GET", url: "/health" })).statusCode).toBe(200);
    const recipient = freshAddress();
    expect((await postJson(service.app, "/transfer", { toAddress: recipient, amount: "1" })).statusCode).toBe(200);
  });
});
