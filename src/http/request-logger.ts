/** Each request's logger, made the first time something logs through it. */
import type { FastifyBaseLogger } from "fastify";
import type { Bindings, ChildLoggerOptions } from "pino";

type LogCall = (...args: unknown[]) => void;

/**
 * Fastify gives every request a child of the process logger bound to its request id. Most requests log
 * nothing through it (their one line is written by the app's completion hook, with the id as a field),
 * and making a pino child is a measurable part of a cached lookup: so it is made when first used.
 * Set as the server's `childLoggerFactory`.
 */
export function lazyRequestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}

class LazyChildLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #made: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get #logger(): FastifyBaseLogger {
    this.#made ??= this.#parent.child(this.#bindings, this.#options);
    return this.#made;
  }

  get level(): string {
    return this.#made?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#logger.level = level;
  }

  fatal(...args: unknown[]): void {
    (this.#logger.fatal as LogCall)(...args);
  }

  error(...args: unknown[]): void {
    (this.#logger.error as LogCall)(...args);
  }

  warn(...args: unknown[]): void {
    (this.#logger.warn as LogCall)(...args);
  }

  info(...args: unknown[]): void {
    (this.#logger.info as LogCall)(...args);
  }

  debug(...args: unknown[]): void {
    (this.#logger.debug as LogCall)(...args);
  }

  trace(...args: unknown[]): void {
    (this.#logger.trace as LogCall)(...args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options);
  }
}
