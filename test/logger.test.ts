/** The logger's scrubbing of secrets that reach it inside errors. */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { bufferedLogDestination, createLogger } from "../src/logger.js";

describe("the logger", () => {
  it("blanks DATABASE_URL and its password wherever an error carries them", async () => {
    const { lines, sink } = capturedLines();
    const databaseUrl = "postgres://transfers:s3cret%2Fpassw0rd@db.internal:5432/transfers";
    const logger = createLogger("info", { databaseUrl }, sink);
    logger.warn({ err: new Error(`could not connect to ${databaseUrl}`) }, "one");
    logger.warn({ err: new Error("password authentication failed: s3cret/passw0rd") }, "two");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(2);
    const text = lines.join("");
    expect(text).not.toContain("s3cret");
    expect(text).toContain("[redacted]");
  });

  it("blanks each of several RPC_URL endpoints, with the provider key in its path or query", async () => {
    const { lines, sink } = capturedLines();
    const [first, second] = ["https://mainnet.infura.io/v3/0123456789abcdef0123", "https://eth.example.org/rpc?key=Zm9vYmFyYmF6cXV4"];
    const logger = createLogger("info", { rpcUrl: `${first}, ${second}` }, sink);
    logger.warn({ err: new Error(`request to ${first} failed`) }, "one");
    logger.warn({ err: new Error(`request to ${second} failed`) }, "two");
    await new Promise((resolve) => setImmediate(resolve));
    const text = lines.join("");
    expect(lines).toHaveLength(2);
    expect(text).not.toContain("0123456789abcdef0123");
    expect(text).not.toContain("Zm9vYmFyYmF6cXV4");
  });

  it("blanks every WEBHOOK_SECRET, with and without its whsec_ prefix", async () => {
    const { lines, sink } = capturedLines();
    const [first, second] = ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_c2Vjb25kLXNlY3JldC1rZXktbWF0ZXJpYWw="];
    const logger = createLogger("info", { webhookSecret: `${first}, ${second}` }, sink);
    logger.warn({ err: new Error(`cannot sign with ${first}`) }, "one");
    logger.warn({ err: new Error(`bad key material ${second.slice("whsec_".length)}`) }, "two");
    await new Promise((resolve) => setImmediate(resolve));
    const text = lines.join("");
    expect(lines).toHaveLength(2);
    expect(text).not.toContain("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect(text).not.toContain("c2Vjb25kLXNlY3JldC1rZXktbWF0ZXJpYWw=");
  });

  it("blanks AUDIT_KEY wherever an error carries it", async () => {
    const { lines, sink } = capturedLines();
    const auditKey = "audit-key-9f8e7d6c5b4a39281706f5e4d3c2b1a0";
    const logger = createLogger("info", { auditKey }, sink);
    logger.warn({ err: new Error(`cannot seal with ${auditKey}`) }, "one");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1);
    expect(lines.join("")).not.toContain("9f8e7d6c5b4a39281706");
  });

  it("blanks a pool's keys one by one, a bare API key configured with its role, and space-separated webhook secrets", async () => {
    const { lines, sink } = capturedLines();
    const keys = [`0x${"1a".repeat(32)}`, `0x${"2b".repeat(32)}`];
    const [first, second] = ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_c2Vjb25kLXNlY3JldC1rZXktbWF0ZXJpYWw="];
    const logger = createLogger("info", { privateKey: keys.join(","), apiKeys: "admin:operator-key-0123456789,read:auditor-key-0123456789", webhookSecret: `${first} ${second}` }, sink);
    logger.warn({ err: new Error(`cannot use ${keys[1]} nor ${keys[0].slice(2)}`) }, "one");
    logger.warn({ err: new Error("a client sent operator-key-0123456789 and auditor-key-0123456789") }, "two");
    logger.warn({ err: new Error(`cannot sign with ${second}`) }, "three");
    await new Promise((resolve) => setImmediate(resolve));
    const text = lines.join("");
    expect(lines).toHaveLength(3);
    for (const secret of ["1a1a1a1a1a1a", "2b2b2b2b2b2b", "operator-key", "auditor-key", "c2Vjb25kLXNlY3JldC1rZXktbWF0ZXJpYWw="]) expect(text).not.toContain(secret);
  });
});

describe("the buffered log destination", () => {
  it("writes every line, in order: a quiet service's within the flush interval, a burst by logger.flush's callback, the last ones synchronously", async () => {
    const directory = mkdtempSync(join(tmpdir(), "log-destination-"));
    try {
      const path = join(directory, "service.log");
      const destination = bufferedLogDestination(path);
      const logger = createLogger("info", {}, destination);
      const written = () => readFileSync(path, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line).msg as string);
      logger.info("quiet 1");
      logger.info("quiet 2");
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(written()).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(written()).toEqual(["quiet 1", "quiet 2"]);

      // A burst of many batches; logger.flush's callback comes once all of it is written.
      const burst = Array.from({ length: 500 }, (_, index) => `burst ${index}`);
      for (const message of burst) logger.info(message);
      await new Promise<void>((resolve, reject) => logger.flush((error) => (error ? reject(error) : resolve())));
      expect(written()).toEqual(["quiet 1", "quiet 2", ...burst]);

      // As at an exit: nothing under way, the gathered lines are written before flushSync returns.
      logger.info("last words");
      destination.flushSync();
      expect(written()).toEqual(["quiet 1", "quiet 2", ...burst, "last words"]);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

/** A destination that keeps every line the logger writes. */
function capturedLines(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, sink };
}

describe("the buffered log destination on a pipe whose reader went away", () => {
  it("drops the lines and keeps the process up, as pino's own destination did", async () => {
    // A process that logs to stdout through the destination after its reader closed the pipe.
    const script = [
      'import { bufferedLogDestination, createLogger } from "./src/logger.ts";',
      'const logger = createLogger("info", {}, bufferedLogDestination(1));',
      "await new Promise((resolve) => setTimeout(resolve, 300));",
      'for (let line = 0; line < 20000; line++) logger.info({ line }, "after the reader left");',
      "await new Promise((resolve) => setTimeout(resolve, 500));",
      'await new Promise((resolve) => logger.flush(resolve));',
      'process.stderr.write("still up\\n");',
    ].join("\n");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    try {
      child.stdout.destroy();
      let errors = "";
      child.stderr.on("data", (chunk) => (errors += chunk));
      const code = await new Promise((resolve) => child.once("exit", resolve));
      expect(errors).toContain("still up");
      expect(code).toBe(0);
    } finally {
      child.kill();
    }
  });
});
