/**
 * Two-person approval in the fault simulation. Transfers and payout batches of the default token above
 * APPROVAL_ABOVE_TOKENS are answered 202 and wait. Every request gets a plan when it is made (approve,
 * reject, both at once, approve twice at once, reject then approve, or nothing until it expired after
 * APPROVAL_TTL_HOURS, then a late approval) and a delay;
 * once it is answered 202, its decisions go out that much later, in the same wave, among the wave's faults
 * and its kill -9. A decision nothing answered (a kill, a 503) is sent again in each later wave and, once the
 * faults stop, until answered or past the transfer's time; then nothing may still wait.
 *
 * The invariants (approvalViolations, with the payment checks of the caller):
 * - a request above the threshold is never answered 200 before an approval was sent for it;
 * - one decision per transfer: never two approvals, never an approval and a rejection, both answered 200;
 * - a transfer sent after waiting was decided by an admin key (never the expiry, never undecided), and only
 *   when an approval was asked for; every waiting entry in the history holds to that, including those whose
 *   client never heard its 202 (killed); one rejected or never approved is never sent, and never paid;
 * - what an approval answered is what was sent; the key then answers it (a transfer, byte for byte), and a
 *   rejected, expired or refused one answers 417.
 */
import { request } from "undici";
import { AUTHORIZATION, TEST_API_KEY } from "../helpers/service.js";

/** The second admin key: the one that decides (the simulation asks with TEST_API_KEY, which may not). */
const APPROVER_KEY = "simulation-approver-key-0a9c4e71d2";

/** Whole tokens of the default token above which a transfer or batch (by its total) waits. */
export const APPROVAL_ABOVE_TOKENS = 7n;

/** About 7 s: decisions go out within half a second of the 202; one left undecided expires within the run. */
const APPROVAL_TTL_HOURS = "0.002";

/** The variables that turn approvals on (APPROVAL_ABOVE itself is the caller's: a variable, or per token in NETWORKS_FILE). */
export const APPROVAL_SETTINGS = { API_KEYS: `admin:${TEST_API_KEY},admin:${APPROVER_KEY}`, APPROVAL_TTL_HOURS };

/** Room for the expiry sweep (every 5 s) after a transfer's time. */
const SWEEP_MARGIN_MS = 6_000;

type Plan = "approve" | "reject" | "approve and reject at once" | "approve twice at once" | "reject, then approve" | "none, then approve late";
type Decision = "approve" | "reject";

// The decisions of a plan, in steps: each step's sent at once, once the step before was answered. A plan
// "none" is decided only after its time, once the faults stopped (finishDecisions): an approval then is late.
const DECISIONS: Record<Plan, readonly (readonly Decision[])[]> = {
  approve: [["approve"]],
  reject: [["reject"]],
  "approve and reject at once": [["approve", "reject"]],
  "approve twice at once": [["approve", "approve"]],
  "reject, then approve": [["reject"], ["approve"]],
  "none, then approve late": [],
};

/** What is done about a request if it waits, drawn when it is made (so a seed draws the same whatever waits). */
export interface ApprovalPlan {
  plan: Plan;
  /** After its 202, before its decisions go out. */
  delayMs: number;
}

/** A request answered 202, and what its decisions were answered. */
export interface Waiting {
  id: number;
  expiresAt: number;
  /** An approval was sent (answered or not): from then on a 200 for its key is no surprise. */
  approveSent: boolean;
  answers: { decision: Decision; status: number; body: string }[];
}

/** What the simulation asked, as far as approvals go. */
export interface ApprovalItem {
  key: string | undefined;
  payout?: unknown;
  first: { status: number; body: string } | undefined;
  /** Above the threshold: it must wait. */
  mustWait: boolean;
  /** A 200 came for it before any approval was sent. */
  answeredWithoutWaiting?: boolean;
  planned: ApprovalPlan;
  approval?: Waiting;
}

/** One transfer as the history lists it (GET /transfers). */
export interface Listed {
  state: string;
  hash: string | null;
  approval: { decidedBy: string | null } | null;
}

/** A plan and a delay for one request, from the seed's sequence of approvals. */
export function drawPlan(draws: () => number): ApprovalPlan {
  const roll = draws();
  const plan: Plan =
    roll < 0.35 ? "approve" : roll < 0.5 ? "reject" : roll < 0.62 ? "approve and reject at once" : roll < 0.74 ? "approve twice at once" : roll < 0.84 ? "reject, then approve" : "none, then approve late";
  return { plan, delayMs: Math.floor(draws() * 400) };
}

/** Notes an answer to the item's own request: a 200 above the threshold before any approval is a violation. */
export function noteAnswer(item: ApprovalItem, status: number): void {
  if (status === 200 && item.mustWait && !item.approval?.approveSent) item.answeredWithoutWaiting = true;
}

/** Once the item's first answer is in: a 202 has its plan's decisions sent after its delay. */
export async function decideIfWaiting(baseUrl: string, item: ApprovalItem, count: (name: string) => void): Promise<void> {
  if (item.first?.status !== 202 || item.approval) return;
  const answer = JSON.parse(item.first.body) as { id: number; expiresAt: string };
  const waiting: Waiting = { id: answer.id, expiresAt: Date.parse(answer.expiresAt), approveSent: false, answers: [] };
  item.approval = waiting;
  count(`approval: ${item.planned.plan}`);
  await new Promise((resolve) => setTimeout(resolve, item.planned.delayMs));
  for (const step of DECISIONS[item.planned.plan]) await decideAll(baseUrl, waiting, step, count);
}

/**
 * Each wave: a plan whose decisions nothing answered yet (the service killed, a 503) is decided again, as an
 * operator would, while the transfer is in time; and an item whose 202 came late (a repeat) gets its plan.
 */
export async function decideAgain(baseUrl: string, items: readonly ApprovalItem[], count: (name: string) => void): Promise<void> {
  await Promise.all(
    items.map(async (item) => {
      if (!item.approval) return decideIfWaiting(baseUrl, item, count);
      const waiting = item.approval;
      if (DECISIONS[item.planned.plan].length === 0 || waiting.answers.some(({ status }) => !unanswered(status)) || Date.now() > waiting.expiresAt) return;
      count("approval: decided again (no answer before)");
      await decideAll(baseUrl, waiting, [item.planned.plan === "reject" ? "reject" : "approve"], count);
    }),
  );
}

/**
 * Once the faults stopped: every waiting item gets its plan, unanswered decisions are sent again until
 * answered or past the transfer's time, and then it waits until nothing awaits approval (the sweep), at
 * most until `deadline`.
 */
export async function finishDecisions(baseUrl: string, items: readonly ApprovalItem[], count: (name: string) => void, deadline: number): Promise<void> {
  await Promise.all(items.map((item) => decideIfWaiting(baseUrl, item, count)));
  const undecided = () => items.filter((item) => item.approval && DECISIONS[item.planned.plan].length > 0 && !item.approval.answers.some(({ status }) => !unanswered(status)));
  while (undecided().some((item) => Date.now() <= (item.approval as Waiting).expiresAt) && Date.now() < deadline) {
    await decideAgain(baseUrl, items, count);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const latest = Math.max(0, ...items.map((item) => item.approval?.expiresAt ?? 0)) + SWEEP_MARGIN_MS;
  while ([...(await listedTransfers(baseUrl)).values()].some(({ state }) => state === "awaiting_approval") && Date.now() < Math.min(latest, deadline)) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // Too late: each of these expired, and its approval must change nothing.
  const late = items.filter((item) => item.approval && item.planned.plan === "none, then approve late" && Date.now() > item.approval.expiresAt + 1_000);
  await Promise.all(late.map((item) => decideAll(baseUrl, item.approval as Waiting, ["approve"], count)));
}

// No answer (the connection broke), or one that says nothing was decided yet.
const unanswered = (status: number) => status === 0 || status === 503 || status === 500;

async function decideAll(baseUrl: string, waiting: Waiting, decisions: readonly Decision[], count: (name: string) => void): Promise<void> {
  if (decisions.includes("approve")) waiting.approveSent = true;
  await Promise.all(
    decisions.map(async (decision) => {
      const answer = await decide(baseUrl, waiting.id, decision);
      waiting.answers.push({ decision, ...answer });
      count(`approval: ${decision} answered ${answer.status}`);
    }),
  );
}

async function decide(baseUrl: string, id: number, decision: Decision): Promise<{ status: number; body: string }> {
  try {
    const response = await request(`${baseUrl}/transfers/${id}/${decision}`, {
      method: "POST",
      headers: { authorization: `Bearer ${APPROVER_KEY}` },
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    return { status: response.statusCode, body: await response.body.text() };
  } catch {
    return { status: 0, body: "" };
  }
}

/** Every transfer of every network by id (one database: ids are unique), as the history lists them; a run makes far fewer than a page. */
export async function listedTransfers(baseUrl: string): Promise<Map<number, Listed>> {
  const response = await request(`${baseUrl}/transfers?limit=500`, { headers: AUTHORIZATION });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`GET /transfers answered ${response.statusCode}: ${text.slice(0, 200)}`);
  // `approval` is there only for a transfer that waited for one.
  const { transfers } = JSON.parse(text) as { transfers: (Omit<Listed, "approval"> & { id: number; approval?: Listed["approval"] })[] };
  return new Map(transfers.map(({ id, state, hash, approval }) => [id, { state, hash, approval: approval ?? null }]));
}

/** The hash a listed transfer was sent under; null when never signed, or refused (an approval answered 417 may have signed bytes the node refused). */
export function sentAs(entry: Listed): string | null {
  return entry.hash !== null && entry.state !== "rejected" && entry.state !== "awaiting_approval" ? entry.hash : null;
}

/** Every transfer that waited and was sent was decided by an admin key: whatever its client heard (a kill may have cut off its 202). */
export function waitedAndSentViolations(listed: ReadonlyMap<number, Listed>): string[] {
  return [...listed.entries()]
    .filter(([, entry]) => entry.approval !== null && sentAs(entry) !== null && (entry.approval.decidedBy === null || entry.approval.decidedBy === "expiry"))
    .map(([id, entry]) => `transfer ${id} waited for approval and was sent as ${entry.hash}, decided by ${entry.approval?.decidedBy ?? "nobody"}`);
}

/**
 * The invariants of one item that waited (see the top), except its payment, which the caller checks against
 * `sentAs`: nothing paid when null, once (or reported failed) otherwise. `replay` asks again with its key.
 */
export async function approvalViolations(
  item: ApprovalItem & { approval: Waiting },
  listed: ReadonlyMap<number, Listed>,
  replay: () => Promise<{ status: number; body: string }>,
): Promise<{ sentAs: string | null; violations: string[] }> {
  const { id, answers } = item.approval;
  const name = `approval of ${id} (${item.key ?? "no key"}, plan ${item.planned.plan}, answers ${answers.map(({ decision, status }) => `${decision} ${status}`).join(", ") || "none"})`;
  const violations: string[] = [];
  const entry = listed.get(id);
  if (!entry) return { sentAs: null, violations: [`${name}: not listed by GET /transfers`] };
  if (entry.state === "awaiting_approval") violations.push(`${name}: still awaits approval after its time`);
  const sent = sentAs(entry);
  const approved = answers.filter(({ decision, status }) => decision === "approve" && status === 200);
  const rejected = answers.filter(({ decision, status }) => decision === "reject" && status === 200);
  if (approved.length > 1) violations.push(`${name}: approved twice`);
  if (approved.length > 0 && rejected.length > 0) violations.push(`${name}: both approved and rejected`);
  if (sent !== null && !item.approval.approveSent) violations.push(`${name}: sent as ${sent} though no approval was asked for`);
  if (sent !== null && item.planned.plan === "none, then approve late") violations.push(`${name}: approved after its time, yet sent as ${sent}`);
  if (sent !== null && rejected.length > 0) violations.push(`${name}: rejected, yet sent as ${sent}`);
  const refusedApproval = answers.some(({ decision, status }) => decision === "approve" && status === 417);
  if (sent !== null && refusedApproval && approved.length === 0) violations.push(`${name}: its approval was answered 417, yet it was sent as ${sent}`);
  const approvedHash = approved[0] && (answeredHash(approved[0].body) ?? undefined);
  if (approvedHash !== undefined && approvedHash !== sent) violations.push(`${name}: the approval answered ${approvedHash}, the history shows ${entry.state} ${entry.hash}`);
  if (item.key) {
    const first = await replay();
    const again = await replay();
    if (again.status !== first.status || again.body !== first.body) violations.push(`${name}: its key answered ${first.status}, then ${again.status} ${again.body.slice(0, 120)}`);
    if (sent !== null && (first.status !== 200 || answeredHash(first.body) !== sent)) violations.push(`${name}: sent as ${sent}, its key answered ${first.status} ${first.body.slice(0, 120)}`);
    if (sent === null && first.status !== 417) violations.push(`${name}: never sent, its key answered ${first.status} ${first.body.slice(0, 120)}`);
    // A transfer's key answers exactly what its approval answered (a batch's answers its batch, under the same hash).
    if (approved[0] && !item.payout && first.body !== approved[0].body) violations.push(`${name}: its key answered ${first.body.slice(0, 160)}, the approval ${approved[0].body.slice(0, 160)}`);
  }
  return { sentAs: sent, violations };
}

/** The hash a 200 answered: a transfer answers its record as `result`, a batch as `transaction`. */
export function answeredHash(body: string): string | null {
  const parsed = JSON.parse(body) as { result?: { hash?: string }; transaction?: { hash?: string } };
  return parsed.result?.hash ?? parsed.transaction?.hash ?? null;
}
