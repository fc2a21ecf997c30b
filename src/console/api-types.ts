/** The shapes of the service's answers that the console reads (a subset of each; docs/api.md has them whole). */

export interface Attempt {
  hash: string;
  kind: string;
  signedAtBlock: number;
  maxFeePerGas: string | null;
  gasPrice: string | null;
  fate: string;
}

/** A transfer of GET /transfers. */
export interface HistoryItem {
  id: number;
  hash: string | null;
  state: string;
  kind: string;
  transfer: { from: string; to: string; amount: string; amountInTokens: string | null; tokenSymbol: string };
  carriedBy: string | null;
  nonce: number | null;
  idempotencyKey: string | null;
  refusal: { code: string; message: string } | null;
  attempts: Attempt[];
  createdAt: string;
  apiKeyId: string | null;
  /** A payout batch's items it pays: each recipient and amount (base units, and in tokens when the decimals are known). */
  items?: { id: string; toAddress: string; amount: string; amountInTokens: string | null }[];
  /** Set for a transfer above APPROVAL_ABOVE: until when it waits for a second admin key. */
  approval?: { expiresAt: string; decidedBy: string | null; decidedAt: string | null };
}

/** A list of GET /transfers. */
export interface TransferList {
  transfers: HistoryItem[];
}

/** GET /transactions/:hash. */
export interface TransferStatus {
  network: string;
  state: string;
  confirmations: number;
  carriedBy?: string;
  attempts?: Attempt[];
  payoutId?: number;
  transfer: { to: string; amountInTokens: string | null; tokenSymbol: string | null } | null;
}

/** An item of GET /payouts/:id. */
export interface PayoutItem {
  id: string;
  toAddress: string;
  amount: string;
  state: string;
  reason: string | null;
  duplicateOf: number | null;
}

/** GET /payouts/:id. */
export interface Payout {
  token: string;
  items: PayoutItem[];
}

/** An entry of GET /address-book. */
export interface AddressBookEntry {
  address: string;
  label: string | null;
  addedBy: string;
  effectiveAt: string;
  effective: boolean;
}

/** GET /address-book. */
export interface AddressBook {
  enforced: boolean;
  coolingOffHours: number;
  entries: AddressBookEntry[];
}

/** A token balance of GET /wallet. */
export interface Balance {
  symbol: string;
  address: string;
  decimals: number;
  balanceInTokens: string;
}

export interface Lane {
  address: string;
  ethBalance: string;
  tokenBalanceInTokens: string;
  balances?: Balance[];
  transfersInFlight: number;
  gasRunwayHours: number | null;
  state: string;
  heldBecause: string | null;
}

/** GET /wallet. */
export interface Wallet extends Omit<Lane, "state" | "heldBecause"> {
  network: string;
  token: { address: string };
  lanes?: Lane[];
  /** Several networks: each one's wallet, the default (the document's own) first. */
  networks?: Wallet[];
  jammed: boolean;
  stuckAtFeeCap: { hash: string }[];
  /** Set while the service signs nothing (PAUSE_ON_UNEXPECTED_OUTFLOW). */
  signingPaused?: { since: string; reason: string; hash: string | null; latestHash: string | null; outflows: number } | null;
  /** Transactions and token transfers out of the wallets that the service never made, newest first. */
  unexpectedOutflows: Outflow[];
}

/** An unexpected outflow of GET /wallet. */
export interface Outflow {
  wallet: string;
  hash: string;
  nonce: number | null;
  token: string | null;
  to: string | null;
  amount: string | null;
  code: string | null;
  otherToken: boolean;
  detectedAt: string;
}

/** A delivery of GET /webhooks/deliveries. */
export interface Delivery {
  id: number;
  type: string;
  endpoint: string;
  state: string;
  attempts: number;
  lastStatus: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

/** An entry of GET /audit. */
export interface AuditEntry {
  seq: number;
  at: string;
  kind: string;
  transferId: number | null;
  actor: string | null;
  detail: Record<string, unknown>;
}

/** A page of GET /audit?order=newest. */
export interface AuditPage {
  entries: AuditEntry[];
  nextBefore: string | null;
}

/** One hour of GET /transfers/activity. */
export interface ActivityHour {
  start: string;
  sent: number;
  mined: number;
  failed: number;
  gasSpentWei: string | null;
}

/** A network of GET /networks. */
export interface ServedNetwork {
  name: string;
  chainId: number;
  running: boolean;
  tokens: { symbol: string; address: string; displaySymbol: string | null }[];
}
