/**
 * Where a dev run (`npm start` without RPC_URL, or DEMO_SETUP) keeps its journal: a new file for each run,
 * since each run has a new token and a journal belongs to one chain and token, in a folder next to
 * JOURNAL_PATH, so the run can be inspected after it (`npm run audit:verify` looks there when JOURNAL_PATH
 * holds no journal).
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

const DEV_RUNS_FOLDER = "dev-runs";

/** The journal of the dev run whose demo token is at `tokenAddress`, beside `journalPath`. */
export function devRunJournalPath(journalPath: string, tokenAddress: string): string {
  return join(dirname(journalPath), DEV_RUNS_FOLDER, `${tokenAddress}.sqlite`);
}

/** The newest dev run's journal beside `journalPath`, if a dev run kept one there. */
export function latestDevRunJournal(journalPath: string): string | undefined {
  const folder = join(dirname(journalPath), DEV_RUNS_FOLDER);
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => name.endsWith(".sqlite"));
  } catch {
    return undefined;
  }
  const newestFirst = names.map((name) => join(folder, name)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return newestFirst[0];
}
