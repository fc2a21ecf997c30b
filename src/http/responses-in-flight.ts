/** The answers a closing server still owes, so that their keep-alive connections end after them. */
import type { ServerResponse } from "node:http";

declare module "fastify" {
  interface FastifyRequest {
    /** Where the app keeps this request's answer while it is in flight (ResponsesInFlight.add). */
    inFlightSlot: number;
  }
}

/** Slots of answers whose client went away (no onResponse for them) are reclaimed from this many on. */
const RECLAIM_FROM = 1_000;

/**
 * Requests arriving while the server closes are answered with Connection: close by Fastify. Those already
 * in flight when it starts closing are not: their keep-alive connections would then hold the close up
 * until the keep-alive timeout. They are told here, before their headers are written.
 *
 * Answers are kept in numbered slots, not a Set: hashing every response into a Set cost a cached lookup
 * about 3 µs in the lookup bench, an array slot costs nothing measurable.
 */
export class ResponsesInFlight {
  readonly #slots: (ServerResponse | undefined)[] = [];
  readonly #free: number[] = [];
  #reclaimAt = RECLAIM_FROM;

  /** How many answers are tracked. */
  get size(): number {
    return this.#slots.length - this.#free.length;
  }

  /** A request came in (onRequest); the slot is given back with its answer. */
  add(response: ServerResponse): number {
    if (this.#free.length === 0 && this.#slots.length >= this.#reclaimAt) this.#reclaim();
    const slot = this.#free.pop() ?? this.#slots.length;
    this.#slots[slot] = response;
    return slot;
  }

  /** Its answer was written (onResponse). */
  delete(slot: number, response: ServerResponse): void {
    // A reclaimed slot may hold another answer by now.
    if (this.#slots[slot] !== response) return;
    this.#slots[slot] = undefined;
    this.#free.push(slot);
  }

  /** The server starts closing: every answer not yet begun ends its connection (Connection: close). */
  endConnectionsAfterAnswers(): void {
    for (const response of this.#slots) if (response !== undefined && !response.headersSent && !response.destroyed) response.setHeader("connection", "close");
  }

  #reclaim(): void {
    this.#slots.forEach((response, slot) => {
      if (response !== undefined && (response.writableFinished || response.destroyed)) this.delete(slot, response);
    });
    this.#reclaimAt = Math.max(RECLAIM_FROM, 2 * this.size);
  }
}
