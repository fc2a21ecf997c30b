/** The answers a closing server still owes: told to end their connections, and not kept once gone. */
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { ResponsesInFlight } from "../../src/http/responses-in-flight.js";

function fakeResponse(state: Partial<Pick<ServerResponse, "headersSent" | "destroyed" | "writableFinished">> = {}) {
  const headers = new Map<string, string>();
  const response = { headersSent: false, destroyed: false, writableFinished: false, ...state, setHeader: (name: string, value: string) => headers.set(name, value) };
  return { response: response as unknown as ServerResponse, headers };
}

describe("ResponsesInFlight", () => {
  it("gives Connection: close to answers not yet begun, and leaves written or abandoned ones alone", () => {
    const inFlight = new ResponsesInFlight();
    const waiting = fakeResponse();
    const writing = fakeResponse({ headersSent: true });
    const abandoned = fakeResponse({ destroyed: true });
    for (const { response } of [waiting, writing, abandoned]) inFlight.add(response);
    const done = fakeResponse();
    inFlight.delete(inFlight.add(done.response), done.response);
    inFlight.endConnectionsAfterAnswers();
    expect(waiting.headers.get("connection")).toBe("close");
    expect(writing.headers.size).toBe(0);
    expect(abandoned.headers.size).toBe(0);
    expect(done.headers.size).toBe(0);
  });

  it("reclaims the slots of answers whose client went away (no onResponse for them) once a thousand are tracked", () => {
    const inFlight = new ResponsesInFlight();
    const open = Array.from({ length: 10 }, () => fakeResponse().response);
    const openSlots = open.map((response) => inFlight.add(response));
    const gone = Array.from({ length: 990 }, () => fakeResponse({ destroyed: true }).response);
    const goneSlots = gone.map((response) => inFlight.add(response));
    expect(inFlight.size).toBe(1000);
    const next = fakeResponse().response;
    const nextSlot = inFlight.add(next);
    expect(inFlight.size).toBe(11);
    // A slot taken back and given to another answer is not freed by the late onResponse of the first.
    const reused = goneSlots.indexOf(nextSlot);
    expect(reused).toBeGreaterThanOrEqual(0);
    inFlight.delete(nextSlot, gone[reused]);
    expect(inFlight.size).toBe(11);
    inFlight.delete(nextSlot, next);
    open.forEach((response, index) => inFlight.delete(openSlots[index], response));
    expect(inFlight.size).toBe(0);
  });
});
