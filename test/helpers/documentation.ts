/** The documentation a reader follows, in reading order: the README, then the pages of docs/. */
import { readFileSync } from "node:fs";

export const DOCUMENTS = [
  "README.md",
  "docs/api.md",
  "docs/webhooks.md",
  "docs/client.md",
  "docs/signers.md",
  "docs/operating.md",
  "docs/replicas.md",
  "docs/wallet-pool.md",
  "docs/safety.md",
  "docs/nodes.md",
  "docs/endpoints.md",
  "docs/networks.md",
  "docs/payouts.md",
  "docs/speed.md",
  "docs/architecture.md",
  "docs/development.md",
];

/** Every document's text, one after the other. */
export function documentation(): string {
  return DOCUMENTS.map((path) => readFileSync(path, "utf8")).join("\n");
}
