/**
 * A raw transaction goes to every endpoint in rotation at once. When one takes it, that is the answer. When
 * none does, the answer reported is the one that promises least: an endpoint that already holds it, then one
 * whose answer leaves it possibly taken (no answer, words we do not know), and a refusal that proves it was
 * not taken only when every endpoint refused; a refusal in the node's words before one by the gateway.
 */
import { provesNotTaken, readNodeAnswer } from "./node-answers.js";
import { type CallOutcome, errorIn } from "./rpc-endpoint.js";

/** True when the endpoint took the transaction (answered its hash). */
export function tookIt(outcome: CallOutcome): boolean {
  return "results" in outcome && errorIn(outcome) === undefined;
}

/** The outcome to report when no endpoint took the transaction (`outcomes` is not empty). */
export function broadcastOutcomeToReport(outcomes: readonly CallOutcome[]): CallOutcome {
  return outcomes.reduce((best, outcome) => (rank(outcome) < rank(best) ? outcome : best));
}

function rank(outcome: CallOutcome): number {
  if (tookIt(outcome)) return 0;
  const { meaning } = "thrown" in outcome ? readNodeAnswer(outcome.thrown) : readNodeAnswer({ error: errorIn(outcome) });
  if (meaning === "already-known") return 1;
  if (!provesNotTaken(meaning)) return 2;
  // Nothing reached the node: the weakest refusal, reported only when no node refused in words.
  if (meaning === "rate-limited" || meaning === "connection-refused") return 4;
  return 3;
}
