/** Whether a request asks for CSV rather than JSON (GET /transfers, GET /audit). */

/** CSV when the client prefers it to JSON: a browser's or curl's default Accept gets JSON. */
export function wantsCsv(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*text\/csv\b/i.test(accept) && !/(^|,)\s*application\/json\b/i.test(accept.split("text/csv")[0]);
}
