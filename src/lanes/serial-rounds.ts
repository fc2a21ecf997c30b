/**
 * Runs a round of background work one at a time, for the newest chain head asked for: a round asked for
 * while one runs comes right after it (the last block of a burst may bring no other), once, for the
 * highest head asked for meanwhile.
 */
export class SerialRounds {
  #running: Promise<unknown> | undefined;
  #nextHead: number | undefined;
  #stopped = false;

  constructor(
    private readonly round: (head: number) => Promise<void>,
    private readonly onError: (error: unknown) => void,
    /** False while no round may start (a journal that takes no writes). */
    private readonly mayRun: () => boolean = () => true,
  ) {}

  /** Asks for a round at `head`. */
  run(head: number): void {
    if (this.#stopped || !this.mayRun()) return;
    if (this.#running) {
      this.#nextHead = Math.max(this.#nextHead ?? head, head);
      return;
    }
    this.#running = this.round(head)
      .catch(this.onError)
      .finally(() => {
        this.#running = undefined;
        const next = this.#nextHead;
        this.#nextHead = undefined;
        if (next !== undefined) this.run(next);
      });
  }

  /** Asks for one more round at `head` once this one is over (work found that the next round finishes). */
  again(head: number): void {
    this.#nextHead ??= head;
  }

  /** No round starts any more; resolves once the one under way is over. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }
}
