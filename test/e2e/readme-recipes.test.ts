/**
 * README and docs/ examples against the dev service they describe, used as a reader would: every curl
 * command run as printed (the banner's port and key put in) and its answer compared with the one shown,
 * but for hashes, addresses and signatures; the dev banner, /health and /ready; the cancel recipe on
 * `DEV_BLOCK_TIME` (its block time 30 s there, 4 s here); the webhook examples against their schemas.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { JsonRpcProvider } from "ethers";
import { describe, expect, it } from "vitest";
import { type PayoutItemEventName, type TransferEventName, WEBHOOKS_OPENAPI, eventSchema } from "../../src/webhooks/webhook-openapi.js";
import { documentation } from "../helpers/documentation.js";
import { SERVER_ENTRY } from "../helpers/server-process.js";
import { waitForReceipt } from "../helpers/test-chain.js";

const run = promisify(execFile);

interface DevService {
  child: ChildProcess;
  key: string;
  base: string;
  /** The dev chain, read directly. */
  node: JsonRpcProvider;
  output: () => string;
  /** JOURNAL_PATH as the run has it: in a folder of its own, removed by stop(). */
  journalPath: string;
  stop(): Promise<void>;
}

/** `npm start`'s entry point with no RPC_URL, once its banner is printed. */
async function startDevService(env: Record<string, string> = {}): Promise<DevService> {
  // A dev run keeps its journal beside JOURNAL_PATH: not in the checkout's data/.
  const folder = mkdtempSync(join(tmpdir(), "dev-run-"));
  const journalPath = join(folder, "transfers.sqlite");
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    env: { ...process.env, RPC_URL: "", DEMO_SETUP: "", API_KEYS: "", AUTH_DISABLED: "", PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", JOURNAL_PATH: journalPath, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
  };
  for (const deadline = Date.now() + 30_000; !/API key: \S+/.test(output) || !/curl -s -X POST (http:\/\/127\.0\.0\.1:\d+)/.test(output); ) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`the dev service did not print its banner:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const found = (pattern: RegExp) => (pattern.exec(output) as RegExpExecArray)[1];
  const node = new JsonRpcProvider(found(/"node":"(http:\/\/127\.0\.0\.1:\d+)"/), undefined, { staticNetwork: true });
  return {
    child,
    key: found(/API key: (\S+)/),
    base: found(/curl -s -X POST (http:\/\/127\.0\.0\.1:\d+)/),
    node,
    output: () => output,
    journalPath,
    async stop() {
      node.destroy();
      await stop();
    },
  };
}

/** GET `path` of the dev service with its key, as a reader's curl would, parsed. */
async function askDevService<T>(service: DevService, path: string): Promise<T> {
  return JSON.parse((await run("curl", ["-s", `${service.base}${path}`, "-H", `authorization: Bearer ${service.key}`])).stdout) as T;
}

async function justAfterABlock(node: JsonRpcProvider): Promise<void> {
  const before = await node.getBlockNumber();
  while ((await node.getBlockNumber()) === before) await new Promise((resolve) => setTimeout(resolve, 50));
}

interface Fence {
  language: string;
  text: string;
  /** The README comment `<!-- ... -->` just before the fence, if any. */
  marker: string | undefined;
}

/** Every fenced block of the README and docs/, in reading order, without the indentation of a list item. */
function readmeFences(): Fence[] {
  const readme = documentation();
  const fences: Fence[] = [];
  let previousEnd = 0;
  for (const match of readme.matchAll(/^( *)```(\w*)\n([\s\S]*?)^\1```$/gm)) {
    const [whole, indent, language, body] = match;
    const before = readme.slice(previousEnd, match.index);
    fences.push({
      language,
      text: body.replaceAll(new RegExp(`^${indent}`, "gm"), ""),
      marker: /<!-- ([\w-]+)[^>]*-->\s*$/.exec(before)?.[1],
    });
    previousEnd = match.index + whole.length;
  }
  return fences;
}

/** The fence right after the README comment `<!-- marker ... -->`. */
function readmeFence(marker: string): string {
  const fence = readmeFences().find((candidate) => candidate.marker === marker);
  if (!fence) throw new Error(`README.md has no block marked ${marker}`);
  return fence.text;
}

interface CurlExample {
  /** Method and path, as the command has them. */
  route: string;
  command: string;
  /** The answer the README shows right after the command, if it shows one. */
  answer: unknown;
}

/** The README's curl commands against the service, but the marked recipes (their own tests run them). */
function curlExamples(): CurlExample[] {
  const fences = readmeFences();
  return fences.flatMap((fence, index) => {
    if (fence.language !== "sh" || !fence.text.includes("curl ") || !fence.text.includes("http://127.0.0.1:3000") || fence.marker !== undefined) return [];
    const [, path] = /http:\/\/127\.0\.0\.1:3000(\S+?)['" ]/.exec(fence.text) as RegExpExecArray;
    const next = fences[index + 1];
    return [{ route: `${fence.text.includes("-X POST") ? "POST" : "GET"} ${path}`, command: fence.text, answer: next?.language === "json" ? JSON.parse(next.text) : undefined }];
  });
}

/** Fields whose values differ from run to run: hashes, addresses (the dev token names itself by its address), signatures, times, rates and the dev API key's id. */
const VARYING_FIELDS = new Set(["hash", "transferHash", "carriedBy", "replacedBy", "blockHash", "r", "s", "v", "from", "to", "token", "tokenSymbol", "symbol", "address", "timestamp", "createdAt", "apiKeyId", "gasRunwayHours", "endpoint", "calls", "latencyMs"]);

/**
 * Lists where `actual` differs from the README's `documented` answer: other keys or key order (clients parse
 * the v5 record byte for byte), or another value where the value does not vary between runs. Records in
 * `substitutions` what this run has in place of each documented hash and address.
 */
function compareWithExample(actual: unknown, documented: unknown, path: string, differences: string[], substitutions: Map<string, string>, key = ""): void {
  if (documented !== null && typeof documented === "object") {
    if (actual === null || typeof actual !== "object") {
      differences.push(`${path}: ${JSON.stringify(actual)} where the README shows an object`);
      return;
    }
    const [actualKeys, documentedKeys] = [Object.keys(actual), Object.keys(documented)];
    if (actualKeys.join() !== documentedKeys.join()) differences.push(`${path}: keys ${actualKeys.join()} where the README shows ${documentedKeys.join()}`);
    for (const inner of documentedKeys) {
      compareWithExample((actual as Record<string, unknown>)[inner], (documented as Record<string, unknown>)[inner], `${path}.${inner}`, differences, substitutions, Array.isArray(documented) ? key : inner);
    }
    return;
  }
  if (VARYING_FIELDS.has(key) && typeof documented === "string" && typeof actual === "string") {
    if (/^0x[0-9a-fA-F]+$/.test(documented) && (!/^0x[0-9a-fA-F]+$/.test(actual) || actual.length !== documented.length)) differences.push(`${path}: ${actual} is not shaped like ${documented}`);
    substitutions.set(documented, actual);
    return;
  }
  if (VARYING_FIELDS.has(key) ? typeof actual !== typeof documented : actual !== documented) differences.push(`${path}: ${JSON.stringify(actual)} where the README shows ${JSON.stringify(documented)}`);
}

// The dev banner with what differs from run to run (addresses, the key, the port) put in words.
function withoutRunValues(text: string): string[] {
  return text
    .replaceAll(/0x[0-9a-fA-F]{40}/g, "<address>")
    .replaceAll(/dev_[\w-]+/g, "<key>")
    .replaceAll(/127\.0\.0\.1:\d+/g, "<host>")
    .trim()
    .split("\n")
    .map((line) => line.trimEnd());
}

function bannerInReadme(): string[] {
  const banner = readmeFences().find((fence) => fence.language === "" && fence.text.startsWith("Local dev chain ready"));
  if (!banner) throw new Error("README.md shows no dev banner");
  return withoutRunValues(banner.text);
}

function bannerAsPrinted(service: DevService): string[] {
  const output = service.output();
  const start = output.indexOf("Local dev chain ready");
  // The banner is one write, ending with an empty line.
  const end = output.indexOf("\n\n", start);
  // The run's JOURNAL_PATH is in a temporary folder; the README shows the default's, ./data.
  return withoutRunValues(output.slice(start, end).replaceAll(`${dirname(service.journalPath)}/`, "data/"));
}

// Each case starts a dev service of its own (its own dev chain, port and journal folder): they run side by
// side, as the dev runs of several readers on one machine would.
describe.concurrent("README examples", () => {
  it("the webhook examples are events as their OpenAPI schemas define them, but for what they elide", () => {
    const fences = readmeFences();
    const request = fences.findIndex((fence) => fence.language === "http" && fence.text.includes("webhook-signature"));
    const full = JSON.parse(fences[request].text.split("\n\n")[1]);
    const elided = fences[request + 1].text.trim().split("\n").map((line) => JSON.parse(line));
    expect([full, ...elided].map((event) => event.type)).toEqual(Object.keys(WEBHOOKS_OPENAPI));
    const mismatches: string[] = [];
    for (const event of [full, ...elided]) {
      const schema = eventSchema(event.type as TransferEventName | PayoutItemEventName) as TObject<{ data: TObject }>;
      const named = Object.keys(schema.properties.data.properties);
      const shown = Object.keys(event.data).filter((key) => key !== "…");
      // Fields shown in the schema's order, all of them in the full example.
      if (shown.join() !== named.filter((key) => shown.includes(key) || event === full).join()) mismatches.push(`${event.type}: fields ${shown.join()}`);
      for (const [key, value] of Object.entries(event.data)) {
        if (key === "…" || String(value).includes("…")) continue;
        const property = schema.properties.data.properties[key];
        if (!property || !Value.Check(property, value)) mismatches.push(`${event.type}: data.${key} = ${JSON.stringify(value)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });


  it("the cancel recipe on DEV_BLOCK_TIME prints 202, then cancelled", async () => {
    const service = await startDevService({ DEV_BLOCK_TIME: "4" });
    try {
      expect(service.output()).toContain("a block every 4 s");
      // A reader may be unlucky and send just before a block, which mines the transfer before its cancel;
      // the test starts right after one, so the recipe meets the case it describes.
      await justAfterABlock(service.node);
      const script = readmeFence("cancel-recipe").replaceAll("http://127.0.0.1:3000", service.base).replace("sleep 30", "sleep 9");
      const { stdout } = await run("sh", ["-c", script], { env: { ...process.env, KEY: service.key }, timeout: 30_000 });
      expect(stdout.trim().split("\n")).toEqual(["202", "cancelled"]);
    } finally {
      await service.stop();
    }
  }, 60_000);

  it("keeps the run's journal where the banner says, which audit:verify checks with no flag; the banner's outside send is reported", async () => {
    const service = await startDevService();
    try {
      const journal = /^ {2}journal: (\S+) /m.exec(service.output())?.[1];
      expect(journal).toMatch(new RegExp(`^${dirname(service.journalPath)}/dev-runs/0x[0-9a-fA-F]{40}\\.sqlite$`));
      const sent = JSON.parse((await run("curl", ["-s", "-X", "POST", `${service.base}/transfer`, "-H", "content-type: application/json", "-H", `authorization: Bearer ${service.key}`, "-d", '{"toAddress":"0x70997970C51812dc3A010C7d01b50e0d17dc79C8","amount":"2"}'])).stdout);
      await waitForReceipt({ provider: service.node }, sent.result.hash, 10_000);
      // The journal is not JOURNAL_PATH's: audit:verify says whose it checks, and that it holds.
      const verified = await run(process.execPath, ["--import", "tsx", "src/audit-verify.ts"], { env: { ...process.env, JOURNAL_PATH: service.journalPath, DATABASE_URL: "", AUDIT_KEY: "", AUDIT_KEY_FILE: "" } });
      expect(verified.stdout).toContain(`checking the newest dev run's, ${journal}`);
      expect(verified.stdout).toMatch(new RegExp(`audit log of ${journal} holds: [1-9][0-9]* entries`));
      // The recipe sends from the wallet through the node alone: the service never made it, and says so.
      const lines = service.output().split("\n");
      const recipe = lines[lines.findIndex((line) => line.startsWith("Send from the wallet outside the service")) + 1].trim();
      const answers = (await run("sh", ["-c", recipe])).stdout;
      const outsideHash = /"result":"(0x[0-9a-f]{64})"}$/.exec(answers.trim())?.[1];
      expect(outsideHash, answers).toBeDefined();
      await waitForReceipt({ provider: service.node }, outsideHash as string, 10_000);
      const wallet = () => askDevService<{ unexpectedOutflows: { hash: string }[] }>(service, "/wallet");
      for (const deadline = Date.now() + 30_000; !(await wallet()).unexpectedOutflows.some((outflow) => outflow.hash === outsideHash) && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect((await wallet()).unexpectedOutflows.map((outflow) => outflow.hash)).toContain(outsideHash);
    } finally {
      await service.stop();
    }
  }, 90_000);

  it("the payout recipe with one failing item: the demo token refuses 0x…bEEF, the other item is paid, and that one fails once final", async () => {
    const service = await startDevService();
    try {
      // The banner names the address the recipe pays and the token refuses.
      expect(service.output()).toContain("  refuses: 0x000000000000000000000000000000000000bEEF ");
      const script = readmeFence("failed-item-recipe").replaceAll("http://127.0.0.1:3000", service.base);
      const send = async () => JSON.parse((await run("sh", ["-c", script], { env: { ...process.env, KEY: service.key } })).stdout);
      // As the text says: the first payout waits for the wallet's approval of the contract; the same command again.
      let batch = await send();
      for (let tries = 0; batch.code === "PAYOUT_APPROVAL_PENDING" && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        batch = await send();
      }
      expect(batch.items?.map((item: { id: string; state: string }) => [item.id, item.state]), JSON.stringify(batch)).toEqual([["line-1", "pending"], ["line-2", "pending"]]);
      const payout = () => askDevService<{ items: { id: string; state: string; reason: string | null }[] }>(service, `/payouts/${batch.id}`);
      let seen = await payout();
      for (const deadline = Date.now() + 20_000; seen.items[0].state !== "paid" && Date.now() < deadline; seen = await payout()) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(seen.items[0]).toMatchObject({ id: "line-1", state: "paid" });
      expect(seen.items[1]).toMatchObject({ id: "line-2", state: "pending", reason: expect.stringMatching(/^the token reverted the transfer: DemoToken: this recipient is refused \(not final yet/) });
      // Settled in the journal first (finality counts from the block it is seen settled at), as it is by the
      // time a reader has typed the next command.
      const settled = async () => (await askDevService<{ oldestUnconfirmed: unknown }>(service, "/wallet")).oldestUnconfirmed === null;
      for (const deadline = Date.now() + 20_000; !(await settled()) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 200));
      const node = /^ {2}node: {4}(\S+)$/m.exec(service.output())?.[1] as string;
      await run("sh", ["-c", `curl -s ${node} -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"anvil_mine","params":["0x41"]}'`]);
      for (const deadline = Date.now() + 30_000; seen.items[1].state !== "failed" && Date.now() < deadline; seen = await payout()) await new Promise((resolve) => setTimeout(resolve, 300));
      expect(seen.items[1]).toMatchObject({ id: "line-2", state: "failed", reason: "the token reverted the transfer: DemoToken: this recipient is refused" });
    } finally {
      await service.stop();
    }
  }, 90_000);

  it("every curl example answers as shown, but for hashes, addresses and signatures", async () => {
    const service = await startDevService();
    try {
      const examples = curlExamples();
      expect(examples.map((example) => example.route)).toEqual(["POST /transfer", "POST /getTransaction", "GET /transactions/$HASH", "GET /transfers?limit=1", "POST /transactions/$HASH/cancel", "POST /transfer", "GET /wallet"]);
      // What the README shows for a hash or address, and what this run has instead: later commands use them.
      const substitutions = new Map<string, string>();
      let firstTransferHash: string | undefined;
      const differences: string[] = [];
      for (const example of examples) {
        let command = example.command.replaceAll("http://127.0.0.1:3000", service.base);
        for (const [documented, actual] of substitutions) command = command.replaceAll(documented, actual);
        const runCommand = async () => JSON.parse((await run("sh", ["-c", command], { env: { ...process.env, KEY: service.key, HASH: firstTransferHash ?? "" } })).stdout);
        let answer = await runCommand();
        // The history is the journal's: it shows a transfer mined once the wallet's next read of the chain
        // does (CHAIN_REFRESH_INTERVAL_MS), as the example does.
        for (let tries = 0; example.route.startsWith("GET /transfers") && answer.transfers?.[0]?.state !== "mined" && tries < 50; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          answer = await runCommand();
        }
        firstTransferHash ??= answer.result?.hash;
        if (example.answer === undefined) {
          // No answer shown: it must be one the README documents (here the cancel of a mined transfer).
          expect(answer).toMatchObject({ statusCode: 409, code: "TRANSFER_ALREADY_MINED" });
          continue;
        }
        compareWithExample(answer, example.answer, example.route, differences, substitutions);
        // The quick start's transfer waits for its block before the next example reads it.
        if (answer.result?.hash) await waitForReceipt({ provider: service.node }, answer.result.hash, 10_000);
      }
      expect(differences).toEqual([]);
      expect(bannerAsPrinted(service)).toEqual(bannerInReadme());
      for (const route of ["/health", "/ready"]) {
        const shown = new RegExp(`\`GET ${route}\`: \`([^\`]+)\``).exec(documentation());
        // The node's port is the test chain's own; the documentation shows anvil's default.
        const answered = (await (await fetch(`${service.base}${route}`)).text()).replaceAll(/http:\/\/127\.0\.0\.1:\d+/g, "http://127.0.0.1:8545");
        expect(answered, route).toBe(shown?.[1]);
      }
    } finally {
      await service.stop();
    }
  }, 90_000);
});
