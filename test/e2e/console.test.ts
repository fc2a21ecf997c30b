/**
 * The operator's console in a real browser (Debian's chromium, headless, driven by playwright-core),
 * against the service on a dev chain that mines only when told: it signs in with the keyboard, lists the
 * transfers, finds one by hash, cancels a stuck one and sees it end cancelled, finds a payout batch by an
 * item's id and shows each item's state, shows a spend nobody asked for and the signing pause it caused,
 * resumes signing, and pages through the audit log and saves it as CSV. Screenshots at 1280 px (with a transfer in flight, after, and paused) and 390 px are
 * saved to test-artifacts/.
 */
import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { Wallet } from "ethers";
import { type Browser, type Page, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM_PATH, chromiumMissing } from "../helpers/chromium.js";
import { AUTHORIZATION, TEST_API_KEY, type TestService, postJson, startService } from "../helpers/service.js";
import { deployPayoutContract } from "../../src/dev/demo-chain.js";
import { type TestChain, freshAddress, setEthBalance, startTestChain } from "../helpers/test-chain.js";

const run = promisify(execFile);
const missing = chromiumMissing();
const ARTIFACTS = join(import.meta.dirname, "..", "..", "test-artifacts");
const READ_KEY = "read-key-of-an-operator-0123";
const SECOND_ADMIN_KEY = "second-admin-key-of-finance-4567";

describe.skipIf(missing)(missing ? `the console in Chromium: NOT RUN, ${missing}` : "the console in Chromium", () => {
  let chain: TestChain;
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let base: string;
  const mined: string[] = [];
  let stuck: string;

  const mine = () => chain.provider.send("evm_mine", []);
  const journalSays = async (state: string, hash: string) =>
    ((await service.app.inject({ method: "GET", url: `/transfers?state=${state}`, headers: AUTHORIZATION })).json().transfers as { hash: string }[]).some((item) => item.hash === hash);
  const until = async (condition: () => Promise<boolean>, what: string) => {
    for (const deadline = Date.now() + 15_000; !(await condition()); ) {
      if (Date.now() > deadline) throw new Error(`${what}: not within 15 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    // The console's script, compiled as `npm run build` does.
    await run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.console.json"]);
    chain = await startTestChain(["--no-mining"]);
    const deployer = new Wallet(Wallet.createRandom().privateKey, chain.provider);
    await setEthBalance(chain, deployer.address, "1");
    const payoutContract = await deployPayoutContract(deployer);
    service = await startService(chain.target, {
      API_KEYS: `admin:${TEST_API_KEY},read:${READ_KEY},admin:${SECOND_ADMIN_KEY}`,
      PAYOUT_CONTRACT: payoutContract,
      APPROVAL_ABOVE: "100",
      PAUSE_ON_UNEXPECTED_OUTFLOW: "true",
      OUTFLOW_CHECK_INTERVAL_MS: "200",
    });
    base = await service.app.listen({ host: "127.0.0.1", port: 0 });
    for (let index = 0; index < 3; index++) {
      const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: `${index + 1}` }, { "idempotency-key": `console-${index}` });
      expect(sent.statusCode, sent.raw).toBe(200);
      mined.push(sent.body.result.hash);
    }
    await mine();
    await until(() => journalSays("mined", mined[2]), "the first transfers mined");
    // Not mined until the test mines again: a transfer in flight, to cancel.
    const pending = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "4" }, { "idempotency-key": "console-stuck" });
    expect(pending.statusCode, pending.raw).toBe(200);
    stuck = pending.body.result.hash;
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox", "--disable-gpu"] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("response", (response) => {
      if (response.status() >= 400) failedRequests.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
    await chain?.stop();
  });

  // Every answer of 400 or more the console's page got: only the wrong key's own refusal is expected.
  const failedRequests: string[] = [];
  // What the page's console said as errors (a Content Security Policy violation among them).
  const consoleErrors: string[] = [];

  it("refuses a wrong key, and signs in with an admin key from the keyboard", async () => {
    await page.goto(`${base}/console`);
    await page.getByLabel("API key").fill("not-a-key-of-this-service");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#sign-in-error").textContent()).toContain("AUTH_INVALID");
    await page.getByLabel("API key").fill(TEST_API_KEY);
    await page.keyboard.press("Enter");
    await page.locator("#app").waitFor({ state: "visible" });
    // Focus moves to the search: the next key press types there.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("search");
    await expect.poll(() => page.locator("#recent tbody tr").count()).toBe(4);
    expect(await page.locator("#wallet").textContent()).toContain(chain.demo.walletAddress);
    expect(await page.locator("#in-flight").textContent()).toContain(stuck.slice(0, 10));
  });

  it("draws the last 24 hours itself, as two charts: transfers sent, mined and failed, and gas spent", async () => {
    const charts = page.locator("#activity svg[role=img]");
    await expect.poll(() => charts.count()).toBe(2);
    // Tallied once a minute, with what was made since counted on top every 2 s: the four made after the
    // service started show within seconds, not at the next minute.
    await expect.poll(() => charts.nth(0).getAttribute("aria-label"), { timeout: 8_000 }).toBe("Transfers in the last 24 hours: 4 sent, 3 mined, 0 failed");
    expect(await charts.nth(0).locator("g.chart-hour").count()).toBe(24);
    // Each hour says its figures on hover; the bars of the hours with transfers have a height.
    expect(await charts.nth(0).locator("g.chart-hour title").last().textContent()).toMatch(/sent, \d+ mined, 0 failed$/);
    expect(await charts.nth(0).locator("rect.bar-sent").evaluateAll((bars) => bars.filter((bar) => Number(bar.getAttribute("height")) > 0).length)).toBeGreaterThan(0);
    expect(await charts.nth(1).getAttribute("aria-label")).toMatch(/^Gas spent in the last 24 hours: \d+\.\d{4} ETH \(since this service started\)$/);
    expect(await page.locator("#activity .legend").first().textContent()).toBe("sentminedfailed");
    // The same figures as text, newest hour first, for those who cannot hover: folded until asked for.
    const hourByHour = page.locator("#activity details.hours").first();
    await expect.poll(() => hourByHour.locator("li").first().isVisible()).toBe(false);
    await hourByHour.locator("summary").click();
    expect(await hourByHour.locator("li").count()).toBe(24);
    expect(await hourByHour.locator("li").first().textContent()).toBe(await charts.nth(0).locator("g.chart-hour title").last().textContent());
    expect(await hourByHour.locator("li").first().isVisible()).toBe(true);
  });

  it("finds a transfer by hash: its page shows its attempts", async () => {
    await page.getByLabel("Hash, recipient, Idempotency-Key or payout item id").fill(mined[1]);
    await page.keyboard.press("Enter");
    const detail = page.locator("#detail");
    await detail.waitFor({ state: "visible" });
    await expect.poll(() => detail.textContent()).toContain("confirmed");
    expect(await detail.locator("table").first().textContent()).toContain(mined[1]);
    expect(await detail.locator("table").first().textContent()).toContain("mined");
    await page.getByRole("button", { name: "Close" }).click();
  });

  it("cancels a stuck transfer after asking, shows the answer, and sees it end cancelled", async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "console-in-flight-1280.png"), fullPage: true });
    await page.getByRole("button", { name: `Cancel ${stuck}` }).click();
    const dialog = page.locator("dialog#confirm");
    await dialog.waitFor({ state: "visible" });
    expect(await dialog.textContent()).toContain("Cancel transfer");
    await dialog.getByRole("button", { name: "Yes" }).click();
    await expect.poll(() => page.locator("#outcome").textContent()).toMatch(/cancel: 202, state pending/);
    // Until the cancel is mined, the row says it was asked for, and offers neither button again.
    await expect.poll(() => page.locator(`#in-flight tr[data-hash="${stuck}"]`).textContent()).toContain("cancel requested");
    expect(await page.getByRole("button", { name: new RegExp(`^(Cancel|Re-price) ${stuck}`) }).count()).toBe(0);
    await mine();
    const row = page.locator(`#recent tr[data-hash="${stuck}"]`);
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain("cancelled");
    expect(await page.locator("#in-flight").textContent()).toContain("Nothing in flight.");
    await page.screenshot({ path: join(ARTIFACTS, "console-1280.png"), fullPage: true });
  });

  it("fits a 390 px wide phone without sideways scrolling", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(() => page.locator("#recent tbody tr").count()).toBe(4);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(ARTIFACTS, "console-390.png"), fullPage: true });
    // The sign-in page too (a new tab is signed out).
    const signIn = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await signIn.goto(`${base}/console`);
    await signIn.getByLabel("API key").waitFor({ state: "visible" });
    expect(await signIn.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await signIn.close();
  });

  it("made no failing request but the wrong key's: no favicon, and with webhooks off the deliveries are asked once", async () => {
    // Several polls (every 2 s) since the sign-in.
    expect(failedRequests.filter((line) => !line.startsWith("401 ") && line !== "404 /webhooks/deliveries")).toEqual([]);
    expect(failedRequests.filter((line) => line.startsWith("401 "))).toHaveLength(1);
    expect(failedRequests.filter((line) => line === "404 /webhooks/deliveries").length).toBeLessThanOrEqual(2);
    expect(consoleErrors.filter((line) => /Content Security Policy/i.test(line))).toEqual([]);
  });

  it("names the token as its contract does (DEMO), not by its address, though without NETWORKS_FILE requests name it so", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const tokens = page.locator("#wallet table tbody td").nth(2);
    await expect.poll(() => tokens.textContent()).toMatch(/^[\d.]+ DEMO$/);
    await expect.poll(() => page.locator("#recent tbody").textContent()).toContain(" DEMO");
    // Every view but the audit log's details, which quote each fact as the log holds it (the contract's address).
    await expect.poll(() => page.locator("#audit tbody tr").count()).toBeGreaterThan(0);
    const named = await page.locator("#app").evaluate((app) => {
      const copy = app.cloneNode(true) as HTMLElement;
      copy.querySelectorAll("#audit td:last-child").forEach((detail) => detail.remove());
      return copy.textContent;
    });
    expect(named).not.toContain(chain.demo.tokenAddress);
    // And those details are the log's own words: each the entry's detail as GET /audit answers it.
    const { entries } = (await service.app.inject({ method: "GET", url: "/audit?order=newest&limit=20", headers: AUTHORIZATION })).json() as { entries: { seq: number; detail: unknown }[] };
    const shown = await page.locator("#audit tbody tr").evaluateAll((rows) => rows.map((row) => [Number((row as HTMLElement).dataset.seq), row.querySelector("td:last-child code:last-of-type")?.textContent]));
    const bySeq = new Map(entries.map((entry) => [entry.seq, JSON.stringify(entry.detail)]));
    const compared = shown.filter(([seq]) => bySeq.has(seq as number));
    expect(compared.length).toBeGreaterThan(0);
    for (const [seq, text] of compared) expect(text, `entry ${seq}`).toBe(bySeq.get(seq as number));
  });

  it("keeps every column heading on one line at 1280 px", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    const wrapped = await page.evaluate(() =>
      [...document.querySelectorAll("th")].filter((heading) => {
        const text = document.createRange();
        text.selectNodeContents(heading);
        return text.getClientRects().length > 1;
      }).map((heading) => heading.textContent),
    );
    expect(wrapped).toEqual([]);
    // The cases after it ran at the phone's width before this one: as they were.
    await page.setViewportSize({ width: 390, height: 844 });
  });

  it("shows a read key the transfers without the wallet or any button that changes something", async () => {
    const reader = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Every path the read key's page asked for: the audit log is never among them.
    const readerAsked: string[] = [];
    reader.on("request", (request) => readerAsked.push(new URL(request.url()).pathname));
    await reader.goto(`${base}/console`);
    await reader.getByLabel("API key").fill(READ_KEY);
    await reader.keyboard.press("Enter");
    await expect.poll(() => reader.locator("#recent tbody tr").count()).toBe(4);
    expect(await reader.locator("#wallet").textContent()).toContain("admin keys only");
    await expect.poll(() => reader.locator("#audit").textContent()).toContain("admin keys only");
    expect(await reader.locator("#audit-controls").isVisible()).toBe(false);
    expect(readerAsked.filter((path) => path === "/audit")).toEqual([]);
    expect(await reader.getByRole("button", { name: /^(Cancel|Re-price|Retry) / }).count()).toBe(0);
    await reader.close();
  });

  it("finds a payout batch by an item's id, and its page lists each item with its state", async () => {
    const items = [
      { toAddress: freshAddress(), amount: "1.25", id: "console-invoice-1" },
      { toAddress: freshAddress(), amount: "2.5", id: "console-invoice-2" },
    ];
    // The wallet's first payout in the token approves the contract first (503 until that is mined).
    let sent = await postJson(service.app, "/payouts", { items }, { "idempotency-key": "console-payout" });
    for (const deadline = Date.now() + 15_000; sent.statusCode === 503 && Date.now() < deadline; ) {
      await mine();
      await new Promise((resolve) => setTimeout(resolve, 200));
      sent = await postJson(service.app, "/payouts", { items }, { "idempotency-key": "console-payout" });
    }
    expect(sent.statusCode, sent.raw).toBe(200);
    const batch = sent.body as { id: number; transaction: { hash: string } };
    await mine();
    await until(() => journalSays("mined", batch.transaction.hash), "the payout batch mined");

    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByLabel("Hash, recipient, Idempotency-Key or payout item id").fill("console-invoice-2");
    await page.keyboard.press("Enter");
    const row = page.locator(`#recent tr[data-hash="${batch.transaction.hash}"]`);
    // The list before the search holds the batch's row too: the search's answer is the list of one row.
    await expect.poll(() => page.locator("#recent tbody tr").count()).toBe(1);
    await expect.poll(() => row.textContent()).toContain(`3.75 DEMO to 2 recipients (payout ${batch.id})`);
    await row.getByRole("button", { name: `Open transfer ${batch.transaction.hash}` }).click();
    const detail = page.locator("#detail");
    await detail.waitFor({ state: "visible" });
    await expect.poll(() => detail.textContent()).toContain(`Payout${batch.id}: 2 items, 2 paid, 0 failed`);
    for (const item of items) {
      const cells = await detail.locator(`tr[data-item="${item.id}"] td`).allTextContents();
      expect(cells).toEqual([item.id, item.toAddress, item.amount, "paid", "—"]);
    }
    await page.screenshot({ path: join(ARTIFACTS, "console-payout-1280.png"), fullPage: true });
    await page.getByRole("button", { name: "Close" }).click();
  });

  it("shows a spend nobody asked for and the signing pause in red, and resumes signing after asking", async () => {
    // Another program holding the wallet's key moves its tokens.
    const stolen = await chain.token.getFunction("transfer")(freshAddress(), 1n);
    await mine();
    const wallet = page.locator("#wallet");
    await expect.poll(() => wallet.textContent(), { timeout: 15_000 }).toContain("Signing is paused");
    expect(await wallet.textContent()).toContain(`in ${stolen.hash}`);
    // In tokens, as people write them (the demo token has 18 decimals; named by its contract's symbol()).
    expect(await wallet.textContent()).toContain("0.000000000000000001 DEMO (1 base units) from");
    // Every lane's state says it too, not "open".
    await expect.poll(() => wallet.locator("table").textContent()).toContain("paused: signs nothing");
    expect(await wallet.locator("[role=alert]").count()).toBe(2);
    await page.screenshot({ path: join(ARTIFACTS, "console-paused-1280.png"), fullPage: true });
    await page.getByRole("button", { name: "Resume signing" }).click();
    const dialog = page.locator("dialog#confirm");
    await dialog.waitFor({ state: "visible" });
    expect(await dialog.textContent()).toContain("Resume signing?");
    await dialog.getByRole("button", { name: "Yes" }).click();
    await expect.poll(() => page.locator("#outcome").textContent()).toBe(`POST /wallet/resume?latestHash=${stolen.hash}: 200`);
    await expect.poll(() => wallet.textContent()).not.toContain("Signing is paused");
    expect(await wallet.locator("table").textContent()).not.toContain("paused: signs nothing");
    expect((await service.app.inject({ method: "GET", url: "/wallet?snapshot=true", headers: AUTHORIZATION })).json().signingPaused).toBeNull();
  });

  it("lists transfers awaiting approval with both decisions: the key that asked is refused, another admin's approval sends it, a rejection drops it", async () => {
    const secondAdmin = { authorization: `Bearer ${SECOND_ADMIN_KEY}` };
    const toApprove = freshAddress();
    const [approvable, rejectable, own] = await Promise.all([
      postJson(service.app, "/transfer", { toAddress: toApprove, amount: "150" }, { ...secondAdmin, "idempotency-key": "console-large-1" }),
      postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "250" }, { ...secondAdmin, "idempotency-key": "console-large-2" }),
      postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "120" }, { "idempotency-key": "console-large-3" }),
    ]);
    expect([approvable.statusCode, rejectable.statusCode, own.statusCode], approvable.raw).toEqual([202, 202, 202]);
    const approvals = page.locator("#approvals");
    await expect.poll(() => approvals.locator("tbody tr").count(), { timeout: 15_000 }).toBe(3);
    expect(await approvals.locator(`tr[data-id="${approvable.body.id}"]`).textContent()).toContain(toApprove);
    await page.screenshot({ path: join(ARTIFACTS, "console-approvals-1280.png"), fullPage: true });

    const decide = async (label: "Approve" | "Reject", id: number) => {
      await page.getByRole("button", { name: `${label} transfer ${id}` }).click();
      const dialog = page.locator("dialog#confirm");
      await dialog.waitFor({ state: "visible" });
      expect(await dialog.textContent()).toContain(`${label} transfer ${id}`);
      await dialog.getByRole("button", { name: "Yes" }).click();
    };
    // This page signed in with the key that asked for the third: the service refuses, and the page says why.
    await decide("Approve", own.body.id);
    await expect.poll(() => page.locator("#outcome").textContent()).toContain(`POST /transfers/${own.body.id}/approve: 403 APPROVER_IS_REQUESTER`);
    await decide("Reject", rejectable.body.id);
    await expect.poll(() => page.locator("#outcome").textContent()).toBe(`POST /transfers/${rejectable.body.id}/reject: 200, state rejected`);
    await decide("Approve", approvable.body.id);
    await expect.poll(() => page.locator("#outcome").textContent()).toBe(`POST /transfers/${approvable.body.id}/approve: 200`);
    await expect.poll(() => approvals.locator("tbody tr").count()).toBe(1);
    await mine();
    await until(async () => (await chain.token.getFunction("balanceOf")(toApprove)) > 0n, "the approved transfer mined");
    const repeat = await postJson(service.app, "/transfer", { toAddress: toApprove, amount: "150" }, { ...secondAdmin, "idempotency-key": "console-large-1" });
    expect(repeat.statusCode, repeat.raw).toBe(200);
  });

  it("manages the address book: an admin adds an address with a label, sees when it pays without approval, and removes it after asking", async () => {
    const address = freshAddress();
    const section = page.locator("#address-book");
    await page.locator("#address-book-address").fill(address);
    await page.locator("#address-book-label").fill("console supplier");
    await page.getByRole("button", { name: "Add to the address book" }).click();
    await expect.poll(() => page.locator("#outcome").textContent()).toContain(`Added ${address} to the address book`);
    await expect.poll(() => section.textContent()).toContain(address);
    const listed = await section.textContent();
    expect(listed).toContain("console supplier");
    expect(listed).toContain("(cooling off)");
    expect(listed).toContain("ADDRESS_BOOK is off");
    const book = (await service.app.inject({ method: "GET", url: "/address-book", headers: AUTHORIZATION })).json();
    expect(book.entries).toEqual([expect.objectContaining({ address, label: "console supplier", effective: false })]);
    await page.screenshot({ path: join(ARTIFACTS, "console-address-book-1280.png"), fullPage: true });
    await page.getByRole("button", { name: `Remove ${address}` }).click();
    const dialog = page.locator("dialog#confirm");
    await dialog.waitFor({ state: "visible" });
    expect(await dialog.textContent()).toContain(`Remove ${address} (console supplier) from the address book?`);
    await dialog.getByRole("button", { name: "Yes" }).click();
    await expect.poll(() => page.locator("#outcome").textContent()).toBe(`DELETE /address-book/${address}: 200`);
    await expect.poll(() => section.textContent()).toContain("The address book is empty.");
  });

  it("shows an approver every recipient and amount of a payout batch that waits, in its row and in the question before the decision", async () => {
    const secondAdmin = { authorization: `Bearer ${SECOND_ADMIN_KEY}` };
    const [first, second] = [freshAddress(), freshAddress()];
    const asked = await postJson(service.app, "/payouts", { items: [{ toAddress: first, amount: "70", id: "console-payout-a" }, { toAddress: second, amount: "45.5", id: "console-payout-b" }] }, { ...secondAdmin, "idempotency-key": "console-payout-large" });
    expect(asked.statusCode, asked.raw).toBe(202);
    const row = page.locator(`#approvals tr[data-id="${asked.body.id}"]`);
    await row.waitFor({ state: "visible", timeout: 15_000 });
    const listed = await row.textContent();
    for (const shown of [`${first} 70`, `${second} 45.5`, "115.5", "to 2 recipients"]) expect(listed).toContain(shown);
    await page.screenshot({ path: join(ARTIFACTS, "console-payout-approval-1280.png"), fullPage: true });
    await page.getByRole("button", { name: `Reject transfer ${asked.body.id}` }).click();
    const dialog = page.locator("dialog#confirm");
    await dialog.waitFor({ state: "visible" });
    const question = await dialog.textContent();
    expect(question).toContain(`${first} 70`);
    expect(question).toContain(`${second} 45.5`);
    await dialog.getByRole("button", { name: "Yes" }).click();
    await expect.poll(() => page.locator("#outcome").textContent()).toBe(`POST /transfers/${asked.body.id}/reject: 200, state rejected`);
  });
  it("shows an admin the audit log newest first, live, pages to older entries and back, and saves the CSV GET /audit exports", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    type Page = { entries: { seq: number; kind: string; actor: string | null }[]; nextBefore: string | null };
    const logPage = async (before?: number) =>
      (await service.app.inject({ method: "GET", url: `/audit?order=newest&limit=20${before === undefined ? "" : `&before=${before}`}`, headers: AUTHORIZATION })).json() as Page;
    const shownSeqs = () => page.locator("#audit tbody tr").evaluateAll((rows) => rows.map((row) => Number((row as HTMLElement).dataset.seq)));
    const seqsOf = (answer: Page) => answer.entries.map((entry) => entry.seq);
    // The cases before made more than two pages of entries.
    const second = await logPage();
    expect(second.nextBefore).not.toBeNull();
    expect((await logPage(Number(second.nextBefore))).nextBefore).not.toBeNull();
    // The newest page is read again at every poll: it shows what the log holds now.
    await expect.poll(async () => (await shownSeqs()).join() === seqsOf(await logPage()).join(), { timeout: 15_000 }).toBe(true);
    const newest = await shownSeqs();
    expect(newest).toHaveLength(20);
    expect(newest).toEqual([...newest].sort((a, b) => b - a));
    const first = (await logPage()).entries.find((entry) => entry.seq === newest[0]);
    const firstCells = await page.locator(`#audit tr[data-seq="${newest[0]}"] td`).allTextContents();
    expect(firstCells[2]).toBe(first?.kind);
    expect(firstCells[4]).toBe(first?.actor ?? "the service");
    const newer = page.getByRole("button", { name: "Newer" });
    expect(await newer.isDisabled()).toBe(true);
    // A transfer made now enters the log: its entries come to the top without a reload.
    const sent = await postJson(service.app, "/transfer", { toAddress: freshAddress(), amount: "1" }, { "idempotency-key": "console-audit" });
    expect(sent.statusCode, sent.raw).toBe(200);
    await expect.poll(async () => (await shownSeqs())[0], { timeout: 15_000 }).toBeGreaterThan(newest[0]);
    // Nothing more is entered for it until it is mined (this chain mines when told): the page shown stays.
    await until(() => journalSays("pending", sent.body.result.hash), "the audit case's transfer pending");
    await expect.poll(async () => (await shownSeqs()).join() === seqsOf(await logPage()).join(), { timeout: 15_000 }).toBe(true);
    await page.locator("#audit").screenshot({ path: join(ARTIFACTS, "console-audit-1280.png") });

    const live = await shownSeqs();
    await page.getByRole("button", { name: "Older" }).click();
    const older = seqsOf(await logPage(live[live.length - 1]));
    await expect.poll(shownSeqs).toEqual(older);
    expect(older).toHaveLength(20);
    expect(Math.max(...older)).toBeLessThan(Math.min(...live));
    await newer.click();
    await expect.poll(async () => (await shownSeqs()).join() === seqsOf(await logPage()).join()).toBe(true);

    const exported = (await service.app.inject({ method: "GET", url: "/audit", headers: { ...AUTHORIZATION, accept: "text/csv" } })).body;
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
    expect(download.suggestedFilename()).toMatch(/^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.csv$/);
    const saved = await readFile(await download.path(), "utf8");
    // Oldest first, as the export is: entries made since it was read can only follow.
    expect(saved.startsWith(exported)).toBe(true);
    expect(exported.split("\r\n")[0]).toBe("seq,at,kind,transferId,actor,detail,prevHash,hash");
    await expect.poll(() => page.locator("#outcome").textContent()).toBe(`Saved the audit log as ${download.suggestedFilename()}.`);
  });

  it("serves each view's module without a key under the page's security policy, and nothing else under /console/", async () => {
    // The page is made of ES modules, one per view: each is served as the entry is.
    for (const module of ["app.js", "session.js", "views/transfers.js", "views/wallet.js", "views/audit.js"]) {
      const served = await fetch(`${base}/console/${module}`);
      expect(served.status, module).toBe(200);
      expect(served.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(served.headers.get("content-security-policy")).toContain("script-src 'self'");
    }
    // Open without a key, but only the compiled modules: an unknown module is an unknown path.
    const unknown = await fetch(`${base}/console/nothing.js`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).code).toBe("ROUTE_NOT_FOUND");
    // What is not a module's plain name is not open at all (a follower would forward it unchecked): a
    // source file, a build file, an escaped way out of the folder (fetch itself resolves a plain one).
    for (const path of ["/console/app.ts", "/console/.tsbuildinfo", "/console/..%2F..%2Fpackage.json", "/console/%2E%2E%2Ftransfers.js"]) {
      const answer = await fetch(`${base}${path}`);
      expect(answer.status, path).toBe(401);
      expect((await answer.json()).code, path).toBe("AUTH_REQUIRED");
    }
  });
});
