/**
 * A node that cannot start fails the test that needs it at once, with the reason it gave: no waiting out
 * a hook time-out (#21).
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { startAnvil } from "../../src/dev/anvil.js";
import { waitForPrinted } from "../../src/dev/node-process.js";

describe("starting a dev node", () => {
  it("fails within seconds with anvil's own words when anvil refuses to start", async () => {
    const started = Date.now();
    await expect(startAnvil(["--no-such-option"])).rejects.toThrow(/anvil exited with code \d+:[\s\S]*--no-such-option/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("fails at once, naming the program, when it cannot run at all", async () => {
    const started = Date.now();
    const child = spawn("/nonexistent/anvil", [], { stdio: ["ignore", "pipe", "pipe"] });
    await expect(waitForPrinted(child, /Listening/, "anvil", 20_000)).rejects.toThrow(/cannot run anvil \(spawn \/nonexistent\/anvil ENOENT\)/);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
