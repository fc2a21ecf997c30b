/**
 * Makes the journal's commits durable without holding the event loop. SQLite runs with
 * `synchronous=NORMAL`, so a commit is written to the WAL file but not synced, and this syncs the WAL file
 * in libuv's thread pool after each commit; the commit's writers go on (broadcast, answer) only once that
 * sync is done. That is the durability of `synchronous=FULL`, which syncs the WAL at every commit, but the
 * 0.3 to 2 ms an fsync takes here is no longer spent on the thread that also allocates nonces and
 * broadcasts (#31 item 6). Checkpoints stay SQLite's: with NORMAL it syncs the WAL before each one and the
 * database after it.
 */
import { closeSync, fdatasync, fdatasyncSync, openSync } from "node:fs";

/** Syncs one journal's WAL file; made once the journal has been written in WAL mode (the file exists). */
export class WalSync {
  readonly #fd: number;
  #syncing = 0;
  #closed = false;

  constructor(walPath: string) {
    // SQLite keeps this file (one inode) for as long as its connection is open: reset after a checkpoint,
    // it is written again from its start, never replaced.
    this.#fd = openSync(walPath, "r");
  }

  /** Resolves once everything written to the WAL until now is on disk; rejects when the disk says no. */
  synced(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the journal's WAL is closed"));
    this.#syncing += 1;
    return new Promise((resolve, reject) =>
      fdatasync(this.#fd, (error) => {
        this.#syncing -= 1;
        if (this.#closed && this.#syncing === 0) closeSync(this.#fd);
        if (error) reject(error);
        else resolve();
      }),
    );
  }

  /** Syncs at once, on this thread: for commits made where no one waits on the loop (opening, closing). */
  syncNow(): void {
    if (!this.#closed) fdatasyncSync(this.#fd);
  }

  /** Lets go of the file, after the syncs under way. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#syncing === 0) closeSync(this.#fd);
  }
}
