/**
 * POST /payouts: many recipients paid in one transaction through the payout contract, each item succeeding
 * or failing on its own; GET /payouts/:id: what became of the batch and of each item.
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Transaction } from "ethers";
import { InvalidAddressError, parseRecipientAddress } from "../../domain/recipient-address.js";
import { type AmountUnit, InvalidAmountError, describeAmount, formatTokenAmount, parseTokenAmount } from "../../domain/token-amount.js";
import { ServiceError } from "../../errors.js";
import type { JournalEntry, PayoutOrder, PayoutOrderItem, TransferJournal } from "../../journal/transfer-journal.js";
import { type PayoutItemStatus, type PayoutStatus, unreadEarlier } from "../../lookup/payout-status.js";
import { NATIVE_TOKEN } from "../../network-settings/network-choice.js";
import { MAX_ITEM_UNITS } from "../../node/payout-batch.js";
import { toV5TransferRecord } from "../../wire/v5-record.js";
import { seesTransferOf } from "../auth.js";
import { readIdempotencyKey } from "../idempotency-key.js";
import { ApprovalSchema, type PayoutBody, PayoutBodySchema, PayoutHeadersSchema, PayoutParamsSchema, PayoutReplySchema, errorReplies } from "../schemas.js";
import type { TransferNetwork } from "../transfer-network.js";
import type { ApprovalDesk, AwaitingApproval } from "../../approvals/approval-desk.js";
import { describeApproval } from "../approval-reply.js";

/** The most a batch's body may weigh: 200 items of the longest address, amount and id, with room to spare. */
export const PAYOUT_BODY_LIMIT_BYTES = 64 * 1024;

const ITEM_ID = /^[\x21-\x7e]{1,64}$/;

export interface PayoutRouteOptions {
  /** The network and token a batch names (the default when it names none), as POST /transfer chooses them. */
  networkFor: (choice: { network?: string | number; token?: string }) => TransferNetwork;
  /** The network of a journaled batch (503 while it is not running). */
  networkOfEntry: (entry: JournalEntry) => TransferNetwork;
  journal: Pick<TransferJournal, "findByKey" | "findById" | "payoutItemsHeld" | "history">;
  /** Throws while the service does not sign (PAUSE_ON_UNEXPECTED_OUTFLOW): a new batch is answered 503, a repeat its first answer. */
  assertSigning: () => void;
  /** Where a batch above APPROVAL_ABOVE waits for a second admin key. */
  approvals: Pick<ApprovalDesk, "request" | "sendUnlessWaiting">;
}

const POST_PAYOUT_SCHEMA = {
  summary: "Pay many recipients in one transaction",
  description:
    "Pays every item through the payout contract in one transaction and answers at once, before it is mined. " +
    "Everything is checked first (each item's address, amount and id, the total against the balance, the policy per item and in total): " +
    "a bad item is a 400 naming its index, and nothing is sent. Each item then succeeds or fails on its own on chain " +
    "(a recipient the token refuses fails alone, with the token's reason). An item whose id an earlier batch of the same API key holds " +
    "is not paid again: it is answered with that batch's id (duplicateOf); the same id with another recipient or amount is a 422 PAYOUT_ITEM_ID_REUSED, and nothing is sent. The Idempotency-Key is required; its repeat answers the first batch. " +
    "The batch's transaction has the whole contract of a transfer (journaled before sent, re-sent, re-priced, cancellable, followed to finality). " +
    "The first payout in a token has the wallet approve the payout contract once: until that is mined, 503 PAYOUT_APPROVAL_PENDING, with the key unused. " +
    "A batch whose total is above APPROVAL_ABOVE is answered 202 with its id, awaiting_approval, as POST /transfer is: nothing is signed until " +
    "another admin key approves it (POST /transfers/{id}/approve); its items' ids are held meanwhile.",
  tags: ["payouts"],
  operationId: "payout",
  headers: PayoutHeadersSchema,
  body: PayoutBodySchema,
  response: { 200: PayoutReplySchema, 202: ApprovalSchema, ...errorReplies(400, 401, 403, 409, 413, 415, 417, 422, 429, 500, 503) },
};

const GET_PAYOUT_SCHEMA = {
  summary: "What became of a payout batch and of each item",
  description:
    "The batch's transaction record as POST /payouts answered it, its status document (state, confirmations, attempts, finality), " +
    "and each item's state: pending until the batch is mined, then paid or failed (with the token's reason). " +
    "A transfer key's request for another API key's batch is not found (read and admin keys see every batch).",
  tags: ["payouts"],
  operationId: "getPayout",
  params: PayoutParamsSchema,
  response: { 200: PayoutReplySchema, ...errorReplies(400, 401, 403, 404, 500, 503) },
};

export const payoutRoutes: FastifyPluginAsyncTypebox<PayoutRouteOptions> = async (app, { networkFor, networkOfEntry, journal, assertSigning, approvals }) => {
  const { findEntry, earlierItem, orderLeavingOutHeld } = payoutBatches(journal, networkOfEntry);

  app.post("/payouts", { bodyLimit: PAYOUT_BODY_LIMIT_BYTES, schema: POST_PAYOUT_SCHEMA }, async (request, reply) => {
    const chosen = networkFor(request.body);
    const contract = payoutContractOf(chosen);
    const unit = { symbol: chosen.token.symbol, decimals: chosen.tokenDecimals };
    const items = readItems(request.body.items, unit);
    const key = readIdempotencyKey(request.headers["idempotency-key"]);
    if (key === undefined) throw new ServiceError("IDEMPOTENCY_KEY_REQUIRED", "POST /payouts needs an Idempotency-Key header: only the key makes a retry of a batch safe");
    const { apiKeyId } = request;
    const journalKey = `${apiKeyId}/${key}`;
    const { order, paid } = await orderLeavingOutHeld(items, { apiKeyId, journalKey, contract, unit });
    const units = paid.reduce((total, item) => total + item.units, 0n);
    const authorize = () => {
      assertSigning();
      return chosen.policy.authorizePayout(apiKeyId, paid);
    };
    const batchRequest = { recipient: contract, units, apiKeyId, token: chosen.token.address, payout: order };
    const answerWaiting = (awaiting: AwaitingApproval) => {
      if (awaiting.replayed) reply.header("idempotent-replayed", "true");
      request.log.info({ payout: awaiting.entry.id, items: order.items.length, paid: paid.length, units: units.toString(), network: chosen.network.name, replayed: awaiting.replayed }, "payout awaits an admin's approval");
      return reply.code(202).send(describeApproval(awaiting.entry, chosen));
    };
    const decision = chosen.policy.decideApproval(apiKeyId, units, paid.map((item) => item.recipient));
    let outcome;
    try {
      if (decision.needsApproval) {
        // Checked now (403, a pause's 503), counted against the key's cap only when it is approved and sent.
        const awaiting = await approvals.request(chosen, batchRequest, journalKey, () => authorize()());
        if (awaiting) return answerWaiting(awaiting);
      }
      outcome = await approvals.sendUnlessWaiting(chosen, batchRequest, journalKey, () => chosen.transfers.sendTokenTransfer(batchRequest, journalKey, authorize));
    } finally {
      decision.release();
    }
    if ("awaiting" in outcome) return answerWaiting(outcome.awaiting);
    const { transfer, replayed } = outcome.sent;
    const entry = journal.findByKey(journalKey);
    if (!entry?.payout) throw new Error(`payout ${journalKey} was sent but the journal holds no batch under its key`);
    if (replayed) reply.header("idempotent-replayed", "true");
    request.log.info({ hash: transfer.hash, payout: entry.id, items: order.items.length, paid: paid.length, units: units.toString(), network: chosen.network.name, replayed }, replayed ? "payout answered from the journal (repeated Idempotency-Key)" : "payout sent");
    return {
      id: entry.id,
      network: chosen.network.name,
      token: chosen.token.symbol,
      contract: entry.payout.contract,
      transaction: toV5TransferRecord(transfer),
      items: await answeredItems(entry.payout, chosen.tokenDecimals, earlierItem),
    };
  });

  app.get("/payouts/:id", { schema: GET_PAYOUT_SCHEMA }, async (request) => {
    const id = Number(request.params.id);
    const entry = await findEntry(id);
    // A batch the node refused at its first broadcast was never sent (its client was told 417): its signed
    // bytes are shown to nobody, for they could still be broadcast.
    if (!entry?.payout || !entry.hash || !entry.rawTransaction || entry.state === "rejected" || !seesTransferOf(request, entry.apiKeyId)) {
      throw new ServiceError("PAYOUT_NOT_FOUND", `no payout batch ${id} of this API key was sent (a batch refused with 417 was never sent)`);
    }
    const network = networkOfEntry(entry);
    const status: PayoutStatus = await network.payouts.read({ ...entry, payout: entry.payout }, earlierItem);
    const transfer = { transaction: Transaction.from(entry.rawTransaction), hash: entry.hash, from: entry.lane };
    return {
      id: entry.id,
      network: network.network.name,
      token: network.token.symbol,
      contract: status.contract,
      transaction: toV5TransferRecord(transfer),
      items: status.items,
      status: status.transaction,
    };
  });
};

/** The journal's batches as the routes read them: by id, an item of an earlier batch, and a new batch without the items earlier ones hold. */
function payoutBatches(journal: PayoutRouteOptions["journal"], networkOfEntry: PayoutRouteOptions["networkOfEntry"]) {
  // A journaled entry by id, wherever the journal keeps it (a working copy asks the shared database).
  const findEntry = async (id: number): Promise<JournalEntry | undefined> =>
    journal.findById(id) ?? (await journal.history({}, id + 1, 1)).entries.find((entry) => entry.id === id);

  // The item as the earlier batch that holds its id describes it.
  const earlierItem = async (batchId: number, itemId: string): Promise<PayoutItemStatus | undefined> => {
    const batch = await findEntry(batchId);
    if (!batch?.payout || !batch.hash) return undefined;
    const status = await networkOfEntry(batch).payouts.read({ ...batch, payout: batch.payout }, async () => undefined);
    return status.items.find((item) => item.id === itemId);
  };

  /**
   * The batch to send: a repeat is answered from the journal as the first batch was; a new batch leaves out
   * the items an earlier one holds (the claim takes the ids of the rest, or refuses if one was taken meanwhile).
   */
  const orderLeavingOutHeld = async (items: PayoutOrderItem[], batch: { apiKeyId: string; journalKey: string; contract: string; unit: AmountUnit }) => {
    const repeat = journal.findByKey(batch.journalKey) !== undefined;
    const held = repeat ? new Map<string, number>() : await journal.payoutItemsHeld(batch.apiKeyId, items.map((item) => item.id));
    for (const holder of new Set(held.values())) refuseUnsettledHolder(items, held, holder, await findEntry(holder), batch.unit);
    const order: PayoutOrder = { contract: batch.contract, items: items.map((item) => (held.has(item.id) ? { ...item, duplicateOf: held.get(item.id) } : item)) };
    const paid = order.items.flatMap((item, index) => (item.duplicateOf === undefined ? [{ index, recipient: item.recipient, units: item.units }] : []));
    if (paid.length === 0) {
      const batches = [...new Set(held.values())].join(", ");
      throw new ServiceError("PAYOUT_ITEMS_DUPLICATE", `every item's id is held by an earlier batch of this API key (batches ${batches}; GET /payouts/{id}); nothing was sent`);
    }
    return { order, paid };
  };

  return { findEntry, earlierItem, orderLeavingOutHeld };
}

/** The payout contract a batch on this network and token is paid through; 400 PAYOUTS_NOT_CONFIGURED where there is none. */
function payoutContractOf(chosen: TransferNetwork): string {
  const contract = chosen.payoutContract;
  if (!contract || chosen.token.address === NATIVE_TOKEN) {
    throw new ServiceError("PAYOUTS_NOT_CONFIGURED", `network ${chosen.network.name} pays no payouts in ${chosen.token.symbol}: ${contract ? "payouts pay ERC-20 tokens only" : "it has no payout contract (PAYOUT_CONTRACT)"}`);
  }
  return contract;
}

/** An earlier batch that holds some of the items' ids: refused if it holds them with another recipient or amount, or is not settled yet. */
function refuseUnsettledHolder(items: PayoutOrderItem[], held: Map<string, number>, holder: number, batch: JournalEntry | undefined, unit: AmountUnit): void {
  refuseReusedItemIds(items, held, holder, batch, unit);
  // A batch not signed yet may still be refused (and pay nothing): whether its items are paid is not known.
  if (batch?.state === "claimed") {
    throw new ServiceError("PAYOUT_ITEM_IN_FLIGHT", `batch ${holder} holds some of these item ids and is still being sent; nothing was sent. Retry with the same Idempotency-Key shortly.`);
  }
  // It may yet be rejected (and pay nothing) or approved: whether its items are paid is not known.
  if (batch?.state === "awaiting-approval") {
    throw new ServiceError("PAYOUT_ITEM_IN_FLIGHT", `batch ${holder} holds some of these item ids and awaits an admin's approval; nothing was sent. Retry with the same Idempotency-Key once it is decided.`);
  }
}

/** The items of a request, checked: each a 400 naming its index. */
function readItems(items: PayoutBody["items"], unit: AmountUnit): PayoutOrderItem[] {
  const seen = new Map<string, number>();
  return items.map((item, index) => {
    const place = `items[${index}]`;
    if (!ITEM_ID.test(item.id)) throw new ServiceError("INVALID_PAYOUT", `${place}.id: must be 1 to 64 printable ASCII characters without spaces`);
    const earlier = seen.get(item.id);
    if (earlier !== undefined) throw new ServiceError("INVALID_PAYOUT", `${place}.id: "${item.id}" is also items[${earlier}]'s; each item of a batch needs its own id`);
    seen.set(item.id, index);
    let recipient: string;
    try {
      recipient = parseRecipientAddress(item.toAddress);
    } catch (error) {
      if (error instanceof InvalidAddressError) throw new ServiceError("INVALID_PAYOUT", `${place}.toAddress: ${error.message}`);
      throw error;
    }
    let units: bigint;
    try {
      units = parseTokenAmount(item.amount, unit.decimals);
    } catch (error) {
      if (error instanceof InvalidAmountError) throw new ServiceError("INVALID_PAYOUT", `${place}.amount: ${error.message}`);
      throw error;
    }
    if (units > MAX_ITEM_UNITS) throw new ServiceError("INVALID_PAYOUT", `${place}.amount: an item may pay at most ${describeAmount(MAX_ITEM_UNITS, unit)}, 2^96 - 1 base units`);
    return { id: item.id, recipient, units };
  });
}

/**
 * An item id names one payment, as an Idempotency-Key names one request: an id an earlier batch holds, sent
 * with another recipient or amount, is the client's mistake, and answering it as that batch's duplicate would
 * report the new recipient paid. Refused (422) before anything is claimed. A holder the journal no longer
 * shows (archived by retention) cannot be compared: its items stay unpaid duplicates, answered as unread.
 */
function refuseReusedItemIds(items: PayoutOrderItem[], held: ReadonlyMap<string, number>, holder: number, batch: JournalEntry | undefined, unit: AmountUnit): void {
  const first = new Map((batch?.payout?.items ?? []).map((item) => [item.id, item]));
  for (const [index, item] of items.entries()) {
    const earlier = held.get(item.id) === holder ? first.get(item.id) : undefined;
    if (earlier === undefined || (earlier.recipient.toLowerCase() === item.recipient.toLowerCase() && earlier.units === item.units)) continue;
    const describe = (paying: PayoutOrderItem) => `${describeAmount(paying.units, unit)} to ${paying.recipient}`;
    throw new ServiceError(
      "PAYOUT_ITEM_ID_REUSED",
      `items[${index}].id: "${item.id}" is batch ${holder}'s item paying ${describe(earlier)}; this one would pay ${describe(item)}. Nothing was sent: give another payment its own id (GET /payouts/${holder})`,
    );
  }
}

// As the batch is answered when it is sent: its own items pending, an item an earlier batch holds as that
// one describes it. Sent already: a failed read of the earlier batch must not turn the answer into an error.
async function answeredItems(order: PayoutOrder, decimals: number, earlierItem: (batchId: number, itemId: string) => Promise<PayoutItemStatus | undefined>): Promise<PayoutItemStatus[]> {
  return Promise.all(
    order.items.map(async (item) => {
      const described = { id: item.id, toAddress: item.recipient, amount: formatTokenAmount(item.units, decimals), units: item.units.toString() };
      if (item.duplicateOf === undefined) return { ...described, state: "pending" as const, reason: null, duplicateOf: null };
      const first = await earlierItem(item.duplicateOf, item.id).catch(() => undefined);
      return { ...described, ...(first ? { state: first.state, reason: first.reason } : unreadEarlier(item.duplicateOf)), duplicateOf: item.duplicateOf };
    }),
  );
}
