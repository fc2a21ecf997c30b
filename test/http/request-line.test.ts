/** The request line written by hand is the line pino prints for the same fields, byte for byte. */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { type CompletedRequest, requestLineWriter } from "../../src/http/request-line.js";
import { createLogger } from "../../src/logger.js";

function capturingLogger(level: string) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger(level, { apiKeys: "admin:a-configured-api-key-0123456789" }, sink) };
}

// The clock moves between the two lines; everything else must be equal.
const withoutTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

describe("requestLineWriter", () => {
  const requests: CompletedRequest[] = [
    { reqId: "01830e57-7a50-4f23-b4c7-14799de3845c", method: "POST", url: "/getTransaction", route: "/getTransaction", status: 200, ms: 0.4, apiKeyId: "key_c19a0ff78015" },
    { reqId: "trace-123", method: "GET", url: "/transfers?limit=5&token=[redacted]", route: "/transfers", status: 400, ms: 12, apiKeyId: undefined },
    { reqId: 'a "quoted" \\ id\twith\u0001control and ünïcödé \u2028', method: "GET", url: "/nowhere/ä?x=[redacted]", route: "unmatched", status: 404, ms: 1234.5, apiKeyId: "anonymous" },
  ];

  it("prints what pino's logger.info prints for the same fields, at info", async () => {
    const { lines, logger } = capturingLogger("info");
    const write = requestLineWriter(logger);
    expect(write).toBeDefined();
    for (const request of requests) {
      write?.(request);
      logger.info({ ...request }, "request completed");
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(2 * requests.length);
    for (let index = 0; index < lines.length; index += 2) {
      expect(withoutTime(lines[index])).toBe(withoutTime(lines[index + 1]));
      expect(JSON.parse(lines[index])).toMatchObject({ level: 30, msg: "request completed", reqId: requests[index / 2].reqId });
    }
  });

  it("writes nothing when info is not logged", () => {
    expect(requestLineWriter(capturingLogger("warn").logger)).toBeUndefined();
  });
});
