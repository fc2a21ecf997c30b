/**
 * vitest's global setup: the system packages some tests need (Chromium for the console, SoftHSM2 for the
 * PKCS#11 signer, moto_server for AWS KMS). A missing Debian package is installed where this process can
 * (as root, with apt-get); one still missing is reported here, with the command that installs it, and its
 * tests say NOT RUN. With CI=true a missing package fails the run: CI must run everything.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromiumMissing } from "./helpers/chromium.js";
import { motoMissing } from "./helpers/moto-kms.js";
import { softHsmMissing } from "./helpers/softhsm.js";

interface SystemPackage {
  /** Why it cannot be used here, or undefined. */
  missing: () => string | undefined;
  /** The Debian package that provides it; undefined when it is not one. */
  debian?: string;
  install: string;
  neededBy: string;
}

const PACKAGES: SystemPackage[] = [
  { missing: chromiumMissing, debian: "chromium", install: "apt-get install chromium", neededBy: "test/e2e/console.test.ts" },
  { missing: softHsmMissing, debian: "softhsm2", install: "apt-get install softhsm2", neededBy: "the PKCS#11 signer tests" },
  { missing: motoMissing, install: "pip install 'moto[server]'", neededBy: "the AWS KMS signer tests" },
];

export default function setup(): void {
  const installable = PACKAGES.filter((each) => each.debian && each.missing()).map((each) => each.debian as string);
  if (installable.length > 0 && process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    console.log(`installing the system packages some tests need: ${installable.join(", ")} (apt-get, as root)`);
    try {
      execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
      execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...installable], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    } catch (error) {
      console.log(`could not install them: ${(error as Error).message}`);
    }
  }
  const stillMissing = PACKAGES.flatMap((each) => {
    const why = each.missing();
    return why ? [`${why}; ${each.neededBy} NOT RUN. Install: ${each.install}`] : [];
  });
  if (stillMissing.length === 0) return;
  const report = `tests that need a system package will not run:\n  ${stillMissing.join("\n  ")}`;
  if (process.env.CI === "true") throw new Error(`CI=true and ${report}`);
  console.log(report);
}
