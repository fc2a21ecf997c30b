/** Where the console's browser test finds Chromium (Debian's, driven headless by playwright-core). */
import { existsSync } from "node:fs";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Why Chromium cannot run here, or undefined. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM_PATH) ? undefined : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
}
