/**
 * vitest's global setup: the system packages some tests need (Chromium for the console, SoftHSM2 for the
 * PKCS#11 signer, moto_server for AWS KMS), each for the test files of this run that need it: a run of one
 * file that needs none installs and reports nothing. A missing Debian package is installed where this
 * process can (as root, with apt-get), said first; one still missing is reported here, with the command
 * that installs it, and its tests say NOT RUN. With CI=true a missing package fails the run: CI must run
 * everything.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { chromiumMissing } from "./helpers/chromium.js";
import { motoMissing } from "./helpers/moto-kms.js";
import { selectedTestFiles } from "./helpers/selected-test-files.js";
import { softHsmMissing } from "./helpers/softhsm.js";

interface SystemPackage {
  /** Why it cannot be used here, or undefined. */
  missing: () => string | undefined;
  /** The Debian package that provides it; undefined when it is not one. */
  debian?: string;
  install: string;
  /** The helper its tests import (test/helpers/<name>.ts): the test files that need it are those that do. */
  helper: string;
}

const PACKAGES: SystemPackage[] = [
  { missing: chromiumMissing, debian: "chromium", install: "apt-get install chromium", helper: "chromium" },
  { missing: softHsmMissing, debian: "softhsm2", install: "apt-get install softhsm2", helper: "softhsm" },
  { missing: motoMissing, install: "pip install 'moto[server]'", helper: "moto-kms" },
];

export default function setup(): void {
  const needed = neededBySelectedTests();
  if (needed.length === 0) return;
  const installable = needed.filter(({ wanted }) => wanted.debian && wanted.missing()).map(({ wanted }) => wanted.debian as string);
  if (installable.length > 0 && process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    console.log(`the selected tests need system packages that are missing; installing ${installable.join(", ")} first (apt-get, as root)`);
    try {
      execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
      execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...installable], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    } catch (error) {
      console.log(`could not install them: ${(error as Error).message}`);
    }
  }
  const stillMissing = needed.flatMap(({ wanted, files }) => {
    const why = wanted.missing();
    return why ? [`${why}; ${files.join(", ")} NOT RUN. Install: ${wanted.install}`] : [];
  });
  if (stillMissing.length === 0) return;
  const report = `tests that need a system package will not run:\n  ${stillMissing.join("\n  ")}`;
  if (process.env.CI === "true") throw new Error(`CI=true and ${report}`);
  console.log(report);
}

/** The packages the files of this run need, with those files. */
function neededBySelectedTests(): { wanted: SystemPackage; files: string[] }[] {
  const selected = selectedTestFiles();
  return PACKAGES.flatMap((wanted) => {
    const imports = new RegExp(`helpers/${wanted.helper}\\.js"`);
    const files = selected.filter((file) => imports.test(readFileSync(file, "utf8")));
    return files.length > 0 ? [{ wanted, files }] : [];
  });
}
