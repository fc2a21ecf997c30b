/**
 * What every concern of the SQLite journal works through: the store (one database, one group commit, one
 * failure) and the lane and network a view's transfers are made and followed on. Each concern's records
 * (journal/<concern>/sqlite-*.ts) add their methods to this class; sqlite-transfer-journal.ts joins them.
 */
import type { JournalUnavailableError } from "./journal-records.js";
import type { SqliteJournalStore } from "./sqlite-journal-store.js";

/** Which network (chain id, decimal) and token a view's transfers are made on and followed on. */
export interface ViewNetwork {
  chain: string;
  token: string;
}

/** The journal as one lane of one network sees it, before any concern's records are added. */
export class SqliteJournalView {
  constructor(
    protected readonly store: SqliteJournalStore,
    readonly lane: string,
    protected readonly network: ViewNetwork,
  ) {}

  /** The statement parameters that name this view's lane on its network. */
  protected get laneOnNetwork(): { lane: string; chain: string } {
    return { lane: this.lane, chain: this.network.chain };
  }

  get failure(): JournalUnavailableError | undefined {
    return this.store.failure;
  }

  flushed(): Promise<void> {
    return this.store.flushed();
  }
}

/** A class of journal views (a concern's records are added to one; TypeScript's mixins need the any[]). */
export type ViewClass<View extends SqliteJournalView> = new (...args: any[]) => View;
