/** Keeps the wallet snapshot fresh in the background, so requests never wait for it. */
import type { WalletSnapshot } from "./wallet-snapshot.js";

export interface SnapshotPollerOptions {
  read: () => Promise<WalletSnapshot>;
  onSnapshot: (snapshot: WalletSnapshot) => void;
  onError: (error: unknown) => void;
  intervalMs: number;
}

/** Reads a snapshot every interval; concurrent refreshes share one read. */
export class SnapshotPoller {
  readonly #options: SnapshotPollerOptions;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;

  constructor(options: SnapshotPollerOptions) {
    this.#options = options;
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.refresh(), this.#options.intervalMs).unref();
  }

  /** Reads a new snapshot now, unless a read is already under way (then waits for that one). */
  refresh(): Promise<void> {
    this.#inFlight ??= this.#options
      .read()
      .then(this.#options.onSnapshot, this.#options.onError)
      .finally(() => (this.#inFlight = undefined));
    return this.#inFlight;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#inFlight;
  }
}
