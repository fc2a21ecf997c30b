/** The request's logger is made on first use and prints what a pino child bound to the request id prints. */
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import type { FastifyBaseLogger } from "fastify";
import { lazyRequestLogger } from "../../src/http/request-logger.js";

describe("lazyRequestLogger", () => {
  it("makes no child for a request that logs nothing, one child on first use, with the same line as pino's own child", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const parent = pino({ level: "info", base: undefined, timestamp: false }, sink) as unknown as FastifyBaseLogger;
    const child = vi.spyOn(parent, "child");

    const quiet = lazyRequestLogger(parent, { reqId: "quiet-1" }, {});
    expect(quiet.level).toBe("info");
    expect(child).not.toHaveBeenCalled();

    const logging = lazyRequestLogger(parent, { reqId: "req-7" }, {});
    logging.debug("below the level");
    logging.info({ code: "X" }, "first");
    logging.warn("second");
    expect(child).toHaveBeenCalledTimes(1);
    parent.child({ reqId: "req-7" }).info({ code: "X" }, "first");
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual(['{"level":30,"reqId":"req-7","code":"X","msg":"first"}\n', '{"level":40,"reqId":"req-7","msg":"second"}\n', '{"level":30,"reqId":"req-7","code":"X","msg":"first"}\n']);
  });
});
