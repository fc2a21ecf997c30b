/** What every view is given: the session to call the API with, and the page's own actions. */
import type { ConsoleSession } from "./session.js";

export interface ViewContext {
  session: ConsoleSession;
  /** Reads every view again (after a change, and every 2 s). */
  refresh: () => Promise<void>;
  /** Opens a transfer's page. */
  openTransfer: (hash: string) => Promise<void>;
}
