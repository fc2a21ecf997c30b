/**
 * A raw transaction goes to every endpoint in rotation at once. When one takes it, that is the answer. When
 * none does, the answer reported is the one that promises least: an endpoint that already holds it, or whose
 * words could mean that it (or a backend of its fleet) holds or mined it ("nonce too low", "replacement
 * underpriced": a gateway that retried it on a backend that had mined it says so); then one whose answer
 * leaves it possibly taken (no answer, words we do not know); and a refusal that proves it was not taken only
 * when every endpoint refused so; a refusal in the node's words before one by the gateway. Ranked by what an
 * answer could mean for money, never by which endpoint came first.
 */
import { type JsonRpcResult, makeError } from "ethers";
import { type NodeAnswerMeaning, provesNotTaken, readNodeAnswer } from "./node-answers.js";
import { type CallOutcome, deliver, errorIn } from "./rpc-endpoint.js";

/** True when the endpoint took the transaction (answered its hash). */
export function tookIt(outcome: CallOutcome): boolean {
  return "results" in outcome && errorIn(outcome) === undefined;
}

/** The outcome to report when no endpoint took the transaction (`outcomes` is not empty). */
export function broadcastOutcomeToReport(outcomes: readonly CallOutcome[]): CallOutcome {
  return outcomes.reduce((best, outcome) => (rank(outcome) < rank(best) ? outcome : best));
}

/**
 * A raw transaction sent again alone after its batch got no answer call by call (no reply, a reply cut
 * short or with answers missing, an HTTP error): the endpoint may have taken the batch all the same, so no
 * answer to the resend proves it was not taken (a node that went down meanwhile refuses the connection, one
 * that mined it meanwhile may word it as anything). Taken when the resend says so; otherwise unknown, and
 * the caller holds it for the chain to decide.
 */
export async function unprovenResend(alone: Promise<JsonRpcResult[]>): Promise<JsonRpcResult[]> {
  let outcome: CallOutcome;
  try {
    outcome = { results: await alone };
  } catch (thrown) {
    outcome = { thrown };
  }
  if (tookIt(outcome) || !provesNotTaken(meaningOf(outcome))) return deliver(outcome);
  throw makeError("the raw transaction's batch got no answer call by call, and the endpoint refused it sent again alone: what it made of the batch is not known", "NETWORK_ERROR");
}

function meaningOf(outcome: CallOutcome): NodeAnswerMeaning {
  return ("thrown" in outcome ? readNodeAnswer(outcome.thrown) : readNodeAnswer({ error: errorIn(outcome) })).meaning;
}

function rank(outcome: CallOutcome): number {
  if (tookIt(outcome)) return 0;
  const meaning = meaningOf(outcome);
  if (meaning === "already-known") return 1;
  if (mayHoldIt(meaning)) return 2;
  if (!provesNotTaken(meaning)) return 3;
  // Nothing reached the node: the weakest refusal, reported only when no node refused in words.
  if (meaning === "rate-limited" || meaning === "connection-refused") return 5;
  return 4;
}

/**
 * Words a node says of a transaction it, or a backend of its fleet, may already hold or have mined: never a
 * refusal, whatever another endpoint said; the chain decides (the transfer is held and followed, and the next
 * transfers start past the chain's count). The one table for the broadcast's ranking and the submitter.
 */
export function mayHoldIt(meaning: NodeAnswerMeaning): boolean {
  return meaning === "already-known" || meaning === "nonce-too-low" || meaning === "replacement-underpriced";
}
