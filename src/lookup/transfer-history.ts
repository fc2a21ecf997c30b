/**
 * The service's own transfers as history (GET /transfers): what the journal knows of each, newest first,
 * in the status document's shape, as JSON items or CSV rows. Read from the journal only, so a page or a
 * million-row export costs the node nothing; what only the chain knows (confirmations, gas used) is for
 * GET /transactions/:hash.
 */
import { csvField } from "../domain/csv.js";
import { formatTokenAmount } from "../domain/token-amount.js";
import type { HistoryFilter, JournalEntry, JournalState, TransferJournal } from "../journal/transfer-journal.js";
import { type ServedNetwork, servedNetworkOf, tokenAt } from "../network-settings/network-choice.js";
import { type AttemptStatus, describeAttempts } from "./transaction-status.js";

/**
 * A transfer's state as the journal knows it. awaiting_approval: above APPROVAL_ABOVE, it waits for a second
 * admin key, nothing signed. sending: its key is claimed, nothing signed yet. pending:
 * signed, not mined. mined: the chain used its nonce with one of its attempts. replaced: another
 * transaction was mined at its nonce. rejected: refused before or at its first broadcast (417). cancelled:
 * its cancel was mined.
 */
export type HistoryState = "awaiting_approval" | "sending" | "pending" | "mined" | "replaced" | "rejected" | "cancelled";

export const HISTORY_STATES: readonly HistoryState[] = ["awaiting_approval", "sending", "pending", "mined", "replaced", "rejected", "cancelled"];

const JOURNAL_STATES: Record<HistoryState, readonly JournalState[]> = {
  awaiting_approval: ["awaiting-approval"],
  sending: ["claimed"],
  pending: ["signed", "accepted"],
  mined: ["nonce-used"],
  replaced: ["replaced"],
  rejected: ["refused", "rejected"],
  cancelled: ["cancelled"],
};

/** transfer: a client's token transfer; gas-top-up: ETH sent to another lane; nonce-filler: a 0-value self-transaction. */
export type HistoryKind = "transfer" | "payout" | "gas-top-up" | "payout-approval" | "nonce-filler";

export interface HistoryItem {
  /** Its place in the history: pages continue below the last id (the cursor). */
  id: number;
  hash: string | null;
  state: HistoryState;
  kind: HistoryKind;
  /** The network's name (NETWORKS_FILE's, or the chain id in decimal) and chain id. */
  network: string;
  chainId: number;
  transfer: { token: string; tokenSymbol: string; from: string; to: string; amount: string; amountInTokens: string | null; requestedAmount: string };
  carriedBy: string | null;
  nonce: number | null;
  idempotencyKey: string | null;
  apiKeyId: string | null;
  refusal: { code: string; message: string } | null;
  attempts: AttemptStatus[];
  finalized: boolean;
  finalizedBlock: number | null;
  createdAt: string;
  /** A payout batch's items it pays (not those an earlier batch holds); each item's outcome: GET /payouts/:id. */
  items?: HistoryPayoutItem[];
  /** Set for a transfer that needed a second admin key's approval (APPROVAL_ABOVE). */
  approval?: HistoryApproval;
}

/** A transfer's approval as the history shows it: until when it waits, and who decided it (or "expiry"), when. */
export interface HistoryApproval {
  expiresAt: string;
  decidedBy: string | null;
  decidedAt: string | null;
}

/** An item a payout batch pays, as the history lists it. */
export interface HistoryPayoutItem {
  id: string;
  toAddress: string;
  amount: string;
  amountInTokens: string | null;
}

/** The journal states of the history states asked for. */
export function journalStatesOf(states: readonly HistoryState[]): JournalState[] {
  return states.flatMap((state) => JOURNAL_STATES[state]);
}

/** The token a row moves, and the network it is on. */
export interface HistoryToken {
  /** The contract's address, or "native". */
  address: string;
  /** NETWORKS_FILE's symbol; its address for a token the deployment does not name (or without the file). */
  symbol: string;
  /** Null for a token the service does not pay in (or a network not reached yet): its decimals are not read. */
  decimals: number | null;
  network: ServedNetwork;
}

/** A network the history names rows of: how it is named, and its tokens' decimals (null while it has not been reached). */
export interface HistoryNetwork {
  network: ServedNetwork;
  tokens: readonly { address: string; decimals: number }[] | null;
}

/** The token and network of a row: a configured network's, or for a network no longer configured, named by its chain id and the token by its address. */
export function historyTokenOf(networks: readonly HistoryNetwork[], entry: JournalEntry): HistoryToken {
  const configured = networks.find(({ network }) => network.chainId === BigInt(entry.chainId));
  const served = configured && tokenAt(configured.network.tokens, entry.token);
  if (configured && served) {
    const decimals = configured.tokens?.find((token) => token.address === served.address)?.decimals ?? null;
    return { address: served.address, symbol: served.symbol, decimals, network: configured.network };
  }
  const network = configured?.network ?? servedNetworkOf(undefined, { chainId: BigInt(entry.chainId), tokenAddress: entry.token });
  return { address: entry.token, symbol: entry.token, decimals: null, network };
}

/** The history item of a journal entry. */
export function historyItem(entry: JournalEntry, token: HistoryToken): HistoryItem {
  const minedAt = minedAttemptIndex(entry);
  const amount = entry.units.toString();
  return {
    id: entry.id,
    hash: entry.hash,
    state: historyStateOf(entry.state),
    kind: kindOf(entry),
    network: token.network.name,
    chainId: Number(token.network.chainId),
    transfer: { token: token.address, tokenSymbol: token.symbol, from: entry.lane, to: entry.recipient, amount, amountInTokens: token.decimals === null ? null : formatTokenAmount(entry.units, token.decimals), requestedAmount: amount },
    carriedBy: minedAt >= 0 ? entry.attempts[minedAt].hash : (entry.attempts.at(-1)?.hash ?? null),
    nonce: entry.nonce,
    idempotencyKey: clientKeyOf(entry),
    apiKeyId: entry.apiKeyId ?? null,
    refusal: entry.refusal,
    attempts: describeAttempts(entry, minedAt),
    finalized: entry.finalBlock !== null,
    finalizedBlock: entry.finalBlock,
    createdAt: new Date(entry.createdAt).toISOString(),
    ...(entry.payout && {
      items: entry.payout.items
        .filter((item) => item.duplicateOf === undefined)
        .map((item) => ({ id: item.id, toAddress: item.recipient, amount: item.units.toString(), amountInTokens: token.decimals === null ? null : formatTokenAmount(item.units, token.decimals) })),
    }),
    ...(entry.approval && {
      approval: {
        expiresAt: new Date(entry.approval.expiresAt).toISOString(),
        decidedBy: entry.approval.decidedBy,
        decidedAt: entry.approval.decidedAt === null ? null : new Date(entry.approval.decidedAt).toISOString(),
      },
    }),
  };
}

/** The CSV columns, in order: the JSON item's fields, flattened. */
export const HISTORY_CSV_COLUMNS = [
  "id",
  "createdAt",
  "state",
  "kind",
  "hash",
  "carriedBy",
  "from",
  "to",
  "amount",
  "amountInTokens",
  "token",
  "nonce",
  "idempotencyKey",
  "apiKeyId",
  "refusalCode",
  "attempts",
  "finalized",
  "finalizedBlock",
  // Added after the others, so that a reader that takes columns by position reads the old ones as before.
  "network",
  "chainId",
  "tokenSymbol",
  "payoutItemId",
] as const;

/**
 * The CSV lines of an item: its own, and for a payout batch one more per item it pays (kind `payout-item`,
 * the item's recipient, amount and id, the batch's other fields), so that every payment is a row.
 */
export function historyCsvLines(item: HistoryItem): string {
  const itemLines = (item.items ?? []).map((payoutItem) =>
    historyCsvLine({ ...item, kind: "payout-item", transfer: { ...item.transfer, to: payoutItem.toAddress, amount: payoutItem.amount, amountInTokens: payoutItem.amountInTokens } }, payoutItem.id),
  );
  return historyCsvLine(item) + itemLines.join("");
}

/** One CSV line (RFC 4180, CRLF) of an item; `attempts` lists the attempts' hashes, space-separated. */
function historyCsvLine(item: Omit<HistoryItem, "kind"> & { kind: HistoryItem["kind"] | "payout-item" }, payoutItemId: string | null = null): string {
  const fields: Record<(typeof HISTORY_CSV_COLUMNS)[number], string | number | boolean | null> = {
    id: item.id,
    createdAt: item.createdAt,
    state: item.state,
    kind: item.kind,
    hash: item.hash,
    carriedBy: item.carriedBy,
    from: item.transfer.from,
    to: item.transfer.to,
    amount: item.transfer.amount,
    amountInTokens: item.transfer.amountInTokens,
    token: item.transfer.token,
    nonce: item.nonce,
    idempotencyKey: item.idempotencyKey,
    apiKeyId: item.apiKeyId,
    refusalCode: item.refusal?.code ?? null,
    attempts: item.attempts.map((attempt) => attempt.hash).join(" "),
    finalized: item.finalized,
    finalizedBlock: item.finalizedBlock,
    network: item.network,
    chainId: item.chainId,
    tokenSymbol: item.transfer.tokenSymbol,
    payoutItemId,
  };
  return `${HISTORY_CSV_COLUMNS.map((column) => csvField(fields[column])).join(",")}\r\n`;
}

/**
 * Rows read from the journal per step of a CSV export: memory stays bounded whatever the total, and each
 * step holds the event loop a few milliseconds (1,000 rows held it up to 156 ms: decoding each attempt's fees).
 */
const CSV_PAGE_ROWS = 200;

/**
 * The CSV export: a header, then every item matching `filter` below `beforeId` (at most `limit` when
 * given), read a page at a time and yielded line by line, with a turn of the event loop between pages.
 */
export async function* historyCsv(
  journal: Pick<TransferJournal, "history">,
  filter: HistoryFilter,
  beforeId: number | undefined,
  limit: number | undefined,
  networks: readonly HistoryNetwork[],
): AsyncGenerator<string> {
  yield `${HISTORY_CSV_COLUMNS.join(",")}\r\n`;
  let left = limit ?? Number.POSITIVE_INFINITY;
  let below = beforeId;
  while (left > 0) {
    const { entries, nextBefore } = await journal.history(filter, below, Math.min(CSV_PAGE_ROWS, left));
    if (entries.length > 0) yield entries.map((entry) => historyCsvLines(historyItem(entry, historyTokenOf(networks, entry)))).join("");
    if (nextBefore === undefined) return;
    left -= entries.length;
    below = nextBefore;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// The Idempotency-Key as its client sent it: the journal keeps it under the API key's id.
function clientKeyOf({ idempotencyKey, apiKeyId }: JournalEntry): string | null {
  const scope = `${apiKeyId}/`;
  return idempotencyKey !== null && apiKeyId !== undefined && idempotencyKey.startsWith(scope) ? idempotencyKey.slice(scope.length) : idempotencyKey;
}

function historyStateOf(state: JournalState): HistoryState {
  return (Object.keys(JOURNAL_STATES) as HistoryState[]).find((historyState) => JOURNAL_STATES[historyState].includes(state)) as HistoryState;
}

function kindOf(entry: JournalEntry): HistoryKind {
  const first = entry.attempts[0]?.kind;
  if (first === "top-up") return "gas-top-up";
  if (first === "approval") return "payout-approval";
  if (entry.payout) return "payout";
  // A nonce filler is journaled as a cancel of 0 units from the wallet to itself.
  if (first === "cancel" && entry.units === 0n && entry.recipient === entry.lane) return "nonce-filler";
  return "transfer";
}

// Which attempt the journal knows was mined: the one recorded, or the only one once its nonce is used.
function minedAttemptIndex(entry: JournalEntry): number {
  if (entry.minedHash) return entry.attempts.findIndex((attempt) => attempt.hash === entry.minedHash);
  return (entry.state === "nonce-used" || entry.state === "cancelled") && entry.attempts.length === 1 ? 0 : -1;
}
